#include "core/context.hpp"

#include <new>

#include "core/check.hpp"

namespace fastgemm::detail {

Status Context::create(Context **out) {
  DeviceInfo device;
  FG_RETURN_IF_ERROR(query_current_device(&device));
  auto *context = new (std::nothrow) Context();
  if (context == nullptr) return Status::failure(StatusCode::alloc_failed, "host memory for the handle could not be allocated");
  context->device_ = device;
  *out = context;
  return Status::success();
}

Context::~Context() {
  // Destruction reports nothing: both calls only fail when the device is already lost.
  (void)release_workspace();
  if (cublas_ != nullptr) (void)cublasDestroy(cublas_);
}

Status Context::set_stream(cudaStream_t stream) {
  if (stream == stream_) return Status::success();
  // The workspace may still be in use by work on the old stream: free it in that stream's order.
  FG_RETURN_IF_ERROR(release_workspace());
  stream_ = stream;
  return Status::success();
}

Status Context::cublas(cublasHandle_t *out) {
  if (cublas_ == nullptr) {
    cublasHandle_t handle = nullptr;
    FG_CUBLAS_CHECK(cublasCreate(&handle));
    // FP32 products stay FP32: no TF32 or other reduced-precision tensor-core path.
    const Status math = cublas_status(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    if (!math.ok()) {
      (void)cublasDestroy(handle);
      return math;
    }
    cublas_ = handle;
  }
  FG_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
  *out = cublas_;
  return Status::success();
}

Status Context::workspace(size_t bytes, void **out) {
  if (bytes > workspace_bytes_) {
    FG_RETURN_IF_ERROR(release_workspace());
    void *memory = nullptr;
    FG_CUDA_CHECK(cudaMallocAsync(&memory, bytes, stream_));
    workspace_ = memory;
    workspace_bytes_ = bytes;
  }
  *out = workspace_;
  return Status::success();
}

Status Context::release_workspace() {
  if (workspace_ == nullptr) return Status::success();
  void *memory = workspace_;
  workspace_ = nullptr;
  workspace_bytes_ = 0;
  return cuda_status(cudaFreeAsync(memory, stream_), "cudaFreeAsync");
}

}  // namespace fastgemm::detail
