// SPDX-License-Identifier: Apache-2.0
// What the probe tests (test_probes_*.cpp) share: an f64 rowmean problem with its reference, the algorithms
// to run it with, a capture of one call into a graph, and the check that no fault is pending on the device.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <cuda_runtime_api.h>

#include "gpu/gemm_harness.hpp"

namespace fgtest {

// AUTO first, then every rowmean algorithm the build carries.
std::vector<fg_rowmean_algo_t> rowmean_algos(fg_handle_t handle);

// An f64 rowmean problem in device memory with its extended-precision reference.
struct RowmeanData {
  int64_t L, M, N;
  std::vector<double> input, matrix;
  std::vector<long double> reference;
  DeviceMemory d_input, d_matrix, d_output;

  RowmeanData(int64_t L_, int64_t M_, int64_t N_, uint64_t seed);
  fg_status_t run(fg_handle_t handle) const;
  // Fills the output with NaN on the stream.
  void poison(cudaStream_t stream) const;
  // Synchronizes the stream, then gives the output's error against the reference.
  double error(cudaStream_t stream) const;
};

// An executable graph of what `call` enqueues on `stream`, captured in global mode; REQUIREs that the call
// succeeded (with the library's message). The caller destroys it with cudaGraphExecDestroy.
cudaGraphExec_t capture_call(cudaStream_t stream, const std::function<fg_status_t()> &call);

// The device has finished its work without an error, and none is pending.
void require_no_pending_fault();

}  // namespace fgtest
