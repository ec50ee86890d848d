// SPDX-License-Identifier: Apache-2.0
#include "core/dtype.hpp"
#include "core/launch.cuh"
#include "rowmean/tree_batch.cuh"

namespace fastgemm::detail {
namespace {

// The smallest power of two >= L: the width of the tree.
int tree_width(int64_t L) {
  int width = 1;
  while (width < L) width *= 2;
  return width;
}

// partial[L .. width) must hold zeros (tree_clear_padding) before the first call; the calls never write there.
__device__ __forceinline__ void tree_clear_padding(double *partial, int L, int width) {
  for (int index = L + static_cast<int>(threadIdx.x); index < width; index += L) partial[index] = 0.0;
  __syncthreads();
}

// Batch k: blockDim.x == L threads, partial has `width` entries. Every thread of the block must call it.
template <typename T>
__device__ void tree_reduce_batch(const T *input, const T *matrix, T *output, int L, int64_t M, int64_t N, int64_t k,
                                  double *partial, int width) {
  const int j = static_cast<int>(threadIdx.x);
  const T *row = input + (k * L + j) * M;
  // One thread walks a whole row, up to millions of values: a plain running sum would gather about sqrt(M) roundings
  // of the growing total, so the rounding of each addition is carried into the next (Kahan).
  double sum = 0.0, carried = 0.0;
  for (int64_t m = 0; m < M; ++m) {
    const double addend = static_cast<double>(row[m]) - carried;
    const double next = sum + addend;
    // Past an infinity the carry would be inf - inf: the sum stays what IEEE addition makes it, with no carry.
    carried = isfinite(next) ? (next - sum) - addend : 0.0;
    sum = next;
  }
  const double mean = sum / static_cast<double>(M);
  for (int i = 0; i < L; ++i) {
    partial[j] = static_cast<double>(matrix[static_cast<int64_t>(i) * L + j]) * mean;
    __syncthreads();
    // width / 2 < L, so every thread the tree reads from exists; entries past L are the zeros of the padding.
    for (int stride = width / 2; stride > 0; stride /= 2) {
      if (j < stride) partial[j] += partial[j + stride];
      __syncthreads();
    }
    // Only thread 0 reads partial[0] here, and the tree's last barrier has ordered every other read before the
    // next row's products overwrite partial[1 ..], so no barrier is needed before them.
    if (j == 0) output[static_cast<int64_t>(i) * N + k] = static_cast<T>(partial[0]);
  }
}

template <typename T>
__global__ void tree_batches_kernel(const T *input, const T *matrix, T *output, int L, int64_t M, int64_t N,
                                    int width) {
  __shared__ double partial[kBlockMaxRows];
  tree_clear_padding(partial, L, width);
  for (int64_t k = blockIdx.x; k < N; k += gridDim.x)
    tree_reduce_batch(input, matrix, output, L, M, N, k, partial, width);
}

template <typename T>
Status run_typed(const RowmeanProblem &p, const RunArgs &args, int64_t blocks) {
  const int L = static_cast<int>(p.L);
  return launch(tree_batches_kernel<T>, dim3(capped_grid(blocks, INT32_MAX)), dim3(L), 0, args.stream,
                static_cast<const T *>(p.input), static_cast<const T *>(p.matrix), static_cast<T *>(p.output), L, p.M,
                p.N, tree_width(p.L));
}

}  // namespace

Status run_tree_batches(const RowmeanProblem &p, const RunArgs &args, int64_t blocks) {
  return dispatch_dtype(p.dtype, [&](auto zero) { return run_typed<decltype(zero)>(p, args, blocks); });
}

}  // namespace fastgemm::detail
