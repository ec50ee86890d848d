// SPDX-License-Identifier: Apache-2.0
#include "gpu/probe_support.hpp"

#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

namespace fgtest {

std::vector<fg_rowmean_algo_t> rowmean_algos(fg_handle_t handle) {
  std::vector<fg_rowmean_algo_t> algos{FG_ROWMEAN_AUTO};
  for (fg_rowmean_algo_t algo : carried_rowmean_algos(handle)) algos.push_back(algo);
  return algos;
}

RowmeanData::RowmeanData(int64_t L_, int64_t M_, int64_t N_, uint64_t seed)
    : L(L_),
      M(M_),
      N(N_),
      input(N_ * L_ * M_),
      matrix(L_ * L_),
      d_input(N_ * L_ * M_ * sizeof(double)),
      d_matrix(L_ * L_ * sizeof(double)),
      d_output(L_ * N_ * sizeof(double)) {
  fill_uniform(input, seed);
  fill_uniform(matrix, seed + 1);
  upload(d_input, input);
  upload(d_matrix, matrix);
  reference = reference_rowmean(input, matrix, L, M, N);
}

cudaGraphExec_t capture_call(cudaStream_t stream, const std::function<fg_status_t()> &call) {
  REQUIRE_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const fg_status_t captured = call();
  cudaGraph_t graph = nullptr;
  REQUIRE_CUDA_OK(cudaStreamEndCapture(stream, &graph));
  INFO(fg_last_error_message());
  REQUIRE(captured == FG_STATUS_SUCCESS);
  cudaGraphExec_t exec = nullptr;
  REQUIRE_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  REQUIRE_CUDA_OK(cudaGraphDestroy(graph));
  return exec;
}

fg_status_t RowmeanData::run(fg_handle_t handle) const {
  return fg_rowmean_matvec(handle, FG_F64, d_input.get(), d_matrix.get(), d_output.get(), L, M, N);
}

void RowmeanData::poison(cudaStream_t stream) const {
  REQUIRE_CUDA_OK(cudaMemsetAsync(d_output.get(), 0xff, L * N * sizeof(double), stream));  // NaN
}

double RowmeanData::error(cudaStream_t stream) const {
  REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
  return relative_error(download<double>(d_output, L * N), reference);
}

void require_no_pending_fault() {
  REQUIRE_CUDA_OK(cudaDeviceSynchronize());
  REQUIRE_CUDA_OK(cudaGetLastError());
}

}  // namespace fgtest
