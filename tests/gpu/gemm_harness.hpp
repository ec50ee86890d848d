// SPDX-License-Identifier: Apache-2.0
// Runs one SGEMM case through every algorithm the build carries (and AUTO) and checks each result against
// the double-precision reference: products by relative error, everything outside them bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fastgemm/fastgemm.h"
#include "support/test_support.hpp"

namespace fgtest {

class Handle {
 public:
  Handle();
  ~Handle();
  Handle(const Handle &) = delete;
  Handle &operator=(const Handle &) = delete;
  fg_handle_t get() const { return handle_; }

 private:
  fg_handle_t handle_ = nullptr;
};

// AUTO first, then every carried algorithm.
std::vector<fg_sgemm_algo_t> algos_under_test(fg_handle_t handle);

// "" where the algorithm must run the case on the current device; otherwise a part of the reason its refusal must
// give. Written from the contract: the 128-bit-load rungs need 16-byte aligned operands whose leading dimensions (and
// strides, for batches) are whole 16-byte units; the cp.async kernels need compute capability 8.0; everything else,
// and every case with nothing to multiply, runs.
std::string expected_sgemm_refusal(fg_sgemm_algo_t algo, const GemmCase &resolved, const float *a, const float *b,
                                   const float *c);

// Relative error allowed for an FP32 product of depth k against a double reference.
double gemm_tolerance(int64_t k);

// Checks `gc` with each algorithm in `algos`. Each algorithm must run the cases its support matrix says it runs
// (expected_sgemm_refusal), and refuse the others with FG_STATUS_NOT_SUPPORTED, leaving C untouched and giving the
// reason.
void check_gemm_case(fg_handle_t handle, const std::vector<fg_sgemm_algo_t> &algos, const GemmCase &gc, uint64_t seed);

}  // namespace fgtest
