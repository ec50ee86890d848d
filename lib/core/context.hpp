// The state behind an fg_handle_t: the device it is bound to, its stream, the selected algorithms, and
// the resources some algorithms need (a cuBLAS handle, a device workspace), made on first use and kept,
// so that later calls of the same shape class allocate nothing.
#pragma once

#include <cstddef>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "core/device.hpp"
#include "core/status.hpp"
#include "fastgemm/fastgemm.h"

namespace fastgemm::detail {

class Context {
 public:
  // Binds to the calling thread's current device.
  static Status create(Context **out);
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  const DeviceInfo &device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  Status set_stream(cudaStream_t stream);

  // The handle's cuBLAS handle, created on first use and bound to the current stream.
  Status cublas(cublasHandle_t *out);

  // Device scratch memory of at least `bytes`, valid for work enqueued on stream() until the next call
  // of workspace() or set_stream(). Grows in stream order; never shrinks.
  Status workspace(size_t bytes, void **out);

  fg_sgemm_algo_t sgemm_algo = FG_SGEMM_AUTO;
  fg_sgemm_algo_t last_sgemm_algo = FG_SGEMM_AUTO;
  fg_rowmean_algo_t rowmean_algo = FG_ROWMEAN_AUTO;

 private:
  Context() = default;
  Status release_workspace();

  DeviceInfo device_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  void *workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

}  // namespace fastgemm::detail
