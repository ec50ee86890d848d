// The C ABI: check the handle and the arguments, canonicalize, call lib/, turn its Status into an
// fg_status_t and this thread's last-error message. No kernels here, and nothing escapes: every entry
// point runs its body inside guarded().
#include "fastgemm/fastgemm.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

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
    case StatusCode::internal_error: return FG_STATUS_INTERNAL_ERROR;
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

// A size query answers for any pointer alignment, so it asks the algorithm about each alignment in turn:
// the answer is the most bytes among the alignments the algorithm runs, and a refusal only when it runs
// none of them.
class WorkspaceAnswer {
 public:
  // Takes one alignment's answer; an error other than a refusal ends the query.
  Status take(const Status &status, size_t needed) {
    asked_ = true;
    if (status.ok()) {
      runs_any_ = true;
      most_ = needed > most_ ? needed : most_;
      return Status::success();
    }
    if (status.code != StatusCode::not_supported) return status;
    if (refusal_.ok()) refusal_ = status;
    return Status::success();
  }
  // No alignment asked about means no work: nothing needed.
  Status give(size_t *bytes) const {
    if (asked_ && !runs_any_) return refusal_;
    *bytes = most_;
    return Status::success();
  }

 private:
  bool asked_ = false, runs_any_ = false;
  size_t most_ = 0;
  Status refusal_ = Status::success();
};

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

// For the workspace queries: every pointer is device memory of no known extent.
Status any_pointer_is_device_memory(const void *, PointerInfo *info) {
  info->kind = PointerKind::device_accessible;
  return Status::success();
}

// Addresses far apart, for the problems the queries build: an operand's alignment is `offset` past 256 bytes.
template <typename T>
T *query_address(int which, uintptr_t offset) {
  return reinterpret_cast<T *>((static_cast<uintptr_t>(which) << 60) + offset);
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

fg_status_t sgemm_entry(CallTrace &trace, fg_handle_t handle, const SgemmArgs &args) noexcept {
  return with_handle(trace, handle, [&](Context &context) -> Status {
    detail::GemmProblem problem;
    GemmWork work = GemmWork::nothing;
    FG_RETURN_IF_ERROR(validate_sgemm(args, driver_inspector(context), &problem, &work));
    problem.math = context.math_mode;
    fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
    if (work == GemmWork::scale_c) FG_RETURN_IF_ERROR(detail::scale_c(problem, context.stream()));
    if (work == GemmWork::product)
      FG_RETURN_IF_ERROR(
          using_workspace(context, [&] { return detail::run_sgemm(problem, context, context.sgemm_algo, &ran); }));
    context.last_sgemm_algo = ran;
    trace.set_algorithm(fg_sgemm_algo_name(ran));
    return Status::success();
  });
}

bool is_math_mode(int value) { return value == FG_MATH_FP32 || value == FG_MATH_FP32_EMULATED; }

// FASTGEMM_MATH, read by each fg_create: unset means FG_MATH_FP32; anything but a mode's name is refused.
Status math_mode_from_environment(fg_math_mode_t *mode) {
  const char *value = std::getenv("FASTGEMM_MATH");
  if (value == nullptr) return Status::success();
  for (fg_math_mode_t candidate : {FG_MATH_FP32, FG_MATH_FP32_EMULATED})
    if (std::strcmp(value, fg_math_mode_name(candidate)) == 0) {
      *mode = candidate;
      return Status::success();
    }
  return Status::failure(StatusCode::invalid_value, "FASTGEMM_MATH = \"" + std::string(value).substr(0, 64) +
                                                        "\" is no math mode (fp32 or fp32_emulated)");
}

detail::HostGemm &host_engine(fg_handle_t handle) {
  if (!handle->host) handle->host = std::make_unique<detail::HostGemm>(*handle->context);
  return *handle->host;
}

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
    FG_RETURN_IF_ERROR(Context::create(&context));
    std::unique_ptr<Context> owned(context);
    owned->math_mode = math_mode;
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
    FG_RETURN_IF_ERROR(validate_workspace(workspace, bytes, driver_inspector(context)));
    return context.set_workspace(workspace, bytes);
  });
}

fg_status_t fg_sgemm_workspace_size(fg_handle_t handle, fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m,
                                    int64_t n, int64_t k, int64_t batch_count, size_t *bytes) {
  CallTrace trace("fg_sgemm_workspace_size",
                  "handle=%p, layout=%d, transa=%d, transb=%d, m=%lld, n=%lld, k=%lld, batch_count=%lld",
                  static_cast<void *>(handle), layout, transa, transb, static_cast<long long>(m),
                  static_cast<long long>(n), static_cast<long long>(k), static_cast<long long>(batch_count));
  return with_handle(trace, handle, [&](Context &context) -> Status {
    if (bytes == nullptr) return null_argument("bytes");
    const bool row = layout == FG_ROW_MAJOR, a_n = transa == FG_OP_N, b_n = transb == FG_OP_N;
    // The smallest leading dimensions, then those rounded up to 4 floats, with operands 256-byte aligned and
    // 4 bytes past: the most that any of them needs.
    WorkspaceAnswer answer;
    for (int64_t round : {1, 4})
      for (uintptr_t offset : {0, 4}) {
        const auto ld = [round](int64_t length) { return ((length > 1 ? length : 1) + round - 1) / round * round; };
        const int64_t lda = ld(row == a_n ? k : m), ldb = ld(row == b_n ? n : k), ldc = ld(row ? n : m);
        const int64_t a_lines = row == a_n ? m : k, b_lines = row == b_n ? k : n, c_lines = row ? m : n;
        SgemmArgs args{layout,
                       transa,
                       transb,
                       m,
                       n,
                       k,
                       1.0f,
                       query_address<const float>(1, offset),
                       lda,
                       0,
                       query_address<const float>(2, offset),
                       ldb,
                       0,
                       0.0f,
                       query_address<float>(3, offset),
                       ldc,
                       0,
                       batch_count,
                       true};
        // Dense batches; a size that overflows is the validator's to name.
        if (__builtin_mul_overflow(a_lines, lda, &args.stride_a) ||
            __builtin_mul_overflow(b_lines, ldb, &args.stride_b) ||
            __builtin_mul_overflow(c_lines, ldc, &args.stride_c))
          args.stride_a = args.stride_b = args.stride_c = INT64_MAX;
        fastgemm::detail::GemmProblem problem;
        GemmWork work = GemmWork::nothing;
        FG_RETURN_IF_ERROR(validate_sgemm(args, any_pointer_is_device_memory, &problem, &work));
        if (work != GemmWork::product) continue;
        problem.math = context.math_mode;
        size_t needed = 0;
        const Status status =
            fastgemm::detail::sgemm_workspace_bytes(problem, context.device(), context.sgemm_algo, &needed);
        FG_RETURN_IF_ERROR(answer.take(status, needed));
      }
    return answer.give(bytes);
  });
}

fg_status_t fg_rowmean_workspace_size(fg_handle_t handle, fg_dtype_t dtype, int64_t L, int64_t M, int64_t N,
                                      size_t *bytes) {
  CallTrace trace("fg_rowmean_workspace_size", "handle=%p, dtype=%d, L=%lld, M=%lld, N=%lld",
                  static_cast<void *>(handle), dtype, static_cast<long long>(L), static_cast<long long>(M),
                  static_cast<long long>(N));
  return with_handle(trace, handle, [&](Context &context) -> Status {
    if (bytes == nullptr) return null_argument("bytes");
    WorkspaceAnswer answer;
    const uintptr_t element = dtype == FG_F64 ? 8 : 4;
    for (uintptr_t offset : {uintptr_t{0}, element}) {
      fastgemm::detail::RowmeanProblem problem;
      bool empty = true;
      FG_RETURN_IF_ERROR(
          validate_rowmean(RowmeanArgs{dtype, query_address<const void>(1, offset),
                                       query_address<const void>(2, offset), query_address<void>(3, offset), L, M, N},
                           any_pointer_is_device_memory, &problem, &empty));
      if (empty) continue;
      size_t needed = 0;
      const Status status =
          fastgemm::detail::rowmean_workspace_bytes(problem, context.device(), context.rowmean_algo, &needed);
      FG_RETURN_IF_ERROR(answer.take(status, needed));
    }
    return answer.give(bytes);
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
    fastgemm::detail::GemmProblem problem;
    GemmWork work = GemmWork::nothing;
    FG_RETURN_IF_ERROR(validate_sgemm(args, any_pointer_is_device_memory, &problem, &work));
    problem.math = context.math_mode;
    fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
    if (work != GemmWork::nothing) {
      const fastgemm::detail::HostTileOps ops{fastgemm::detail::run_sgemm, fastgemm::detail::scale_c};
      FG_RETURN_IF_ERROR(using_workspace(context, [&] {
        return host_engine(handle).run(problem, work == GemmWork::product, context.sgemm_algo, ops, &ran);
      }));
    }
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
    fastgemm::detail::RowmeanProblem problem;
    bool empty = true;
    FG_RETURN_IF_ERROR(validate_rowmean(RowmeanArgs{dtype, input, matrix, output, L, M, N}, driver_inspector(context),
                                        &problem, &empty));
    fg_rowmean_algo_t ran = FG_ROWMEAN_AUTO;
    if (!empty)
      FG_RETURN_IF_ERROR(using_workspace(
          context, [&] { return fastgemm::detail::run_rowmean(problem, context, context.rowmean_algo, &ran); }));
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
