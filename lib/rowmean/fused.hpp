// SPDX-License-Identifier: Apache-2.0
// What AUTO's cost model reads of the fused algorithm's plan.
#pragma once

#include "core/device.hpp"
#include "core/problem.hpp"

namespace fastgemm::detail {

// The batches per tile the fused algorithm takes for the problem on the device; 0 when it cannot run it (a tile's
// means do not fit in shared memory).
int fused_tile_batches(const RowmeanProblem &p, const DeviceInfo &device);

}  // namespace fastgemm::detail
