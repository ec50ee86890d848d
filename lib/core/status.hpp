// SPDX-License-Identifier: Apache-2.0
// Internal status of lib/: a code and, on failure, a message naming the call or condition that failed.
// capi/ turns it into an fg_status_t and the thread's last-error message.
#pragma once

#include <string>
#include <utility>

namespace fastgemm::detail {

enum class StatusCode {
  success,
  invalid_value,
  invalid_handle,
  not_supported,
  no_device,
  alloc_failed,
  cuda_error,
  cublas_error,
  internal_error,
  // Internal to a call that runs in parts (fg_sgemm_host's threads and workers): this part stopped, unfinished,
  // because another part failed; the call reports that other part's failure. Never the outcome of a whole call.
  aborted,
};

struct [[nodiscard]] Status {
  StatusCode code = StatusCode::success;
  std::string message;  // empty on success
  int cuda_error = 0;   // the cudaError_t behind a cuda_error / no_device / alloc_failed status

  bool ok() const { return code == StatusCode::success; }

  static Status success() { return {}; }
  static Status failure(StatusCode code, std::string message, int cuda_error = 0) {
    return Status{code, std::move(message), cuda_error};
  }
};

}  // namespace fastgemm::detail

// Returns the status from the enclosing function when it is a failure.
#define FG_RETURN_IF_ERROR(expr)                    \
  do {                                              \
    ::fastgemm::detail::Status fg_status_ = (expr); \
    if (!fg_status_.ok()) return fg_status_;        \
  } while (0)
