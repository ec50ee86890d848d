// SPDX-License-Identifier: Apache-2.0
#include "core/context.hpp"

#include <mutex>
#include <new>
#include <string>

#include "core/check.hpp"

namespace fastgemm::detail {
namespace {

// cuBLAS's recommended workspace: 32 MiB on Hopper and later, 4 MiB before.
size_t cublas_workspace_bytes(const DeviceInfo &device) {
  return device.cc_major >= 9 ? size_t{32} << 20 : size_t{4} << 20;
}

size_t round_up_256(size_t bytes) { return (bytes + 255) / 256 * 256; }

bool is_legacy_stream(cudaStream_t stream) { return stream == nullptr || stream == cudaStreamLegacy; }

}  // namespace

Status Context::create(Context **out) {
  DeviceInfo device;
  FG_RETURN_IF_ERROR(query_current_device(&device));
  auto *context = new (std::nothrow) Context();
  if (context == nullptr) {
    release_device(device);
    return Status::failure(StatusCode::alloc_failed, "host memory for the handle could not be allocated");
  }
  context->device_ = device;
  Status made =
      cuda_status(cudaEventCreateWithFlags(&context->last_use_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  if (made.ok())
    made = cuda_status(cudaStreamCreateWithFlags(&context->legacy_marker_, cudaStreamDefault),
                       "cudaStreamCreateWithFlags");
  if (!made.ok()) {
    delete context;  // gives back the device's primary context too
    return made;
  }
  *out = context;
  return Status::success();
}

Context::~Context() {
  // Destruction reports nothing: these calls only fail when the device is already lost. The stream may
  // be gone by now, so nothing here is enqueued on it. Memory is freed on the legacy stream, after any
  // use there even where no event could be recorded.
  const std::lock_guard<std::recursive_mutex> lock(teardown_mutex());
  (void)mark_legacy_uses();
  if (recorded_) (void)cudaEventSynchronize(last_use_);
  for (auto &state : states_)
    if (state.second != nullptr) state.second->release();
  if (cublas_ != nullptr) {
    (void)cublasSetStream(cublas_, nullptr);
    (void)cublasDestroy(cublas_);
  }
  freed_at_destroy_.push_back(owned_);
  freed_at_destroy_.push_back(cublas_workspace_);
  for (void *memory : freed_at_destroy_)
    if (memory != nullptr) (void)cudaFreeAsync(memory, cudaStreamLegacy);
  if (last_use_ != nullptr) (void)cudaEventDestroy(last_use_);
  if (legacy_marker_ != nullptr) (void)cudaStreamDestroy(legacy_marker_);
  release_device(device_);
}

std::unique_ptr<VariantState> &Context::variant_state(const void *owner) {
  for (auto &state : states_)
    if (state.first == owner) return state.second;
  states_.emplace_back(owner, nullptr);
  return states_.back().second;
}

void Context::workspace_changed() {
  for (auto &state : states_)
    if (state.second != nullptr) state.second->workspace_changed();
}

Status Context::set_stream(cudaStream_t stream) {
  if (stream == stream_) return Status::success();
  FG_RETURN_IF_ERROR(mark_legacy_uses());
  stream_ = stream;
  capture_known_ = false;
  if (recorded_) wait_before_use_ = true;
  return Status::success();
}

Status Context::set_workspace(void *memory, size_t bytes) {
  workspace_changed();
  if (memory != nullptr) {
    // cuBLAS's handle is made now, outside any capture: from here on no call creates anything.
    FG_RETURN_IF_ERROR(create_cublas());
    FG_RETURN_IF_ERROR(free_after_last_use(owned_));
    owned_ = nullptr;
    owned_bytes_ = 0;
    FG_RETURN_IF_ERROR(free_after_last_use(cublas_workspace_));
    cublas_workspace_ = nullptr;
  }
  caller_memory_ = memory;
  caller_bytes_ = memory != nullptr ? bytes : 0;
  return Status::success();
}

void Context::begin_call() {
  used_in_call_ = false;
  taken_in_call_ = 0;
  in_call_ = true;
  capture_known_ = false;
}

Status Context::end_call() {
  const Status ended = record_call_end();
  in_call_ = false;
  capture_known_ = false;
  return ended;
}

Status Context::record_call_end() {
  if (!used_in_call_) return Status::success();
  if (is_legacy_stream(stream_)) {
    unmarked_legacy_use_ = true;
    return Status::success();
  }
  // Captured, the record is an external node: the event is recorded each time the graph runs.
  bool active = false;
  FG_RETURN_IF_ERROR(capturing(&active));
  FG_CUDA_CHECK(
      cudaEventRecordWithFlags(last_use_, stream_, active ? cudaEventRecordExternal : cudaEventRecordDefault));
  recorded_ = true;
  wait_before_use_ = false;
  return Status::success();
}

Status Context::mark_legacy_uses() {
  if (!unmarked_legacy_use_) return Status::success();
  FG_CUDA_CHECK(cudaEventRecord(last_use_, legacy_marker_));
  unmarked_legacy_use_ = false;
  recorded_ = true;
  return Status::success();
}

Status Context::capturing(bool *active) {
  if (in_call_ && capture_known_) {
    *active = capture_active_;
    return Status::success();
  }
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  FG_CUDA_CHECK(cudaStreamIsCapturing(stream_, &status));
  *active = status != cudaStreamCaptureStatusNone;
  capture_known_ = in_call_;
  capture_active_ = *active;
  return Status::success();
}

Status Context::order_after_last_use() {
  if (!recorded_) return Status::success();
  // cudaStreamPerThread names another stream on each thread, and the handle cannot tell which thread made
  // the last use (a thread's id is reused once it has ended), so with it every use waits for the last.
  const bool per_thread_stream = stream_ == cudaStreamPerThread;
  if (!wait_before_use_ && !per_thread_stream) return Status::success();
  bool active = false;
  FG_RETURN_IF_ERROR(capturing(&active));
  FG_CUDA_CHECK(cudaStreamWaitEvent(stream_, last_use_, active ? cudaEventWaitExternal : cudaEventWaitDefault));
  wait_before_use_ = false;
  return Status::success();
}

Status Context::free_after_last_use(void *memory) {
  if (memory == nullptr) return Status::success();
  bool active = false;
  FG_RETURN_IF_ERROR(capturing(&active));
  if (active) {
    freed_at_destroy_.push_back(memory);
    return Status::success();
  }
  if (recorded_) FG_CUDA_CHECK(cudaStreamWaitEvent(stream_, last_use_, cudaEventWaitDefault));
  FG_CUDA_CHECK(cudaFreeAsync(memory, stream_));
  return Status::success();
}

Status Context::allocate(size_t bytes, void **out) {
  bool active = false;
  FG_RETURN_IF_ERROR(capturing(&active));
  if (active)
    return Status::failure(StatusCode::not_supported,
                           "the handle's workspace must grow to " + std::to_string(bytes) +
                               " bytes while its stream is being captured: make the same call once before the "
                               "capture, or give the handle a workspace with fg_set_workspace");
  void *memory = nullptr;
  FG_CUDA_CHECK(cudaMallocAsync(&memory, bytes, stream_));
  *out = memory;
  return Status::success();
}

Status Context::create_cublas() {
  if (cublas_ != nullptr) return Status::success();
  const std::lock_guard<std::recursive_mutex> lock(teardown_mutex());
  cublasHandle_t handle = nullptr;
  FG_CUBLAS_CHECK(cublasCreate(&handle));
  // FP32 products stay FP32: no TF32 or other reduced-precision tensor-core path.
  const Status math = cublas_status(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  if (!math.ok()) {
    (void)cublasDestroy(handle);
    return math;
  }
  cublas_ = handle;
  return Status::success();
}

Status Context::cublas(cublasHandle_t *out) {
  FG_RETURN_IF_ERROR(create_cublas());
  FG_RETURN_IF_ERROR(order_after_last_use());
  void *memory = nullptr;
  size_t bytes = 0;
  if (has_caller_workspace()) {
    const size_t offset = round_up_256(taken_in_call_);
    if (offset < caller_bytes_) {
      memory = static_cast<char *>(caller_memory_) + offset;
      bytes = caller_bytes_ - offset;
    }
  } else {
    if (cublas_workspace_ == nullptr) {
      FG_RETURN_IF_ERROR(allocate(cublas_workspace_bytes(device_), &cublas_workspace_));
      cublas_workspace_bytes_ = cublas_workspace_bytes(device_);
    }
    memory = cublas_workspace_;
    bytes = cublas_workspace_bytes_;
  }
  if (!cublas_bound_ || cublas_stream_ != stream_ || cublas_given_memory_ != memory || cublas_given_bytes_ != bytes) {
    cublas_bound_ = false;
    // Setting the stream resets cuBLAS to its own workspace pool, so the handle's is given again after it.
    FG_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
    FG_CUBLAS_CHECK(cublasSetWorkspace(cublas_, memory, bytes));
    cublas_stream_ = stream_, cublas_given_memory_ = memory, cublas_given_bytes_ = bytes;
    cublas_bound_ = true;
  }
  used_in_call_ = true;
  *out = cublas_;
  return Status::success();
}

Status Context::workspace(size_t bytes, void **out) {
  FG_RETURN_IF_ERROR(order_after_last_use());
  if (has_caller_workspace()) {
    if (bytes > caller_bytes_)
      return Status::failure(StatusCode::not_supported,
                             "the algorithm needs " + std::to_string(bytes) + " bytes of workspace, more than the " +
                                 std::to_string(caller_bytes_) + " given with fg_set_workspace");
    *out = caller_memory_;
  } else {
    if (bytes > owned_bytes_) {
      void *memory = nullptr;
      FG_RETURN_IF_ERROR(allocate(bytes, &memory));
      const Status freed = free_after_last_use(owned_);
      workspace_changed();
      owned_ = memory;
      owned_bytes_ = bytes;
      FG_RETURN_IF_ERROR(freed);
    }
    *out = owned_;
  }
  taken_in_call_ = bytes;
  used_in_call_ = true;
  return Status::success();
}

}  // namespace fastgemm::detail
