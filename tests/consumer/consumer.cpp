// SPDX-License-Identifier: Apache-2.0
// A C++ program linked against an installed fastgemm: without a GPU it checks that fastgemm says so; with
// one it runs a small rowmean_matvec and compares it with the CPU's.
#include <cmath>
#include <cstdio>
#include <vector>

#include <cuda_runtime_api.h>
#include <fastgemm/fastgemm.h>

int main() {
  fg_handle_t handle = nullptr;
  fg_status_t status = fg_create(&handle);
  if (status == FG_STATUS_NO_DEVICE) {
    std::printf("consumer.cpp: no device, as fastgemm reports: %s\n", fg_last_error_message());
    return fg_last_error_message()[0] != '\0' ? 0 : 1;
  }
  if (status != FG_STATUS_SUCCESS) return 1;
  const int L = 20, M = 9, N = 3;
  std::vector<double> input(N * L * M), matrix(L * L), output(L * N);
  for (size_t i = 0; i < input.size(); ++i) input[i] = std::sin(0.37 * i);
  for (size_t i = 0; i < matrix.size(); ++i) matrix[i] = std::cos(0.11 * i);
  void *d_input = nullptr, *d_matrix = nullptr, *d_output = nullptr;
  if (cudaMalloc(&d_input, input.size() * 8) || cudaMalloc(&d_matrix, matrix.size() * 8) ||
      cudaMalloc(&d_output, output.size() * 8) ||
      cudaMemcpy(d_input, input.data(), input.size() * 8, cudaMemcpyHostToDevice) ||
      cudaMemcpy(d_matrix, matrix.data(), matrix.size() * 8, cudaMemcpyHostToDevice))
    return 1;
  status = fg_rowmean_matvec(handle, FG_F64, d_input, d_matrix, d_output, L, M, N);
  if (status != FG_STATUS_SUCCESS || cudaMemcpy(output.data(), d_output, output.size() * 8, cudaMemcpyDeviceToHost)) {
    std::fprintf(stderr, "fg_rowmean_matvec: %s: %s\n", fg_status_name(status), fg_last_error_message());
    return 1;
  }
  double worst = 0.0;
  for (int i = 0; i < L; ++i)
    for (int k = 0; k < N; ++k) {
      double expected = 0.0;
      for (int j = 0; j < L; ++j) {
        double sum = 0.0;
        for (int m = 0; m < M; ++m) sum += input[(k * L + j) * M + m];
        expected += matrix[i * L + j] * sum / M;
      }
      worst = std::fmax(worst, std::fabs(expected - output[i * N + k]) / (std::fabs(expected) + 1.0));
    }
  cudaFree(d_input);
  cudaFree(d_matrix);
  cudaFree(d_output);
  fg_destroy(handle);
  std::printf("consumer.cpp: fg_rowmean_matvec %dx%dx%d, worst relative error %.2e\n", L, M, N, worst);
  return worst < 1e-12 ? 0 : 1;
}
