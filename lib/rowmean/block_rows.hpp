// SPDX-License-Identifier: Apache-2.0
// The limit of the seed algorithms single_block and block_per_batch, which hold one batch's rows in one block: a
// thread, and a shared-memory slot, per row.
#pragma once

#include <string>

#include "core/device.hpp"
#include "core/problem.hpp"
#include "core/status.hpp"

namespace fastgemm::detail {

// The most threads one block may have.
constexpr int kBlockMaxRows = 1024;

// can_implement of the algorithms that hold a batch's rows in one block.
inline Status block_rows_supported(const RowmeanProblem &p, const DeviceInfo &) {
  if (p.L <= kBlockMaxRows) return Status::success();
  return Status::failure(StatusCode::not_supported, "L = " + std::to_string(p.L) +
                                                        " must be <= " + std::to_string(kBlockMaxRows) +
                                                        " (one block holds a batch's rows)");
}

}  // namespace fastgemm::detail
