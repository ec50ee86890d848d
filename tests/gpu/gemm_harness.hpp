// Runs one SGEMM case through every algorithm the build carries (and AUTO) and checks each result against
// the double-precision reference: products by relative error, everything outside them bit for bit.
#pragma once

#include <cstdint>
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

// Relative error allowed for an FP32 product of depth k against a double reference.
double gemm_tolerance(int64_t k);

// Checks `gc` with each algorithm in `algos`. An algorithm other than AUTO, naive and cuBLAS may refuse with
// FG_STATUS_NOT_SUPPORTED, and must then leave C untouched and say why.
void check_gemm_case(fg_handle_t handle, const std::vector<fg_sgemm_algo_t> &algos, const GemmCase &gc,
                     uint64_t seed);

}  // namespace fgtest
