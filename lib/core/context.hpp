// SPDX-License-Identifier: Apache-2.0
// The resources behind an fg_handle_t: the device it is bound to, its stream, and what the dispatcher hands
// some algorithms (a cuBLAS handle, a device workspace), made on first use and kept, so that later calls of
// the same shape class allocate nothing. The handle's settings live beside it, in capi/handle.hpp.
//
// The workspace outlives stream changes: an event recorded after the work that used it tells when that
// work is done, so a call on another stream (or on the per-thread default stream of another thread) waits
// for it first, memory is freed only after it, and nothing ever depends on a stream still existing.
// On the legacy default stream the event is recorded only when something needs it (a stream change, the
// handle's release): that stream never dies and is never captured, and the handle's own blocking stream
// marks the end of its work at that moment. Any other stream may be destroyed before the handle hears of a
// change, so a call there records the event after its work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "core/device.hpp"
#include "core/status.hpp"
#include "core/variant_state.hpp"

namespace fastgemm::detail {

class Context {
 public:
  // Binds to the calling thread's current device.
  static Status create(Context **out);
  // Waits for the work that used the workspace, then frees it. cuBLAS's own release (cublasDestroy)
  // synchronizes the whole device when the handle has made a cuBLAS handle.
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  const DeviceInfo &device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  // Never frees or reallocates anything: the next use of the workspace waits for the last one instead.
  Status set_stream(cudaStream_t stream);

  // What the driver says of a pointer, through the handle's cache of the allocations it has seen.
  Status query_pointer(const void *pointer, PointerAttributes *attributes) {
    return pointers_.query(pointer, attributes);
  }

  // Caller-owned workspace (fg_set_workspace): `memory` == nullptr returns to a handle-owned one.
  Status set_workspace(void *memory, size_t bytes);
  bool has_caller_workspace() const { return caller_memory_ != nullptr || caller_bytes_ > 0; }
  // What AUTO's choice must fit in: the caller's workspace, or no limit for a handle-owned one.
  size_t workspace_limit() const { return has_caller_workspace() ? caller_bytes_ : SIZE_MAX; }

  // Bracket every call that may use the workspace or cuBLAS: begin_call() before, end_call() after the
  // call's work is enqueued (it records the event, or notes the use on the legacy stream, when the
  // workspace or cuBLAS was used).
  void begin_call();
  Status end_call();

  // The handle's cuBLAS handle, created on first use, bound to the current stream and given a workspace
  // of the handle's (the part of a caller's workspace past what this call took), so it never allocates.
  Status cublas(cublasHandle_t *out);
  // The workspace cublas() gave cuBLAS: whoever binds the handle to another stream for a while (which resets
  // cuBLAS to a pool of its own) gives it again, so that cuBLAS never allocates.
  void *given_cublas_workspace() const { return cublas_given_memory_; }
  size_t given_cublas_workspace_bytes() const { return cublas_given_bytes_; }

  // Device scratch memory of at least `bytes`, valid for work enqueued on stream() during this call.
  // A handle-owned workspace grows in stream order, never while the stream is being captured; a
  // caller's workspace that is too small is StatusCode::not_supported naming the bytes needed.
  Status workspace(size_t bytes, void **out);

  // Whether the stream is being captured into a graph. Within a call (begin_call to end_call) the driver is asked
  // once: a call's own work cannot start or end a capture of the handle's stream.
  Status capturing(bool *active);

  // The state the variant at `owner` (its registry entry) keeps in the handle, empty until it makes one. A new
  // workspace is told to every state (they may hold its addresses); they are released before the device.
  std::unique_ptr<VariantState> &variant_state(const void *owner);

 private:
  Context() = default;
  // Makes the current stream wait for the last work that used the workspace, when that may have been
  // enqueued on another stream.
  Status order_after_last_use();
  // Frees handle-owned memory once the work that used it is done, in the current stream's order; while
  // that stream is being captured, it is kept until the handle is destroyed instead.
  Status free_after_last_use(void *memory);
  Status allocate(size_t bytes, void **out);
  Status create_cublas();
  // Records the event after the work of uses on the legacy stream that no record covers yet.
  Status mark_legacy_uses();
  // end_call's record of the call's last use.
  Status record_call_end();
  // Tells every variant's state that the workspace was replaced.
  void workspace_changed();

  DeviceInfo device_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  void *cublas_workspace_ = nullptr;  // handle-owned cuBLAS workspace
  size_t cublas_workspace_bytes_ = 0;
  // What cuBLAS was last given, so that a call with the same stream and workspace sets neither again.
  cudaStream_t cublas_stream_ = nullptr;
  void *cublas_given_memory_ = nullptr;
  size_t cublas_given_bytes_ = 0;
  bool cublas_bound_ = false;
  void *owned_ = nullptr;  // handle-owned workspace
  size_t owned_bytes_ = 0;
  void *caller_memory_ = nullptr;  // the caller's workspace (fg_set_workspace)
  size_t caller_bytes_ = 0;
  std::vector<void *> freed_at_destroy_;

  PointerCache pointers_;
  // A deque: a state handed out stays where it is while others are added.
  std::deque<std::pair<const void *, std::unique_ptr<VariantState>>> states_;

  cudaEvent_t last_use_ = nullptr;  // recorded after the work that used the workspace or cuBLAS
  // A blocking stream of the handle's: work enqueued on it waits for all earlier work of the legacy
  // stream, so an event recorded there marks the end of the legacy stream's work at that moment.
  cudaStream_t legacy_marker_ = nullptr;
  bool unmarked_legacy_use_ = false;  // the workspace or cuBLAS was used on the legacy stream since the record
  bool recorded_ = false;
  bool wait_before_use_ = false;  // the stream changed since the last record
  bool used_in_call_ = false;
  size_t taken_in_call_ = 0;    // bytes of the workspace this call has taken
  bool in_call_ = false;        // between begin_call and end_call
  bool capture_known_ = false;  // capturing() asked the driver in this call, which said capture_active_
  bool capture_active_ = false;
};

// Runs a call that may use the context's workspace or cuBLAS between begin_call() and end_call(), so that where that
// use ends is marked even when the call fails after enqueuing some of its work.
template <typename Run>
Status using_workspace(Context &context, Run &&run) {
  context.begin_call();
  const Status ran = run();
  const Status ended = context.end_call();
  return ran.ok() ? ended : ran;
}

}  // namespace fastgemm::detail
