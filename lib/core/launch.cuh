// Kernel launches that report their own failure: cudaLaunchKernelEx returns the launch's error directly,
// so a stale error left by someone else's earlier launch is never mistaken for ours.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "core/check.hpp"

namespace fastgemm::detail {

template <typename... KernelParams, typename... Args>
Status launch(void (*kernel)(KernelParams...), dim3 grid, dim3 block, size_t shared_bytes,
              cudaStream_t stream, Args &&...args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  return cuda_status(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...), "cudaLaunchKernelEx");
}

// Grid dimensions y and z are limited to 65535 blocks; kernels loop over what a capped grid leaves.
inline unsigned int capped_grid(int64_t blocks, int64_t limit = 65535) {
  return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > limit ? limit : blocks));
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace fastgemm::detail
