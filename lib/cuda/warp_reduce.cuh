// SPDX-License-Identifier: Apache-2.0
// Warp-shuffle sums. They are doubles: f32 data is summed in double, and every sum runs in a fixed tree, so that
// results are the same bit for bit from run to run.
#pragma once

#include <cuda_runtime.h>

namespace fastgemm::detail {

// The sum over each aligned group of kLanes lanes (a power of two up to 32), returned to every lane of the group.
// All 32 lanes of the warp must call it together.
template <int kLanes>
__device__ __forceinline__ double group_sum(double value) {
  static_assert(kLanes >= 1 && kLanes <= 32 && (kLanes & (kLanes - 1)) == 0, "kLanes must be a power of two <= 32");
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

__device__ __forceinline__ double warp_sum(double value) { return group_sum<32>(value); }

}  // namespace fastgemm::detail
