// SPDX-License-Identifier: Apache-2.0
// The C ABI's status values from lib/'s, and their names: shared by capi/ and by libfastgemm_blas_dgemm
// (blas/dgemm/), which reports its failures in the same values.
#pragma once

#include <string>

#include "core/status.hpp"
#include "fastgemm/fastgemm.h"

namespace fastgemm::capi {

inline fg_status_t public_status(detail::StatusCode code) {
  using detail::StatusCode;
  switch (code) {
    case StatusCode::success: return FG_STATUS_SUCCESS;
    case StatusCode::invalid_value: return FG_STATUS_INVALID_VALUE;
    case StatusCode::invalid_handle: return FG_STATUS_INVALID_HANDLE;
    case StatusCode::not_supported: return FG_STATUS_NOT_SUPPORTED;
    case StatusCode::no_device: return FG_STATUS_NO_DEVICE;
    case StatusCode::alloc_failed: return FG_STATUS_ALLOC_FAILED;
    case StatusCode::cuda_error: return FG_STATUS_CUDA_ERROR;
    case StatusCode::cublas_error: return FG_STATUS_CUBLAS_ERROR;
    case StatusCode::internal_error:
    case StatusCode::aborted: return FG_STATUS_INTERNAL_ERROR;
  }
  return FG_STATUS_INTERNAL_ERROR;
}

// "FG_STATUS_INVALID_VALUE"; a value fastgemm does not define: "FG_STATUS_UNKNOWN".
inline const char *status_name(fg_status_t status) {
  switch (status) {
    case FG_STATUS_SUCCESS: return "FG_STATUS_SUCCESS";
    case FG_STATUS_INVALID_VALUE: return "FG_STATUS_INVALID_VALUE";
    case FG_STATUS_INVALID_HANDLE: return "FG_STATUS_INVALID_HANDLE";
    case FG_STATUS_NOT_SUPPORTED: return "FG_STATUS_NOT_SUPPORTED";
    case FG_STATUS_NO_DEVICE: return "FG_STATUS_NO_DEVICE";
    case FG_STATUS_ALLOC_FAILED: return "FG_STATUS_ALLOC_FAILED";
    case FG_STATUS_CUDA_ERROR: return "FG_STATUS_CUDA_ERROR";
    case FG_STATUS_CUBLAS_ERROR: return "FG_STATUS_CUBLAS_ERROR";
    case FG_STATUS_INTERNAL_ERROR: return "FG_STATUS_INTERNAL_ERROR";
  }
  return "FG_STATUS_UNKNOWN";
}

// *last := "function: message", the thread's last error; "" where the host has no memory even for that (the status
// still tells what failed).
inline void record_message(std::string *last, const char *function, const std::string &message) noexcept {
  try {
    *last = std::string(function) + ": " + message;
  } catch (...) {
    last->clear();
  }
}

}  // namespace fastgemm::capi
