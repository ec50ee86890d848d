// SPDX-License-Identifier: Apache-2.0
#include "core/launch.cuh"
#include "cuda/warp_reduce.cuh"
#include "rowmean/means.cuh"

namespace fastgemm::detail {
namespace {

constexpr int kWarpsPerBlock = 8;

template <typename T>
__global__ void row_means_kernel(const T *input, T *means, int64_t rows, int64_t M) {
  const int lane = threadIdx.x % 32;
  const int64_t first_row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int64_t row_step = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = first_row; row < rows; row += row_step) {
    const T *values = input + row * M;
    double sum = 0.0;
    for (int64_t i = lane; i < M; i += 32) sum += static_cast<double>(values[i]);
    sum = warp_sum(sum);
    if (lane == 0) means[row] = static_cast<T>(sum / static_cast<double>(M));
  }
}

}  // namespace

template <typename T>
Status row_means(const T *input, T *means, int64_t rows, int64_t M, cudaStream_t stream) {
  const dim3 grid(capped_grid(ceil_div(rows, kWarpsPerBlock), INT32_MAX));
  return launch(row_means_kernel<T>, grid, dim3(kWarpsPerBlock * 32), 0, stream, input, means, rows, M);
}

template Status row_means<float>(const float *, float *, int64_t, int64_t, cudaStream_t);
template Status row_means<double>(const double *, double *, int64_t, int64_t, cudaStream_t);

}  // namespace fastgemm::detail
