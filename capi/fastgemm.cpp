// SPDX-License-Identifier: Apache-2.0
// The C ABI: check the handle, make its device current, have calls.hpp check the arguments and hand the
// canonical problem to lib/, turn the Status into an fg_status_t and this thread's last-error message. No
// kernels here, and nothing escapes: every entry point runs its body inside guarded().
#include "fastgemm/fastgemm.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "capi/calls.hpp"
#include "capi/trace.hpp"
#include "capi/validate.hpp"
#include "core/check.hpp"
#include "core/context.hpp"
#include "host/host_gemm.hpp"
#include "rowmean/registry.hpp"
#include "sgemm/registry.hpp"

struct fg_context {
  std::unique_ptr<fastgemm::detail::Context> context;
  fg_rowmean_algo_t last_rowmean_algo = FG_ROWMEAN_AUTO;
  std::unique_ptr<fastgemm::detail::HostGemm> host;  // fg_sgemm_host's state, made on first use
};

namespace fastgemm::capi {
namespace {

using detail::Context;
using detail::StatusCode;

thread_local std::string t_last_message;
thread_local int t_last_cuda_error = 0;

fg_status_t public_status(StatusCode code) {
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

fg_status_t record(const char *function, const Status &status) noexcept {
  if (status.ok()) return FG_STATUS_SUCCESS;
  try {
    t_last_message = std::string(function) + ": " + status.message;
  } catch (...) {
    t_last_message.clear();  // out of host memory even for the message: keep the status at least
  }
  // The error behind this thread's last FG_STATUS_CUDA_ERROR (or NO_DEVICE reported by CUDA): other failures
  // leave it as it is.
  if (status.code == StatusCode::cuda_error || (status.code == StatusCode::no_device && status.cuda_error != 0))
    t_last_cuda_error = status.cuda_error;
  return public_status(status.code);
}

template <typename Body>
fg_status_t guarded(CallTrace &trace, Body &&body) noexcept {
  fg_status_t status = FG_STATUS_INTERNAL_ERROR;
  try {
    status = record(trace.function(), body());
  } catch (const std::bad_alloc &) {
    status = record(trace.function(), Status::failure(StatusCode::alloc_failed, "host memory could not be allocated"));
  } catch (...) {
    status = record(trace.function(), Status::failure(StatusCode::internal_error, "unexpected internal exception"));
  }
  trace.set_status(status);
  return status;
}

Status null_handle() { return Status::failure(StatusCode::invalid_handle, "handle is NULL"); }
Status null_argument(const char *name) {
  return Status::failure(StatusCode::invalid_value, std::string(name) + " is NULL");
}

// What the driver says of a pointer, against the handle's device: through the handle's cache of
// allocations (one single-attribute driver query for an allocation it has seen), no host allocation, and
// the runtime's pending error left as the caller had it.
PointerInspector driver_inspector(Context &context) {
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
      case Memory::host:
      case Memory::managed: info->kind = PointerKind::device_accessible; break;
    }
    info->range_begin = attributes.range_begin;
    info->range_bytes = attributes.range_bytes;
    return Status::success();
  };
}

// Runs `body(context)` with the handle's device current.
template <typename Body>
fg_status_t with_handle(CallTrace &trace, fg_handle_t handle, Body &&body) noexcept {
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    detail::DeviceGuard guard;
    FG_RETURN_IF_ERROR(guard.enter(handle->context->device()));
    if (handle->context->stream() == cudaStreamPerThread)
      detail::wait_for_per_thread_stream_at_exit(handle->context->device());
    return body(*handle->context);
  });
}

// Runs a call that may use the handle's workspace or cuBLAS, and marks where that use ends even when the
// call fails after enqueuing some of its work.
template <typename Run>
Status using_workspace(Context &context, Run &&run) {
  context.begin_call();
  const Status ran = run();
  const Status ended = context.end_call();
  return ran.ok() ? ended : ran;
}

// Algorithm ids: the enums reserve 0..99 for the project's algorithms and 100 for cuBLAS. A value in that
// range that this build does not carry is not supported; any other value is invalid.
bool in_algo_range(int value) { return (value >= 0 && value <= 99) || value == 100; }

template <typename Id, typename Find>
Status check_algo(Id algo, Id auto_id, Find &&find) {
  if (!in_algo_range(static_cast<int>(algo)))
    return Status::failure(StatusCode::invalid_value,
                           "algo = " + std::to_string(static_cast<int>(algo)) + " is no algorithm id");
  if (algo != auto_id && find(algo) == nullptr)
    return Status::failure(StatusCode::not_supported,
                           "algo = " + std::to_string(static_cast<int>(algo)) + " is not in this build");
  return Status::success();
}

// Looked up only for a listener: the trace's arguments are evaluated on every call.
const char *selected_sgemm_algo(fg_handle_t handle) {
  if (!trace_listened()) return "";
  return handle != nullptr ? fg_sgemm_algo_name(handle->context->sgemm_algo) : "-";
}

// The trace of an fg_sgemm-shaped call: its arguments as the caller gave them (strides and batch_count
// for the batched entry point).
CallTrace sgemm_trace(const char *function, fg_handle_t handle, const SgemmArgs &a) {
  if (!a.batched)
    return CallTrace(function,
                     "handle=%p, layout=%d, transa=%d, transb=%d, m=%lld, n=%lld, k=%lld, alpha=%g, A=%p, lda=%lld, "
                     "B=%p, ldb=%lld, beta=%g, C=%p, ldc=%lld, algo=%s",
                     static_cast<void *>(handle), a.layout, a.transa, a.transb, static_cast<long long>(a.m),
                     static_cast<long long>(a.n), static_cast<long long>(a.k), a.alpha, static_cast<const void *>(a.A),
                     static_cast<long long>(a.lda), static_cast<const void *>(a.B), static_cast<long long>(a.ldb),
                     a.beta, static_cast<void *>(a.C), static_cast<long long>(a.ldc), selected_sgemm_algo(handle));
  return CallTrace(function,
                   "handle=%p, layout=%d, transa=%d, transb=%d, m=%lld, n=%lld, k=%lld, alpha=%g, A=%p, lda=%lld, "
                   "stride_a=%lld, B=%p, ldb=%lld, stride_b=%lld, beta=%g, C=%p, ldc=%lld, stride_c=%lld, "
                   "batch_count=%lld, algo=%s",
                   static_cast<void *>(handle), a.layout, a.transa, a.transb, static_cast<long long>(a.m),
                   static_cast<long long>(a.n), static_cast<long long>(a.k), a.alpha, static_cast<const void *>(a.A),
                   static_cast<long long>(a.lda), static_cast<long long>(a.stride_a), static_cast<const void *>(a.B),
                   static_cast<long long>(a.ldb), static_cast<long long>(a.stride_b), a.beta, static_cast<void *>(a.C),
                   static_cast<long long>(a.ldc), static_cast<long long>(a.stride_c),
                   static_cast<long long>(a.batch_count), selected_sgemm_algo(handle));
}

// The problem with the handle's settings that sgemm_call does not carry: what AUTO may choose from.
detail::GemmProblem with_handle_settings(const detail::GemmProblem &problem, const Context &context) {
  detail::GemmProblem settled = problem;
  settled.reproducibility = context.reproducibility;
  return settled;
}

// The problems of fg_sgemm and fg_sgemm_strided_batched: the selected algorithm, or AUTO's choice, on the
// handle's stream.
class DeviceSgemm final : public SgemmRunner {
 public:
  explicit DeviceSgemm(Context &context) : context_(context) {}
  Status scale_c(const detail::GemmProblem &problem) override { return detail::scale_c(problem, context_.stream()); }
  Status product(const detail::GemmProblem &problem, fg_sgemm_algo_t *ran) override {
    const detail::GemmProblem settled = with_handle_settings(problem, context_);
    return using_workspace(context_, [&] { return detail::run_sgemm(settled, context_, context_.sgemm_algo, ran); });
  }

 private:
  Context &context_;
};

fg_status_t sgemm_entry(CallTrace &trace, fg_handle_t handle, const SgemmArgs &args) noexcept {
  return with_handle(trace, handle, [&](Context &context) -> Status {
    DeviceSgemm runner(context);
    fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
    context.last_emulation = detail::EmulationReport{};
    FG_RETURN_IF_ERROR(sgemm_call(args, driver_inspector(context), context.math_mode, runner, &ran));
    context.last_sgemm_algo = ran;
    trace.set_algorithm(fg_sgemm_algo_name(ran));
    return Status::success();
  });
}

bool is_math_mode(int value) { return value == FG_MATH_FP32 || value == FG_MATH_FP32_EMULATED; }

// The setting an environment variable names (by the setting's name function); left as it is when the variable
// is unset; any other value is refused, naming the variable and the settings it may name.
template <typename Setting, size_t Count>
Status setting_from_environment(const char *variable, const Setting (&settings)[Count], const char *(*name)(Setting),
                                const char *what, Setting *out) {
  const char *value = std::getenv(variable);
  if (value == nullptr) return Status::success();
  std::string names;
  for (size_t i = 0; i < Count; ++i) {
    if (std::strcmp(value, name(settings[i])) == 0) {
      *out = settings[i];
      return Status::success();
    }
    names += std::string(i == 0 ? "" : i + 1 == Count ? " or " : ", ") + name(settings[i]);
  }
  return Status::failure(StatusCode::invalid_value, std::string(variable) + " = \"" + std::string(value).substr(0, 64) +
                                                        "\" is no " + what + " (" + names + ")");
}

// FASTGEMM_MATH and FASTGEMM_REPRODUCIBLE, read by each fg_create: unset means the handle's default.
Status math_mode_from_environment(fg_math_mode_t *mode) {
  const fg_math_mode_t modes[] = {FG_MATH_FP32, FG_MATH_FP32_EMULATED};
  return setting_from_environment("FASTGEMM_MATH", modes, fg_math_mode_name, "math mode", mode);
}

Status reproducibility_from_environment(fg_reproducibility_t *level) {
  const fg_reproducibility_t levels[] = {FG_REPRODUCIBLE_RUN, FG_REPRODUCIBLE_SHAPE};
  return setting_from_environment("FASTGEMM_REPRODUCIBLE", levels, fg_reproducibility_name, "reproducibility level",
                                  level);
}

bool is_reproducibility(int value) { return value == FG_REPRODUCIBLE_RUN || value == FG_REPRODUCIBLE_SHAPE; }

detail::HostGemm &host_engine(fg_handle_t handle) {
  if (!handle->host) handle->host = std::make_unique<detail::HostGemm>(*handle->context);
  return *handle->host;
}

// fg_sgemm_host's problems, whose operands may live anywhere: tiles staged onto the devices it spreads over.
class HostSgemm final : public SgemmRunner {
 public:
  HostSgemm(fg_handle_t handle, fg_layout_t layout) : handle_(handle), column_major_(layout == FG_COL_MAJOR) {}
  Status scale_c(const detail::GemmProblem &problem) override {
    fg_sgemm_algo_t none = FG_SGEMM_AUTO;
    return run(problem, false, &none);
  }
  Status product(const detail::GemmProblem &problem, fg_sgemm_algo_t *ran) override { return run(problem, true, ran); }

 private:
  Status run(const detail::GemmProblem &problem, bool product, fg_sgemm_algo_t *ran) {
    Context &context = *handle_->context;
    const detail::HostTileOps ops{detail::run_sgemm, detail::scale_c};
    const detail::GemmProblem settled = with_handle_settings(problem, context);
    return using_workspace(context, [&] {
      return host_engine(handle_).run(settled, product, context.sgemm_algo, ops, ran, column_major_);
    });
  }

  fg_handle_t handle_;
  bool column_major_;
};

// The handle's rowmean problems: the selected algorithm, or AUTO's choice, on the handle's stream.
class DeviceRowmean final : public RowmeanRunner {
 public:
  explicit DeviceRowmean(Context &context) : context_(context) {}
  Status run(const detail::RowmeanProblem &problem, fg_rowmean_algo_t *ran) override {
    return using_workspace(context_,
                           [&] { return detail::run_rowmean(problem, context_, context_.rowmean_algo, ran); });
  }

 private:
  Context &context_;
};

// What the handle's selected algorithms need of a workspace on its device.
class DeviceWorkspaceSizer final : public WorkspaceSizer {
 public:
  explicit DeviceWorkspaceSizer(const Context &context) : context_(context) {}
  Status sgemm_bytes(const detail::GemmProblem &problem, size_t *bytes) override {
    return detail::sgemm_workspace_bytes(with_handle_settings(problem, context_), context_.device(),
                                         context_.sgemm_algo, bytes);
  }
  Status rowmean_bytes(const detail::RowmeanProblem &problem, size_t *bytes) override {
    return detail::rowmean_workspace_bytes(problem, context_.device(), context_.rowmean_algo, bytes);
  }

 private:
  const Context &context_;
};

// The handle's workspace: the caller's memory, or NULL, 0 for one of its own.
class ContextWorkspace final : public WorkspaceHolder {
 public:
  explicit ContextWorkspace(Context &context) : context_(context) {}
  Status set(void *workspace, size_t bytes) override { return context_.set_workspace(workspace, bytes); }

 private:
  Context &context_;
};

}  // namespace
}  // namespace fastgemm::capi

using namespace fastgemm::capi;
using fastgemm::detail::Context;

extern "C" {

int fg_version(void) { return FG_VERSION; }

const char *fg_status_name(fg_status_t status) {
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

const char *fg_status_string(fg_status_t status) {
  switch (status) {
    case FG_STATUS_SUCCESS: return "The call succeeded.";
    case FG_STATUS_INVALID_VALUE: return "An argument is outside its domain.";
    case FG_STATUS_INVALID_HANDLE: return "The handle is NULL.";
    case FG_STATUS_NOT_SUPPORTED: return "The selected algorithm cannot run this problem.";
    case FG_STATUS_NO_DEVICE: return "No usable CUDA device or driver was found.";
    case FG_STATUS_ALLOC_FAILED: return "Memory could not be allocated; nothing was written.";
    case FG_STATUS_CUDA_ERROR: return "A CUDA runtime call failed.";
    case FG_STATUS_CUBLAS_ERROR: return "A cuBLAS call failed.";
    case FG_STATUS_INTERNAL_ERROR: return "An internal error occurred in fastgemm.";
  }
  return "The status value is not one fastgemm defines.";
}

const char *fg_last_error_message(void) { return t_last_message.c_str(); }

int fg_last_cuda_error(void) { return t_last_cuda_error; }

fg_status_t fg_create(fg_handle_t *handle) {
  CallTrace trace("fg_create", "handle=%p", static_cast<void *>(handle));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_argument("handle");
    *handle = nullptr;
    Context *context = nullptr;
    fg_math_mode_t math_mode = FG_MATH_FP32;
    FG_RETURN_IF_ERROR(math_mode_from_environment(&math_mode));
    fg_reproducibility_t reproducibility = FG_REPRODUCIBLE_RUN;
    FG_RETURN_IF_ERROR(reproducibility_from_environment(&reproducibility));
    FG_RETURN_IF_ERROR(Context::create(&context));
    std::unique_ptr<Context> owned(context);
    owned->math_mode = math_mode;
    owned->reproducibility = reproducibility;
    *handle = new fg_context{std::move(owned), FG_ROWMEAN_AUTO, nullptr};
    return Status::success();
  });
}

fg_status_t fg_destroy(fg_handle_t handle) {
  if (handle == nullptr) return FG_STATUS_SUCCESS;
  CallTrace trace("fg_destroy", "handle=%p", static_cast<void *>(handle));
  return with_handle(trace, handle, [&](Context &) -> Status {
    delete handle;
    return Status::success();
  });
}

fg_status_t fg_set_stream(fg_handle_t handle, cudaStream_t stream) {
  CallTrace trace("fg_set_stream", "handle=%p, stream=%p", static_cast<void *>(handle), static_cast<void *>(stream));
  return with_handle(trace, handle, [&](Context &context) { return context.set_stream(stream); });
}

fg_status_t fg_set_workspace(fg_handle_t handle, void *workspace, size_t bytes) {
  CallTrace trace("fg_set_workspace", "handle=%p, workspace=%p, bytes=%zu", static_cast<void *>(handle), workspace,
                  bytes);
  return with_handle(trace, handle, [&](Context &context) -> Status {
    ContextWorkspace holder(context);
    return set_workspace_call(workspace, bytes, driver_inspector(context), holder);
  });
}

fg_status_t fg_sgemm_workspace_size(fg_handle_t handle, fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m,
                                    int64_t n, int64_t k, int64_t batch_count, size_t *bytes) {
  CallTrace trace("fg_sgemm_workspace_size",
                  "handle=%p, layout=%d, transa=%d, transb=%d, m=%lld, n=%lld, k=%lld, batch_count=%lld",
                  static_cast<void *>(handle), layout, transa, transb, static_cast<long long>(m),
                  static_cast<long long>(n), static_cast<long long>(k), static_cast<long long>(batch_count));
  return with_handle(trace, handle, [&](Context &context) -> Status {
    DeviceWorkspaceSizer sizer(context);
    return sgemm_workspace_query(layout, transa, transb, m, n, k, batch_count, context.math_mode, sizer, bytes);
  });
}

fg_status_t fg_rowmean_workspace_size(fg_handle_t handle, fg_dtype_t dtype, int64_t L, int64_t M, int64_t N,
                                      size_t *bytes) {
  CallTrace trace("fg_rowmean_workspace_size", "handle=%p, dtype=%d, L=%lld, M=%lld, N=%lld",
                  static_cast<void *>(handle), dtype, static_cast<long long>(L), static_cast<long long>(M),
                  static_cast<long long>(N));
  return with_handle(trace, handle, [&](Context &context) -> Status {
    DeviceWorkspaceSizer sizer(context);
    return rowmean_workspace_query(dtype, L, M, N, sizer, bytes);
  });
}

fg_status_t fg_get_stream(fg_handle_t handle, cudaStream_t *stream) {
  CallTrace trace("fg_get_stream", "handle=%p", static_cast<void *>(handle));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    if (stream == nullptr) return null_argument("stream");
    *stream = handle->context->stream();
    return Status::success();
  });
}

fg_status_t fg_sgemm(fg_handle_t handle, fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m, int64_t n,
                     int64_t k, float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                     float *C, int64_t ldc) {
  const SgemmArgs args{layout, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1, false};
  CallTrace trace = sgemm_trace("fg_sgemm", handle, args);
  return sgemm_entry(trace, handle, args);
}

fg_status_t fg_sgemm_strided_batched(fg_handle_t handle, fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m,
                                     int64_t n, int64_t k, float alpha, const float *A, int64_t lda, int64_t stride_a,
                                     const float *B, int64_t ldb, int64_t stride_b, float beta, float *C, int64_t ldc,
                                     int64_t stride_c, int64_t batch_count) {
  const SgemmArgs args{layout, transa, transb,   m,    n, k,   alpha,    A,           lda, stride_a,
                       B,      ldb,    stride_b, beta, C, ldc, stride_c, batch_count, true};
  CallTrace trace = sgemm_trace("fg_sgemm_strided_batched", handle, args);
  return sgemm_entry(trace, handle, args);
}

fg_status_t fg_sgemm_host(fg_handle_t handle, fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m, int64_t n,
                          int64_t k, float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                          float *C, int64_t ldc) {
  const SgemmArgs args{layout, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1, false};
  CallTrace trace = sgemm_trace("fg_sgemm_host", handle, args);
  return with_handle(trace, handle, [&](Context &context) -> Status {
    HostSgemm runner(handle, layout);
    fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
    const Status status = sgemm_call(args, any_pointer_is_device_memory, context.math_mode, runner, &ran);
    // Its tiles' products may run on the handle's context: none of them is the call's report.
    context.last_emulation = fastgemm::detail::EmulationReport{};
    FG_RETURN_IF_ERROR(status);
    context.last_sgemm_algo = ran;
    trace.set_algorithm(fg_sgemm_algo_name(ran));
    return Status::success();
  });
}

fg_status_t fg_set_devices(fg_handle_t handle, const int *devices, int count) {
  CallTrace trace("fg_set_devices", "handle=%p, devices=%p, count=%d", static_cast<void *>(handle),
                  static_cast<const void *>(devices), count);
  return with_handle(trace, handle, [&](Context &) { return host_engine(handle).set_devices(devices, count); });
}

fg_status_t fg_get_devices(fg_handle_t handle, int *devices, int capacity, int *count) {
  CallTrace trace("fg_get_devices", "handle=%p, devices=%p, capacity=%d", static_cast<void *>(handle),
                  static_cast<void *>(devices), capacity);
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    if (count == nullptr) return null_argument("count");
    if (capacity < 0)
      return Status::failure(StatusCode::invalid_value, "capacity = " + std::to_string(capacity) + " must be >= 0");
    if (capacity > 0 && devices == nullptr) return null_argument("devices (with capacity > 0)");
    const std::vector<int> &list = host_engine(handle).devices();
    const int listed = static_cast<int>(list.size());
    for (int i = 0; i < listed && i < capacity; ++i) devices[i] = list[i];
    *count = listed;
    return Status::success();
  });
}

fg_status_t fg_set_math_mode(fg_handle_t handle, fg_math_mode_t mode) {
  CallTrace trace("fg_set_math_mode", "handle=%p, mode=%d", static_cast<void *>(handle), static_cast<int>(mode));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    if (!is_math_mode(static_cast<int>(mode)))
      return Status::failure(StatusCode::invalid_value,
                             "mode = " + std::to_string(static_cast<int>(mode)) + " is no fg_math_mode_t");
    handle->context->math_mode = mode;
    return Status::success();
  });
}

fg_status_t fg_get_math_mode(fg_handle_t handle, fg_math_mode_t *mode) {
  CallTrace trace("fg_get_math_mode", "handle=%p", static_cast<void *>(handle));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    if (mode == nullptr) return null_argument("mode");
    *mode = handle->context->math_mode;
    return Status::success();
  });
}

const char *fg_math_mode_name(fg_math_mode_t mode) {
  switch (mode) {
    case FG_MATH_FP32: return "fp32";
    case FG_MATH_FP32_EMULATED: return "fp32_emulated";
  }
  return "unknown";
}

fg_status_t fg_set_reproducibility(fg_handle_t handle, fg_reproducibility_t level) {
  CallTrace trace("fg_set_reproducibility", "handle=%p, level=%d", static_cast<void *>(handle),
                  static_cast<int>(level));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    if (!is_reproducibility(static_cast<int>(level)))
      return Status::failure(StatusCode::invalid_value,
                             "level = " + std::to_string(static_cast<int>(level)) + " is no fg_reproducibility_t");
    handle->context->reproducibility = level;
    return Status::success();
  });
}

fg_status_t fg_get_reproducibility(fg_handle_t handle, fg_reproducibility_t *level) {
  CallTrace trace("fg_get_reproducibility", "handle=%p", static_cast<void *>(handle));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    if (level == nullptr) return null_argument("level");
    *level = handle->context->reproducibility;
    return Status::success();
  });
}

const char *fg_reproducibility_name(fg_reproducibility_t level) {
  switch (level) {
    case FG_REPRODUCIBLE_RUN: return "run";
    case FG_REPRODUCIBLE_SHAPE: return "shape";
  }
  return "unknown";
}

fg_status_t fg_set_sgemm_algo(fg_handle_t handle, fg_sgemm_algo_t algo) {
  CallTrace trace("fg_set_sgemm_algo", "handle=%p, algo=%d", static_cast<void *>(handle), static_cast<int>(algo));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    FG_RETURN_IF_ERROR(check_algo(algo, FG_SGEMM_AUTO, fastgemm::detail::find_sgemm_variant));
    handle->context->sgemm_algo = algo;
    return Status::success();
  });
}

fg_status_t fg_get_sgemm_algo(fg_handle_t handle, fg_sgemm_algo_t *algo) {
  CallTrace trace("fg_get_sgemm_algo", "handle=%p", static_cast<void *>(handle));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    if (algo == nullptr) return null_argument("algo");
    *algo = handle->context->sgemm_algo;
    return Status::success();
  });
}

fg_status_t fg_get_last_sgemm_algo(fg_handle_t handle, fg_sgemm_algo_t *algo) {
  CallTrace trace("fg_get_last_sgemm_algo", "handle=%p", static_cast<void *>(handle));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    if (algo == nullptr) return null_argument("algo");
    *algo = handle->context->last_sgemm_algo;
    return Status::success();
  });
}

fg_status_t fg_get_last_sgemm_emulation(fg_handle_t handle, int *moduli, int64_t *fp32_elements) {
  CallTrace trace("fg_get_last_sgemm_emulation", "handle=%p", static_cast<void *>(handle));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    if (moduli == nullptr) return null_argument("moduli");
    if (fp32_elements == nullptr) return null_argument("fp32_elements");
    *moduli = handle->context->last_emulation.moduli;
    *fp32_elements = handle->context->last_emulation.fp32_elements;
    return Status::success();
  });
}

const char *fg_sgemm_algo_name(fg_sgemm_algo_t algo) {
  if (algo == FG_SGEMM_AUTO) return "auto";
  const auto *variant = fastgemm::detail::find_sgemm_variant(algo);
  return variant != nullptr ? variant->name : "unknown";
}

fg_status_t fg_rowmean_matvec(fg_handle_t handle, fg_dtype_t dtype, const void *input, const void *matrix, void *output,
                              int64_t L, int64_t M, int64_t N) {
  CallTrace trace(
      "fg_rowmean_matvec", "handle=%p, dtype=%d, input=%p, matrix=%p, output=%p, L=%lld, M=%lld, N=%lld, algo=%s",
      static_cast<void *>(handle), dtype, input, matrix, output, static_cast<long long>(L), static_cast<long long>(M),
      static_cast<long long>(N), handle != nullptr ? fg_rowmean_algo_name(handle->context->rowmean_algo) : "-");
  return with_handle(trace, handle, [&](Context &context) -> Status {
    DeviceRowmean runner(context);
    fg_rowmean_algo_t ran = FG_ROWMEAN_AUTO;
    FG_RETURN_IF_ERROR(
        rowmean_call(RowmeanArgs{dtype, input, matrix, output, L, M, N}, driver_inspector(context), runner, &ran));
    handle->last_rowmean_algo = ran;
    trace.set_algorithm(fg_rowmean_algo_name(ran));
    return Status::success();
  });
}

fg_status_t fg_set_rowmean_algo(fg_handle_t handle, fg_rowmean_algo_t algo) {
  CallTrace trace("fg_set_rowmean_algo", "handle=%p, algo=%d", static_cast<void *>(handle), static_cast<int>(algo));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    FG_RETURN_IF_ERROR(check_algo(algo, FG_ROWMEAN_AUTO, fastgemm::detail::find_rowmean_variant));
    handle->context->rowmean_algo = algo;
    return Status::success();
  });
}

fg_status_t fg_get_rowmean_algo(fg_handle_t handle, fg_rowmean_algo_t *algo) {
  CallTrace trace("fg_get_rowmean_algo", "handle=%p", static_cast<void *>(handle));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    if (algo == nullptr) return null_argument("algo");
    *algo = handle->context->rowmean_algo;
    return Status::success();
  });
}

fg_status_t fg_get_last_rowmean_algo(fg_handle_t handle, fg_rowmean_algo_t *algo) {
  CallTrace trace("fg_get_last_rowmean_algo", "handle=%p", static_cast<void *>(handle));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    if (algo == nullptr) return null_argument("algo");
    *algo = handle->last_rowmean_algo;
    return Status::success();
  });
}

const char *fg_rowmean_algo_name(fg_rowmean_algo_t algo) {
  if (algo == FG_ROWMEAN_AUTO) return "auto";
  const auto *variant = fastgemm::detail::find_rowmean_variant(algo);
  return variant != nullptr ? variant->name : "unknown";
}

}  // extern "C"
