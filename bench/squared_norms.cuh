// SPDX-License-Identifier: Apache-2.0
// The reduction behind the normwise error ||result - reference||_F / ||reference||_F, shared by fastgemm-bench
// (bench/gpu.cu) and gemmul8-anchor (bench/gemmul8).
#pragma once

#include <cstdint>

namespace bench {

// sums[0] += sum (result - reference)^2 and sums[1] += sum reference^2, in double, over `count` elements; any
// grid-stride launch of whole warps, sums zeroed by the caller. Each warp adds its partial sums with one atomic each.
template <typename Result, typename Reference>
__global__ void squared_norms_kernel(const Result *result, const Reference *reference, int64_t count, double *sums) {
  double difference = 0;
  double norm = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const double expected = reference[i];
    const double delta = static_cast<double>(result[i]) - expected;
    difference += delta * delta;
    norm += expected * expected;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    difference += __shfl_down_sync(0xFFFFFFFFu, difference, offset);
    norm += __shfl_down_sync(0xFFFFFFFFu, norm, offset);
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&sums[0], difference);
    atomicAdd(&sums[1], norm);
  }
}

}  // namespace bench
