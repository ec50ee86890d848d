// SPDX-License-Identifier: Apache-2.0
#include "capi/trace.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <nvtx3/nvToolsExt.h>

#include "capi/thread_text.hpp"

namespace fastgemm::capi {
namespace {

bool logging_enabled() {
  static const bool enabled = [] {
    const char *value = std::getenv("FASTGEMM_LOG");
    return value != nullptr && std::strcmp(value, "1") == 0;
  }();
  return enabled;
}

bool nvtx_tool_attached() {
  static const bool attached = [] {
    const char *path = std::getenv("NVTX_INJECTION64_PATH");
    return path != nullptr && path[0] != '\0';
  }();
  return attached;
}

nvtxDomainHandle_t nvtx_domain() {
  static const nvtxDomainHandle_t domain = nvtxDomainCreateA("fastgemm");
  return domain;
}

// The line of the call being traced. A thread runs one public call at a time and no traced call makes
// another, so one buffer per thread is enough. It grows to the longest line the thread has traced and is
// kept, so a listened-to call allocates only when its line is longer than any before it.
thread_local bool t_line_gone = false;
thread_local fastgemm::capi::ThreadText t_line(&t_line_gone);

// "function(arguments)" at full length, or nullptr when formatting fails.
const char *format_line(const char *function, const char *format, va_list arguments) noexcept {
  std::string *line = fastgemm::capi::ThreadText::of(t_line, t_line_gone);
  if (line == nullptr) return nullptr;  // the thread is ending and its line is gone: the call is logged by name
  try {
    va_list measuring;
    va_copy(measuring, arguments);
    const int length = std::vsnprintf(nullptr, 0, format, measuring);
    va_end(measuring);
    if (length < 0) return nullptr;
    const size_t prefix = std::strlen(function) + 1;
    line->resize(prefix + static_cast<size_t>(length) + 1);
    std::memcpy(&(*line)[0], function, prefix - 1);
    (*line)[prefix - 1] = '(';
    std::vsnprintf(&(*line)[prefix], static_cast<size_t>(length) + 1, format, arguments);
    line->back() = ')';
    return line->c_str();
  } catch (...) {
    return nullptr;  // out of host memory for the line: the call itself goes on untraced
  }
}

}  // namespace

bool trace_listened() noexcept { return logging_enabled() || nvtx_tool_attached(); }

CallTrace::CallTrace(const char *function, const char *format, ...) noexcept : function_(function) {
  if (!trace_listened()) return;
  va_list arguments;
  va_start(arguments, format);
  line_ = format_line(function, format, arguments);
  va_end(arguments);
  nvtxEventAttributes_t attributes = {};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = line_ != nullptr ? line_ : function;
  nvtxDomainRangePushEx(nvtx_domain(), &attributes);
}

CallTrace::~CallTrace() {
  if (!trace_listened()) return;
  nvtxDomainRangePop(nvtx_domain());
  if (!logging_enabled()) return;
  const char *line = line_ != nullptr ? line_ : function_;
  if (algorithm_ != nullptr)
    std::fprintf(stderr, "fastgemm: %s algo=%s -> %s\n", line, algorithm_, fg_status_name(status_));
  else
    std::fprintf(stderr, "fastgemm: %s -> %s\n", line, fg_status_name(status_));
}

}  // namespace fastgemm::capi
