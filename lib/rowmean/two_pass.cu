// SPDX-License-Identifier: Apache-2.0
// The general algorithm with no limit on L: the row means go to a workspace (means.cu), then a tiled
// kernel computes output (L x N) = matrix (L x L) * means^T, both passes summing in double.
#include "core/dtype.hpp"
#include "core/launch.cuh"
#include "rowmean/means.cuh"
#include "rowmean/variant.hpp"

namespace fastgemm::detail {
namespace {

constexpr int kTile = 16;

// One block computes a kTile x kTile tile of output: rows i of the matrix against batches k of the means.
template <typename T>
__global__ void matrix_times_means_kernel(const T *matrix, const T *means, T *output, int64_t L, int64_t N) {
  __shared__ T matrix_tile[kTile][kTile + 1];
  __shared__ T means_tile[kTile][kTile + 1];
  const int64_t i0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int64_t k0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y;
  double sum = 0.0;
  for (int64_t j0 = 0; j0 < L; j0 += kTile) {
    const int64_t j = j0 + tx;
    matrix_tile[ty][tx] = (i0 + ty < L && j < L) ? matrix[(i0 + ty) * L + j] : T(0);
    means_tile[ty][tx] = (k0 + ty < N && j < L) ? means[(k0 + ty) * L + j] : T(0);
    __syncthreads();
    for (int jj = 0; jj < kTile; ++jj)
      sum += static_cast<double>(matrix_tile[ty][jj]) * static_cast<double>(means_tile[tx][jj]);
    __syncthreads();
  }
  const int64_t i = i0 + ty, k = k0 + tx;
  if (i < L && k < N) output[i * N + k] = static_cast<T>(sum);
}

// The means, one per row of the input.
size_t two_pass_workspace_bytes(const RowmeanProblem &p, const DeviceInfo &) {
  return static_cast<size_t>(p.N * p.L * element_size(p.dtype));
}

template <typename T>
Status run_typed(const RowmeanProblem &p, const RunArgs &args) {
  T *means = static_cast<T *>(args.workspace);
  FG_RETURN_IF_ERROR(row_means(static_cast<const T *>(p.input), means, p.N * p.L, p.M, args.stream));
  const dim3 grid(capped_grid(ceil_div(p.N, kTile), INT32_MAX), capped_grid(ceil_div(p.L, kTile)));
  return launch(matrix_times_means_kernel<T>, grid, dim3(kTile, kTile), 0, args.stream,
                static_cast<const T *>(p.matrix), static_cast<const T *>(means), static_cast<T *>(p.output), p.L, p.N);
}

Status run_two_pass(const RowmeanProblem &p, const RunArgs &args) {
  return dispatch_dtype(p.dtype, [&](auto zero) { return run_typed<decltype(zero)>(p, args); });
}

}  // namespace

extern const RowmeanVariant two_pass_rowmean = {FG_ROWMEAN_TWO_PASS, "two_pass", accepts_any_problem<RowmeanProblem>,
                                                two_pass_workspace_bytes, run_two_pass};

}  // namespace fastgemm::detail
