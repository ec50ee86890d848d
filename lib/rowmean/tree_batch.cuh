// SPDX-License-Identifier: Apache-2.0
// The classic one-thread-per-row step shared by FG_ROWMEAN_SINGLE_BLOCK and FG_ROWMEAN_BLOCK_PER_BATCH: thread j of
// a block of L threads sums row j of a batch on its own, then every output row is one shared-memory tree reduction
// of matrix[i][j] * mean[j] over the block. Sums are doubles, so f32 results keep their precision.
#pragma once

#include <cstdint>

#include "core/problem.hpp"
#include "core/status.hpp"
#include "core/variant.hpp"
#include "rowmean/block_rows.hpp"

namespace fastgemm::detail {

// Runs the step over every batch with `blocks` blocks of L threads, block b taking batches b, b + blocks, ...:
// one block walks them all when `blocks` is 1. Needs L <= kBlockMaxRows.
Status run_tree_batches(const RowmeanProblem &problem, const RunArgs &args, int64_t blocks);

}  // namespace fastgemm::detail
