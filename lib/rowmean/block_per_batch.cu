// The second rung: the single block's work with one block per batch, so every SM takes batches; each thread still
// reads its own row alone (tree_batch.cuh).
#include "core/launch.cuh"
#include "rowmean/tree_batch.cuh"
#include "rowmean/variant.hpp"

namespace fastgemm::detail {
namespace {

template <typename T>
__global__ void block_per_batch_kernel(const T *input, const T *matrix, T *output, int L, int64_t M, int64_t N,
                                       int width) {
  __shared__ double partial[kTreeMaxRows];
  tree_clear_padding(partial, L, width);
  for (int64_t k = blockIdx.x; k < N; k += gridDim.x)
    tree_reduce_batch(input, matrix, output, L, M, N, k, partial, width);
}

Status can_implement_block_per_batch(const RowmeanProblem &p, const DeviceInfo &) { return tree_rows_supported(p.L); }

template <typename T>
Status run_typed(const RowmeanProblem &p, Context &context) {
  const int L = static_cast<int>(p.L);
  return launch(block_per_batch_kernel<T>, dim3(capped_grid(p.N, INT32_MAX)), dim3(L), 0, context.stream(),
                static_cast<const T *>(p.input), static_cast<const T *>(p.matrix), static_cast<T *>(p.output), L, p.M,
                p.N, tree_width(p.L));
}

Status run_block_per_batch(const RowmeanProblem &p, Context &context) {
  return p.dtype == FG_F64 ? run_typed<double>(p, context) : run_typed<float>(p, context);
}

}  // namespace

const RowmeanVariant block_per_batch_rowmean = {FG_ROWMEAN_BLOCK_PER_BATCH, "block_per_batch",
                                                can_implement_block_per_batch, run_block_per_batch};

}  // namespace fastgemm::detail
