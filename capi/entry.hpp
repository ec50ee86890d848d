// SPDX-License-Identifier: Apache-2.0
// What every entry point of the C ABI shares: the guard that turns a Status (or an exception) into an
// fg_status_t and this thread's last-error message, the handle check that makes the handle's device current,
// and the pointer inspector over the driver.
#pragma once

#include <new>

#include "capi/handle.hpp"
#include "capi/trace.hpp"
#include "capi/validate.hpp"
#include "core/device.hpp"
#include "core/status.hpp"
#include "fastgemm/fastgemm.h"

namespace fastgemm::capi {

// Records a failure as this thread's last error (the message prefixed with `function`, and its cudaError_t), and
// returns its fg_status_t.
fg_status_t record(const char *function, const Status &status) noexcept;
const char *last_error_message() noexcept;
int last_cuda_error() noexcept;

Status null_handle();

// Runs `body()`, which returns a Status, and nothing escapes: exceptions become statuses too.
template <typename Body>
fg_status_t guarded(CallTrace &trace, Body &&body) noexcept {
  fg_status_t status = FG_STATUS_INTERNAL_ERROR;
  try {
    status = record(trace.function(), body());
  } catch (const std::bad_alloc &) {
    status = record(trace.function(),
                    Status::failure(detail::StatusCode::alloc_failed, "host memory could not be allocated"));
  } catch (...) {
    status =
        record(trace.function(), Status::failure(detail::StatusCode::internal_error, "unexpected internal exception"));
  }
  trace.set_status(status);
  return status;
}

// Runs `body(*handle)` with the handle's device current.
template <typename Body>
fg_status_t with_handle(CallTrace &trace, fg_handle_t handle, Body &&body) noexcept {
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    detail::DeviceGuard guard;
    FG_RETURN_IF_ERROR(guard.enter(handle->context->device()));
    if (handle->context->stream() == cudaStreamPerThread)
      detail::wait_for_per_thread_stream_at_exit(handle->context->device());
    return body(*handle);
  });
}

// What the driver says of a pointer, against the handle's device: through the handle's cache of
// allocations (one single-attribute driver query for an allocation it has seen), no host allocation, and
// the runtime's pending error left as the caller had it.
PointerInspector driver_inspector(detail::Context &context);

// What the driver says of fg_sgemm_host's operands, which may live anywhere: every pointer is accepted, and
// one in an allocation the driver records (device memory of any device, pinned or managed memory) must hold
// every element the call reaches, as fg_sgemm's operands must. Pageable memory, which the driver does not
// know, is checked by the host engine against the process's mappings.
PointerInspector host_inspector(detail::Context &context);

// fg_sgemm_host's engine, made on first use.
detail::HostGemm<float> &host_engine(fg_context &handle);

}  // namespace fastgemm::capi
