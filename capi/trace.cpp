#include "capi/trace.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <nvtx3/nvToolsExt.h>

namespace fastgemm::capi {
namespace {

bool logging_enabled() {
  static const bool enabled = [] {
    const char *value = std::getenv("FASTGEMM_LOG");
    return value != nullptr && std::strcmp(value, "1") == 0;
  }();
  return enabled;
}

nvtxDomainHandle_t nvtx_domain() {
  static const nvtxDomainHandle_t domain = nvtxDomainCreateA("fastgemm");
  return domain;
}

}  // namespace

CallTrace::CallTrace(const char *function, const char *format, ...) noexcept : function_(function) {
  int used = std::snprintf(arguments_, sizeof arguments_, "%s(", function);
  va_list arguments;
  va_start(arguments, format);
  if (used > 0 && static_cast<size_t>(used) < sizeof arguments_)
    used += std::vsnprintf(arguments_ + used, sizeof arguments_ - used, format, arguments);
  va_end(arguments);
  if (used > 0 && static_cast<size_t>(used) + 1 < sizeof arguments_) std::strcat(arguments_, ")");
  nvtxEventAttributes_t attributes = {};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = arguments_;
  nvtxDomainRangePushEx(nvtx_domain(), &attributes);
}

CallTrace::~CallTrace() {
  nvtxDomainRangePop(nvtx_domain());
  if (!logging_enabled()) return;
  if (algorithm_ != nullptr)
    std::fprintf(stderr, "fastgemm: %s algo=%s -> %s\n", arguments_, algorithm_, fg_status_name(status_));
  else
    std::fprintf(stderr, "fastgemm: %s -> %s\n", arguments_, fg_status_name(status_));
}

}  // namespace fastgemm::capi
