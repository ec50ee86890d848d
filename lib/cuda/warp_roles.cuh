// SPDX-License-Identifier: Apache-2.0
// Blocks of two kinds of warps, producers (warps [0, kProducerWarps)) and consumers (the rest), that hand work to
// each other through shared memory and named barriers rather than __syncthreads.
#pragma once

#include <cuda_runtime.h>

namespace fastgemm::detail {

// Waits at barrier `id` (1 to 15; 0 belongs to __syncthreads) until `threads` threads, a multiple of 32, have
// arrived or waited there; the shared-memory writes of the arriving threads are then visible to the waiting ones.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// Counts this thread's warp in at barrier `id` without waiting.
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

template <int kProducerWarps, int kConsumerWarps>
struct WarpRoles {
  static constexpr int kProducerThreads = kProducerWarps * 32;
  static constexpr int kConsumerThreads = kConsumerWarps * 32;
  static constexpr int kThreads = kProducerThreads + kConsumerThreads;

  __device__ static bool producer() { return static_cast<int>(threadIdx.x) < kProducerThreads; }
  // This thread's index among the consumer threads.
  __device__ static int consumer_thread() { return static_cast<int>(threadIdx.x) - kProducerThreads; }
  // Every thread of the block, producers and consumers.
  __device__ static void sync_all(int id) { named_barrier_sync(id, kThreads); }
  __device__ static void arrive_all(int id) { named_barrier_arrive(id, kThreads); }
  // The consumer threads only.
  __device__ static void sync_consumers(int id) { named_barrier_sync(id, kConsumerThreads); }
};

// A 32-bit load that later loads and stores of this thread cannot move before: it sees every write that the writer
// of the value made visible GPU-wide before writing it.
__device__ __forceinline__ unsigned load_acquire(const unsigned *address) {
  unsigned value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
  return value;
}

}  // namespace fastgemm::detail
