// SPDX-License-Identifier: Apache-2.0
// The first rung of the ladder: one block of L threads walks all N batches (tree_batch.cuh), so one SM does all the
// work and each thread reads its row on its own, far from its neighbours' rows.
#include "rowmean/tree_batch.cuh"
#include "rowmean/variant.hpp"

namespace fastgemm::detail {
namespace {

Status run_single_block(const RowmeanProblem &p, const RunArgs &args) { return run_tree_batches(p, args, 1); }

}  // namespace

extern const RowmeanVariant single_block_rowmean = {FG_ROWMEAN_SINGLE_BLOCK, "single_block", block_rows_supported,
                                                    no_workspace<RowmeanProblem>, run_single_block};

}  // namespace fastgemm::detail
