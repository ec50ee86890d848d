// SPDX-License-Identifier: Apache-2.0
#include "capi/entry.hpp"

#include <string>

#include "capi/statuses.hpp"
#include "capi/thread_text.hpp"

namespace fastgemm::capi {
namespace {

using detail::StatusCode;

thread_local bool t_last_message_gone = false;
thread_local ThreadText t_last_message(&t_last_message_gone);
thread_local int t_last_cuda_error = 0;

}  // namespace

fg_status_t record(const char *function, const Status &status) noexcept {
  if (status.ok()) return FG_STATUS_SUCCESS;
  if (std::string *message = ThreadText::of(t_last_message, t_last_message_gone))
    record_message(message, function, status.message);
  // The error behind this thread's last FG_STATUS_CUDA_ERROR (or NO_DEVICE reported by CUDA): other failures
  // leave it as it is.
  if (status.code == StatusCode::cuda_error || (status.code == StatusCode::no_device && status.cuda_error != 0))
    t_last_cuda_error = status.cuda_error;
  return public_status(status.code);
}

const char *last_error_message() noexcept {
  const std::string *message = ThreadText::of(t_last_message, t_last_message_gone);
  return message != nullptr ? message->c_str() : "";
}

int last_cuda_error() noexcept { return t_last_cuda_error; }

Status null_handle() { return Status::failure(StatusCode::invalid_handle, "handle is NULL"); }

PointerInspector driver_inspector(detail::Context &context) {
  return [&context](const void *pointer, PointerInfo *info) -> Status {
    const int device = context.device().ordinal;
    detail::PointerAttributes attributes;
    FG_RETURN_IF_ERROR(context.query_pointer(pointer, &attributes));
    using Memory = detail::PointerAttributes::Memory;
    switch (attributes.memory) {
      case Memory::unknown: info->kind = PointerKind::pageable_host; break;
      case Memory::device:
        info->kind = attributes.device == device ? PointerKind::device_accessible : PointerKind::other_device;
        break;
      case Memory::host: info->kind = PointerKind::pinned_host; break;
      case Memory::managed: info->kind = PointerKind::device_accessible; break;
    }
    info->range_begin = attributes.range_begin;
    info->range_bytes = attributes.range_bytes;
    return Status::success();
  };
}

PointerInspector host_inspector(detail::Context &context) {
  return [&context](const void *pointer, PointerInfo *info) -> Status {
    detail::PointerAttributes attributes;
    FG_RETURN_IF_ERROR(context.query_pointer(pointer, &attributes));
    info->kind = PointerKind::device_accessible;
    if (attributes.memory != detail::PointerAttributes::Memory::unknown) {
      info->range_begin = attributes.range_begin;
      info->range_bytes = attributes.range_bytes;
    }
    return Status::success();
  };
}

detail::HostGemm<float> &host_engine(fg_context &handle) {
  if (!handle.host) handle.host = std::make_unique<detail::HostGemm<float>>(*handle.context);
  return *handle.host;
}

}  // namespace fastgemm::capi
