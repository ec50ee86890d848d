// SPDX-License-Identifier: Apache-2.0
// L2 cache hints: lines fetched ahead of their use, and lines dropped that nobody reads again.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace fastgemm::detail {

__device__ __forceinline__ void prefetch_to_l2(const void *address) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(address));
}

// Drops the whole 128-byte lines of [data, data + bytes) from L2 without writing them back; thread `worker` of
// `workers` takes every workers-th line. Lines only partly inside are kept.
__device__ __forceinline__ void discard_l2_lines(const void *data, int64_t bytes, int worker, int workers) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + 127) & ~uintptr_t{127};
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + static_cast<uintptr_t>(bytes)) & ~uintptr_t{127};
  for (uintptr_t line = begin + static_cast<uintptr_t>(worker) * 128; line < end;
       line += static_cast<uintptr_t>(workers) * 128)
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(line) : "memory");
#endif
}

}  // namespace fastgemm::detail
