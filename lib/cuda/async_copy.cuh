// SPDX-License-Identifier: Apache-2.0
// Asynchronous copies from global to shared memory (cp.async, compute capability 8.0): each thread's copies are
// committed in groups, and a thread waits until at most kPending of its groups are still in flight. The synchronous
// copies of older targets only keep those targets of a fat binary compiling; every caller refuses such devices.
#pragma once

#include <cuda_runtime.h>

namespace fastgemm::detail {

__device__ __forceinline__ unsigned shared_address(const void *pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

// Copies `bytes` (0 to 16) from global memory and zero-fills the rest of the 16-byte chunk.
__device__ __forceinline__ void copy_chunk(float *shared, const float *global, int bytes) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(shared)), "l"(global), "r"(bytes)
               : "memory");
#else
  for (int i = 0; i < 4; ++i) shared[i] = 4 * i < bytes ? global[i] : 0.0f;
#endif
}

// Copies one float (bytes 4) or stores a zero (bytes 0).
__device__ __forceinline__ void copy_element(float *shared, const float *global, int bytes) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_address(shared)), "l"(global), "r"(bytes)
               : "memory");
#else
  *shared = bytes > 0 ? *global : 0.0f;
#endif
}

__device__ __forceinline__ void commit_copies() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int kPending>
__device__ __forceinline__ void wait_copies() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
}

}  // namespace fastgemm::detail
