// SPDX-License-Identifier: Apache-2.0
#include "core/check.hpp"

#include <string>

namespace fastgemm::detail {
namespace {

std::string call_name(const char *call) {
  std::string name(call ? call : "CUDA call");
  const auto paren = name.find('(');
  if (paren != std::string::npos) name.resize(paren);
  return name;
}

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// The runtime answers "insufficient driver" both where no driver is installed and where the installed one
// is older than the runtime; the driver's version (0 without a driver) tells them apart.
std::string no_device_headline(cudaError_t error) {
  int driver = 0, runtime = 0;
  if (error == cudaErrorInsufficientDriver && cudaDriverGetVersion(&driver) == cudaSuccess) {
    if (driver == 0) return "no NVIDIA driver found (no libcuda.so.1 is installed)";
    if (cudaRuntimeGetVersion(&runtime) == cudaSuccess)
      return "the NVIDIA driver supports CUDA " + cuda_version_text(driver) + ", older than the CUDA runtime " +
             cuda_version_text(runtime) + " this program uses: update the driver";
  }
  if (error == cudaErrorStubLibrary) return "no NVIDIA driver found (the CUDA toolkit's stub libcuda.so was loaded)";
  return "no usable NVIDIA GPU and driver found";
}

}  // namespace

Status cuda_status(cudaError_t error, const char *call) {
  if (error == cudaSuccess) return Status::success();
  std::string message =
      call_name(call) + " failed: " + cudaGetErrorString(error) + " (" + cudaGetErrorName(error) + ")";
  StatusCode code = StatusCode::cuda_error;
  switch (error) {
    case cudaErrorMemoryAllocation: code = StatusCode::alloc_failed; break;
    case cudaErrorNoDevice:
    case cudaErrorStubLibrary:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice: code = StatusCode::no_device; break;
    default: break;
  }
  // CUDA's own text ("CUDA driver version is insufficient...") reads as a request to upgrade a driver that a
  // machine without a GPU does not have: say first what it means.
  if (code == StatusCode::no_device) message = no_device_headline(error) + ": " + message;
  return Status::failure(code, std::move(message), static_cast<int>(error));
}

Status cublas_status(cublasStatus_t status, const char *call) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::success();
  // A context lost to an earlier kernel fault makes cuBLAS fail too, with a status that does not say so:
  // the fault is what the caller needs to hear. The context's state shows in any call that touches it.
  const cudaError_t context_state = cudaStreamQuery(cudaStreamLegacy);
  if (context_state != cudaSuccess && context_state != cudaErrorNotReady &&
      context_state != cudaErrorStreamCaptureUnsupported && context_state != cudaErrorStreamCaptureImplicit &&
      context_state != cudaErrorStreamCaptureInvalidated)
    return cuda_status(context_state, call);
  std::string message =
      call_name(call) + " failed: " + cublasGetStatusString(status) + " (" + cublasGetStatusName(status) + ")";
  const StatusCode code = status == CUBLAS_STATUS_ALLOC_FAILED ? StatusCode::alloc_failed : StatusCode::cublas_error;
  return Status::failure(code, std::move(message));
}

}  // namespace fastgemm::detail
