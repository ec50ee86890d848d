// SPDX-License-Identifier: Apache-2.0
// What a public call leaves behind for the people watching: an NVTX range named for the call, its shape
// and algorithm (so Nsight Systems timelines show fastgemm's calls), and, when the environment variable
// FASTGEMM_LOG is 1, one line on stderr with the arguments, the algorithm that ran and the status.
// Nothing is printed otherwise. When no one listens (FASTGEMM_LOG unset and no NVTX tool attached), a
// trace costs two branches: the arguments are neither formatted nor stored.
#pragma once

#include "fastgemm/fastgemm.h"

namespace fastgemm::capi {

// Whether a trace has an audience: FASTGEMM_LOG=1, or an NVTX tool attached to the process (a tool is
// loaded through NVTX_INJECTION64_PATH, which Nsight Systems and Nsight Compute set). Read once.
bool trace_listened() noexcept;

class CallTrace {
 public:
  // `format` and the arguments after it describe the call's arguments, printf-style; they are formatted
  // only when trace_listened(), at whatever length they take.
  CallTrace(const char *function, const char *format, ...) noexcept __attribute__((format(printf, 3, 4)));
  ~CallTrace();
  CallTrace(const CallTrace &) = delete;
  CallTrace &operator=(const CallTrace &) = delete;

  const char *function() const noexcept { return function_; }
  // The algorithm that ran, for the log line; static strings only.
  void set_algorithm(const char *name) noexcept { algorithm_ = name; }
  void set_status(fg_status_t status) noexcept { status_ = status; }

 private:
  const char *function_;
  const char *algorithm_ = nullptr;
  fg_status_t status_ = FG_STATUS_SUCCESS;
  // The formatted call, in this thread's buffer; null when no one listens or the line could not be made.
  const char *line_ = nullptr;
};

}  // namespace fastgemm::capi
