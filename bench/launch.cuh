// SPDX-License-Identifier: Apache-2.0
// How the bench's own kernels are launched: grid-stride loops of 256-thread blocks on the legacy default stream.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "gpu.hpp"

namespace bench {

constexpr int kThreads = 256;
// Grid-stride kernels walk their arrays with at most this many blocks, which keep any GPU busy.
constexpr int64_t kMaxBlocks = 4096;

inline unsigned int blocks_for(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned int>(std::max<int64_t>(1, std::min(blocks, kMaxBlocks)));
}

// cudaLaunchKernelEx returns this launch's own error, never a stale one left by an earlier call.
template <typename... KernelParams, typename... Args>
void launch(const char *name, void (*kernel)(KernelParams...), unsigned int blocks, Args &&...args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(kThreads);
  config.stream = 0;
  check_cuda(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...), name);
}

// The first index of this thread in a grid-stride loop, and the loop's stride.
__device__ inline int64_t first_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

}  // namespace bench
