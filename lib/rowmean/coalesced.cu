// SPDX-License-Identifier: Apache-2.0
// The third rung: one block per batch as before, but a warp reads a row together, consecutive lanes on consecutive
// elements, so that each warp load is one contiguous stretch of memory instead of 32 scattered ones; the row sums and
// the dot products with the matrix rows (read the same way) are reduced with warp shuffles. The batch's means live in
// shared memory, which bounds L.
#include "core/dtype.hpp"
#include "core/launch.cuh"
#include "cuda/warp_reduce.cuh"
#include "rowmean/block_rows.hpp"
#include "rowmean/variant.hpp"

namespace fastgemm::detail {
namespace {

constexpr int kWarpsPerBlock = 8;

template <typename T>
__global__ void coalesced_kernel(const T *input, const T *matrix, T *output, int L, int64_t M, int64_t N) {
  __shared__ double means[kBlockMaxRows];
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  for (int64_t k = blockIdx.x; k < N; k += gridDim.x) {
    for (int j = warp; j < L; j += kWarpsPerBlock) {
      const T *row = input + (k * L + j) * M;
      double sum = 0.0;
      for (int64_t m = lane; m < M; m += 32) sum += static_cast<double>(row[m]);
      sum = warp_sum(sum);
      if (lane == 0) means[j] = sum / static_cast<double>(M);
    }
    __syncthreads();
    for (int i = warp; i < L; i += kWarpsPerBlock) {
      const T *matrix_row = matrix + static_cast<int64_t>(i) * L;
      double dot = 0.0;
      for (int j = lane; j < L; j += 32) dot += static_cast<double>(matrix_row[j]) * means[j];
      dot = warp_sum(dot);
      if (lane == 0) output[static_cast<int64_t>(i) * N + k] = static_cast<T>(dot);
    }
    // The next batch overwrites the means this one's products are still reading.
    __syncthreads();
  }
}

template <typename T>
Status run_typed(const RowmeanProblem &p, Context &context) {
  return launch(coalesced_kernel<T>, dim3(capped_grid(p.N, INT32_MAX)), dim3(kWarpsPerBlock * 32), 0, context.stream(),
                static_cast<const T *>(p.input), static_cast<const T *>(p.matrix), static_cast<T *>(p.output),
                static_cast<int>(p.L), p.M, p.N);
}

Status run_coalesced(const RowmeanProblem &p, Context &context) {
  return dispatch_dtype(p.dtype, [&](auto zero) { return run_typed<decltype(zero)>(p, context); });
}

}  // namespace

extern const RowmeanVariant coalesced_rowmean = {FG_ROWMEAN_COALESCED, "coalesced", block_rows_supported,
                                                 no_workspace<RowmeanProblem>, run_coalesced};

}  // namespace fastgemm::detail
