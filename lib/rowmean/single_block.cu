// The first rung of the ladder: one block of L threads walks all N batches (tree_batch.cuh), so one SM does all the
// work and each thread reads its row on its own, far from its neighbours' rows.
#include "core/launch.cuh"
#include "rowmean/tree_batch.cuh"
#include "rowmean/variant.hpp"

namespace fastgemm::detail {
namespace {

template <typename T>
__global__ void single_block_kernel(const T *input, const T *matrix, T *output, int L, int64_t M, int64_t N,
                                    int width) {
  __shared__ double partial[kTreeMaxRows];
  tree_clear_padding(partial, L, width);
  for (int64_t k = 0; k < N; ++k) tree_reduce_batch(input, matrix, output, L, M, N, k, partial, width);
}

Status can_implement_single_block(const RowmeanProblem &p, const DeviceInfo &) { return tree_rows_supported(p.L); }

template <typename T>
Status run_typed(const RowmeanProblem &p, Context &context) {
  const int L = static_cast<int>(p.L);
  return launch(single_block_kernel<T>, dim3(1), dim3(L), 0, context.stream(), static_cast<const T *>(p.input),
                static_cast<const T *>(p.matrix), static_cast<T *>(p.output), L, p.M, p.N, tree_width(p.L));
}

Status run_single_block(const RowmeanProblem &p, Context &context) {
  return p.dtype == FG_F64 ? run_typed<double>(p, context) : run_typed<float>(p, context);
}

}  // namespace

const RowmeanVariant single_block_rowmean = {FG_ROWMEAN_SINGLE_BLOCK, "single_block", can_implement_single_block,
                                             run_single_block};

}  // namespace fastgemm::detail
