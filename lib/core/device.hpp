// SPDX-License-Identifier: Apache-2.0
// What the kernels and AUTO's choices need to know about the device a handle is bound to, and the few
// driver calls the library makes (reached through the runtime's entry-point query, so that the library
// does not link libcuda).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

#include <cuda_runtime_api.h>

#include "core/status.hpp"

namespace fastgemm::detail {

struct DeviceInfo {
  int ordinal = 0;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  size_t smem_per_block_optin = 0;  // the most dynamic shared memory one block may ask for
  size_t l2_bytes = 0;
  void *primary_context = nullptr;  // the device's primary context (a CUcontext), retained by the handle

  int arch() const { return cc_major * 10 + cc_minor; }
};

// Reads the attributes of the calling thread's current device and retains its primary context, which
// release_device() gives back. A machine without a usable device or driver is StatusCode::no_device.
Status query_current_device(DeviceInfo *info);
void release_device(const DeviceInfo &info);

// Held while a cuBLAS handle is made or destroyed and while a context's or a host worker's CUDA objects are torn
// down, so that no two of these run at once in the process: cublasDestroy synchronizes the device, and that
// synchronization faulted inside the driver (CUDA 13, an H200) while other threads tore their handles down at the
// same moment (four threads each destroying a handle of two host workers as they ended together). Recursive: a
// worker's teardown ends with its own context's.
std::recursive_mutex &teardown_mutex();

// Makes the handle's device current for the guard's lifetime by pushing its primary context, and pops it
// after, so that the thread's own context (or its having none) is exactly as it was: nothing is switched
// when that context is current already, and no context is ever created on a device the thread did not
// choose.
class DeviceGuard {
 public:
  DeviceGuard() = default;
  DeviceGuard(const DeviceGuard &) = delete;
  DeviceGuard &operator=(const DeviceGuard &) = delete;
  ~DeviceGuard();
  Status enter(const DeviceInfo &device);
  // For a device the caller named by its ordinal (fg_set_devices): its primary context, retained while
  // the guard lives.
  Status enter(int ordinal);

 private:
  bool pushed_ = false;
  int retained_ = -1;
};

// Makes the calling thread, when it exits, first wait for its per-thread default stream on `device` (the
// handle's device, on which it has just enqueued work there through fastgemm). A thread that exits while its
// per-thread stream still runs work can hang in the CUDA driver's thread teardown once the process has used
// the stream-ordered allocator (seen with driver 580 on the H100); waiting first avoids that. Costs a
// thread-local test per call; nothing is waited for before the thread's exit.
void wait_for_per_thread_stream_at_exit(const DeviceInfo &device);

// What the driver knows of an address, in one query.
struct PointerAttributes {
  enum class Memory { unknown, device, host, managed } memory = Memory::unknown;
  int device = -1;            // the device it was allocated on or registered with (device memory)
  uintptr_t range_begin = 0;  // the allocation holding it; range_bytes == 0 when the driver gives none
  size_t range_bytes = 0;
  // The driver's id of the allocation, unique over the process's life (freed memory allocated again at
  // the same address gets a new one); 0 when the driver gives none.
  uint64_t buffer_id = 0;
};

// A pointer the driver has never seen is Memory::unknown with success; a failure means the driver
// itself failed (a context lost to an earlier fault, say). Leaves the runtime's pending error alone.
Status query_pointer(const void *pointer, PointerAttributes *attributes);
// Only the allocation's id (0 for memory the driver does not know): the one attribute a cached answer
// needs to be known current.
Status query_buffer_id(const void *pointer, uint64_t *buffer_id);

// The function a graph's kernel node launches and its launch shape, as the driver gives them: also for a kernel of
// a library's own module (cuBLAS's), whose parameters the runtime's cudaGraphKernelNodeGetParams does not give.
struct KernelNodeLaunch {
  const void *function = nullptr;
  unsigned int grid[3] = {}, block[3] = {}, shared_bytes = 0;
};
Status kernel_node_launch(cudaGraphNode_t node, KernelNodeLaunch *launch);

// The answers of query_pointer for the last few allocations a handle's calls have named, keyed by the
// allocation's id, so that a pointer into one of them costs the driver one single-attribute query. An entry
// cannot go stale: memory freed and allocated again gets a new id, which misses. Used by one thread at a
// time (a handle's); allocates nothing.
class PointerCache {
 public:
  using FullQuery = Status (*)(const void *, PointerAttributes *);
  using IdQuery = Status (*)(const void *, uint64_t *);
  // The driver's queries, or stand-ins for them in tests.
  explicit PointerCache(FullQuery full = query_pointer, IdQuery id = query_buffer_id) : full_(full), id_(id) {}

  Status query(const void *pointer, PointerAttributes *attributes);

  static constexpr int kEntries = 32;

 private:
  FullQuery full_;
  IdQuery id_;
  PointerAttributes entries_[kEntries];  // buffer_id == 0: empty
  int next_ = 0;                         // the entry the next new allocation replaces
};

}  // namespace fastgemm::detail
