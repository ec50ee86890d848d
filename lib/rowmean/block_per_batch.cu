// SPDX-License-Identifier: Apache-2.0
// The second rung: the single block's work with one block per batch, so every SM takes batches; each thread still
// reads its own row alone (tree_batch.cuh).
#include "rowmean/tree_batch.cuh"
#include "rowmean/variant.hpp"

namespace fastgemm::detail {
namespace {

Status run_block_per_batch(const RowmeanProblem &p, const RunArgs &args) { return run_tree_batches(p, args, p.N); }

}  // namespace

extern const RowmeanVariant block_per_batch_rowmean = {FG_ROWMEAN_BLOCK_PER_BATCH, "block_per_batch",
                                                       block_rows_supported, no_workspace<RowmeanProblem>,
                                                       run_block_per_batch};

}  // namespace fastgemm::detail
