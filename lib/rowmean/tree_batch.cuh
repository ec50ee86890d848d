// The classic one-thread-per-row step shared by FG_ROWMEAN_SINGLE_BLOCK and FG_ROWMEAN_BLOCK_PER_BATCH: thread j of
// a block of L threads sums row j of a batch on its own, then every output row is one shared-memory tree reduction
// of matrix[i][j] * mean[j] over the block. Sums are doubles, so f32 results keep their precision.
#pragma once

#include <cstdint>
#include <string>

#include "core/context.hpp"
#include "core/device.hpp"
#include "core/problem.hpp"
#include "core/status.hpp"

namespace fastgemm::detail {

// One thread per row in one block: the block-size limit is the limit on L.
constexpr int kTreeMaxRows = 1024;

// can_implement of both variants.
inline Status tree_rows_supported(const RowmeanProblem &p, const DeviceInfo &) {
  if (p.L <= kTreeMaxRows) return Status::success();
  return Status::failure(StatusCode::not_supported, "L = " + std::to_string(p.L) + " must be <= " +
                                                        std::to_string(kTreeMaxRows) +
                                                        " (one thread per row in one block)");
}

// Runs the step over every batch with `blocks` blocks of L threads, block b taking batches b, b + blocks, ...:
// one block walks them all when `blocks` is 1. Needs L <= kTreeMaxRows.
Status run_tree_batches(const RowmeanProblem &problem, Context &context, int64_t blocks);

}  // namespace fastgemm::detail
