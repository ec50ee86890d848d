#include "core/device.hpp"

#include <cuda_runtime_api.h>

#include "core/check.hpp"

namespace fastgemm::detail {

Status query_current_device(DeviceInfo *info) {
  int count = 0;
  FG_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count == 0) return cuda_status(cudaErrorNoDevice, "cudaGetDeviceCount");
  int ordinal = 0;
  FG_CUDA_CHECK(cudaGetDevice(&ordinal));
  DeviceInfo result;
  result.ordinal = ordinal;
  int value = 0;
  FG_CUDA_CHECK(cudaDeviceGetAttribute(&result.cc_major, cudaDevAttrComputeCapabilityMajor, ordinal));
  FG_CUDA_CHECK(cudaDeviceGetAttribute(&result.cc_minor, cudaDevAttrComputeCapabilityMinor, ordinal));
  FG_CUDA_CHECK(cudaDeviceGetAttribute(&result.sm_count, cudaDevAttrMultiProcessorCount, ordinal));
  FG_CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal));
  result.smem_per_block_optin = static_cast<size_t>(value);
  FG_CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrL2CacheSize, ordinal));
  result.l2_bytes = static_cast<size_t>(value);
  *info = result;
  return Status::success();
}

Status DeviceGuard::enter(int ordinal) {
  int current = 0;
  FG_CUDA_CHECK(cudaGetDevice(&current));
  if (current == ordinal) return Status::success();
  FG_CUDA_CHECK(cudaSetDevice(ordinal));
  previous_ = current;
  return Status::success();
}

DeviceGuard::~DeviceGuard() {
  // Restoring the caller's device cannot fail for a device that was current a moment ago; a failure
  // here has no one to report to, and the call's own status has been decided already.
  if (previous_ >= 0) (void)cudaSetDevice(previous_);
}

}  // namespace fastgemm::detail
