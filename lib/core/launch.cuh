// SPDX-License-Identifier: Apache-2.0
// Kernel launches that report their own failure: cudaLaunchKernelEx returns the launch's error directly,
// so a stale error left by someone else's earlier launch is never mistaken for ours.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "core/check.hpp"

namespace fastgemm::detail {

template <typename... KernelParams, typename... Args>
Status launch_with(cudaLaunchAttribute *attributes, unsigned attribute_count, void (*kernel)(KernelParams...),
                   dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream, Args &&...args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = attribute_count;
  return cuda_status(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...), "cudaLaunchKernelEx");
}

template <typename... KernelParams, typename... Args>
Status launch(void (*kernel)(KernelParams...), dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
              Args &&...args) {
  return launch_with(nullptr, 0, kernel, grid, block, shared_bytes, stream, std::forward<Args>(args)...);
}

// The same, but where `overlap` (the device has compute capability 9.0 or later; otherwise an ordinary launch) the
// kernel may start while the one before it in the stream is still finishing (programmatic dependent launch): it must
// call wait_for_prior_grid() before it reads or writes anything. What is saved is the launch latency between the two.
template <typename... KernelParams, typename... Args>
Status launch_dependent(bool overlap, void (*kernel)(KernelParams...), dim3 grid, dim3 block, size_t shared_bytes,
                        cudaStream_t stream, Args &&...args) {
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  return launch_with(&attribute, overlap ? 1u : 0u, kernel, grid, block, shared_bytes, stream,
                     std::forward<Args>(args)...);
}

// In a kernel started by launch_dependent: returns once the grids before it in the stream have finished and their
// writes are visible.
__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the kernel after this one in the stream, if started by launch_dependent, be scheduled before this one ends.
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Grid dimensions y and z are limited to 65535 blocks; kernels loop over what a capped grid leaves.
inline unsigned int capped_grid(int64_t blocks, int64_t limit = 65535) {
  return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > limit ? limit : blocks));
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace fastgemm::detail
