// SPDX-License-Identifier: Apache-2.0
// The C ABI's operations: fg_sgemm, fg_sgemm_strided_batched, fg_sgemm_host and fg_rowmean_matvec, their
// workspace queries and the fg_get_last_* reports. Each entry point has calls.hpp check its arguments into a
// plan, then dispatches the plan: to lib/'s registries on the handle's stream, or to fg_sgemm_host's engine.
#include "fastgemm/fastgemm.h"

#include "capi/calls.hpp"
#include "capi/entry.hpp"
#include "capi/handle.hpp"
#include "capi/trace.hpp"
#include "capi/validate.hpp"
#include "core/check.hpp"
#include "core/context.hpp"
#include "host/host_gemm.hpp"
#include "rowmean/registry.hpp"
#include "sgemm/registry.hpp"

namespace fastgemm::capi {
namespace {

using detail::Context;
using detail::StatusCode;
using detail::using_workspace;

// Looked up only for a listener: the trace's arguments are evaluated on every call.
const char *selected_sgemm_algo(fg_handle_t handle) {
  if (!trace_listened()) return "";
  return handle != nullptr ? fg_sgemm_algo_name(handle->settings.sgemm_algo) : "-";
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

// The arguments of fg_sgemm and fg_sgemm_host, named; the batched entry point adds its strides and count.
SgemmArgs product_args(fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m, int64_t n, int64_t k, float alpha,
                       const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  SgemmArgs args;
  args.layout = layout, args.transa = transa, args.transb = transb;
  args.m = m, args.n = n, args.k = k;
  args.alpha = alpha, args.beta = beta;
  args.A = A, args.lda = lda;
  args.B = B, args.ldb = ldb;
  args.C = C, args.ldc = ldc;
  return args;
}

SgemmSettings sgemm_settings(const HandleSettings &settings) {
  SgemmSettings sgemm;
  sgemm.math = settings.math_mode;
  sgemm.reproducibility = settings.reproducibility;
  sgemm.algo = settings.sgemm_algo;
  return sgemm;
}

// An sgemm plan on the handle's stream: C := beta * C, or the product with the plan's algorithm, AUTO's choice
// within the handle's workspace. *ran: the product's algorithm, FG_SGEMM_AUTO when no product ran.
Status run_on_device(const SgemmPlan &plan, fg_context &handle, fg_sgemm_algo_t *ran) {
  Context &context = *handle.context;
  switch (plan.work) {
    case GemmWork::nothing: return Status::success();
    case GemmWork::scale_c: return detail::scale_c(plan.problem, context.stream());
    case GemmWork::product:
      return using_workspace(
          context, [&] { return detail::run_sgemm(plan.problem, context, plan.algo, &handle.last.emulation, ran); });
  }
  return Status::failure(StatusCode::internal_error, "an sgemm plan of no known kind");
}

// An sgemm plan over operands that may live anywhere: fg_sgemm_host's engine stages tiles onto its devices.
// `column_major` is the caller's layout, which names the operands in its errors.
Status run_on_host(const SgemmPlan &plan, fg_context &handle, bool column_major, fg_sgemm_algo_t *ran) {
  if (plan.work == GemmWork::nothing) return Status::success();
  const auto step_workspace = [](const detail::GemmProblem &step, const Context &context, fg_sgemm_algo_t algo,
                                 size_t *bytes) {
    return detail::sgemm_workspace_bytes(step, context.device(), algo, bytes);
  };
  const detail::HostTileOps<float> ops{detail::run_sgemm, detail::scale_c, step_workspace};
  const bool product = plan.work == GemmWork::product;
  fg_sgemm_algo_t scaled = FG_SGEMM_AUTO;
  return using_workspace(*handle.context, [&] {
    return host_engine(handle).run(plan.problem, product, plan.algo, ops, product ? ran : &scaled, column_major);
  });
}

// Reads what the device chose for a call that chose there, once it has (waiting for the call's work), into the
// report's moduli count and FP32 elements.
Status settle(detail::EmulationReport *report) {
  if (report->pending == nullptr) return Status::success();
  FG_CUDA_CHECK(cudaEventSynchronize(report->done));
  const volatile detail::DeviceChoice *choice = report->pending;
  report->moduli = choice->moduli;
  report->fp32_elements = choice->fp32_elements;
  report->pending = nullptr;
  return Status::success();
}

// fg_sgemm and fg_sgemm_strided_batched.
fg_status_t sgemm_entry(CallTrace &trace, fg_handle_t handle, const SgemmArgs &args) noexcept {
  return with_handle(trace, handle, [&](fg_context &h) -> Status {
    h.last.emulation = detail::EmulationReport{};
    SgemmPlan plan;
    FG_RETURN_IF_ERROR(sgemm_call(args, driver_inspector(*h.context), sgemm_settings(h.settings), &plan));
    fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
    const Status run = run_on_device(plan, h, &ran);
    if (!run.ok()) h.last.emulation = detail::EmulationReport{};
    FG_RETURN_IF_ERROR(run);
    h.last.sgemm_algo = ran;
    h.last.sgemm_choice = h.last.emulation;
    trace.set_algorithm(fg_sgemm_algo_name(ran));
    return Status::success();
  });
}

// What the handle's selected algorithms need of a workspace on its device.
class DeviceWorkspaceSizer final : public WorkspaceSizer {
 public:
  explicit DeviceWorkspaceSizer(const fg_context &handle) : handle_(handle) {}
  Status sgemm_bytes(const detail::GemmProblem &problem, size_t *bytes) override {
    return detail::sgemm_workspace_bytes(problem, handle_.context->device(), handle_.settings.sgemm_algo, bytes);
  }
  Status rowmean_bytes(const detail::RowmeanProblem &problem, size_t *bytes) override {
    return detail::rowmean_workspace_bytes(problem, handle_.context->device(), handle_.settings.rowmean_algo, bytes);
  }

 private:
  const fg_context &handle_;
};

}  // namespace
}  // namespace fastgemm::capi

using namespace fastgemm;
using namespace fastgemm::capi;
using fastgemm::detail::Context;

extern "C" {

fg_status_t fg_sgemm(fg_handle_t handle, fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m, int64_t n,
                     int64_t k, float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                     float *C, int64_t ldc) {
  const SgemmArgs args = product_args(layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  CallTrace trace = sgemm_trace("fg_sgemm", handle, args);
  return sgemm_entry(trace, handle, args);
}

fg_status_t fg_sgemm_strided_batched(fg_handle_t handle, fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m,
                                     int64_t n, int64_t k, float alpha, const float *A, int64_t lda, int64_t stride_a,
                                     const float *B, int64_t ldb, int64_t stride_b, float beta, float *C, int64_t ldc,
                                     int64_t stride_c, int64_t batch_count) {
  SgemmArgs args = product_args(layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  args.stride_a = stride_a, args.stride_b = stride_b, args.stride_c = stride_c;
  args.batch_count = batch_count;
  args.batched = true;
  CallTrace trace = sgemm_trace("fg_sgemm_strided_batched", handle, args);
  return sgemm_entry(trace, handle, args);
}

fg_status_t fg_sgemm_host(fg_handle_t handle, fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m, int64_t n,
                          int64_t k, float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                          float *C, int64_t ldc) {
  const SgemmArgs args = product_args(layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  CallTrace trace = sgemm_trace("fg_sgemm_host", handle, args);
  return with_handle(trace, handle, [&](fg_context &h) -> Status {
    // Its tiles' products report no emulation: none of them is the call's.
    h.last.emulation = detail::EmulationReport{};
    SgemmPlan plan;
    FG_RETURN_IF_ERROR(sgemm_call(args, host_inspector(*h.context), sgemm_settings(h.settings), &plan));
    fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
    FG_RETURN_IF_ERROR(run_on_host(plan, h, layout == FG_COL_MAJOR, &ran));
    h.last.sgemm_algo = ran;
    h.last.sgemm_choice = detail::EmulationReport{};
    trace.set_algorithm(fg_sgemm_algo_name(ran));
    return Status::success();
  });
}

fg_status_t fg_get_last_sgemm_algo(fg_handle_t handle, fg_sgemm_algo_t *algo) {
  CallTrace trace("fg_get_last_sgemm_algo", "handle=%p", static_cast<void *>(handle));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    if (algo == nullptr) return null_argument("algo");
    detail::EmulationReport &choice = handle->last.sgemm_choice;
    if (choice.pending != nullptr) {
      FG_RETURN_IF_ERROR(settle(&choice));
      if (choice.moduli == 0) handle->last.sgemm_algo = choice.fallback;
    }
    *algo = handle->last.sgemm_algo;
    return Status::success();
  });
}

fg_status_t fg_get_last_sgemm_emulation(fg_handle_t handle, int *moduli, int64_t *fp32_elements) {
  CallTrace trace("fg_get_last_sgemm_emulation", "handle=%p", static_cast<void *>(handle));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    if (moduli == nullptr) return null_argument("moduli");
    if (fp32_elements == nullptr) return null_argument("fp32_elements");
    FG_RETURN_IF_ERROR(settle(&handle->last.emulation));
    *moduli = handle->last.emulation.moduli;
    *fp32_elements = handle->last.emulation.fp32_elements;
    return Status::success();
  });
}

fg_status_t fg_sgemm_workspace_size(fg_handle_t handle, fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m,
                                    int64_t n, int64_t k, int64_t batch_count, size_t *bytes) {
  CallTrace trace("fg_sgemm_workspace_size",
                  "handle=%p, layout=%d, transa=%d, transb=%d, m=%lld, n=%lld, k=%lld, batch_count=%lld",
                  static_cast<void *>(handle), layout, transa, transb, static_cast<long long>(m),
                  static_cast<long long>(n), static_cast<long long>(k), static_cast<long long>(batch_count));
  return with_handle(trace, handle, [&](fg_context &h) -> Status {
    DeviceWorkspaceSizer sizer(h);
    return sgemm_workspace_query(layout, transa, transb, m, n, k, batch_count, sgemm_settings(h.settings), sizer,
                                 bytes);
  });
}

fg_status_t fg_rowmean_matvec(fg_handle_t handle, fg_dtype_t dtype, const void *input, const void *matrix, void *output,
                              int64_t L, int64_t M, int64_t N) {
  CallTrace trace(
      "fg_rowmean_matvec", "handle=%p, dtype=%d, input=%p, matrix=%p, output=%p, L=%lld, M=%lld, N=%lld, algo=%s",
      static_cast<void *>(handle), dtype, input, matrix, output, static_cast<long long>(L), static_cast<long long>(M),
      static_cast<long long>(N), handle != nullptr ? fg_rowmean_algo_name(handle->settings.rowmean_algo) : "-");
  return with_handle(trace, handle, [&](fg_context &h) -> Status {
    RowmeanArgs args;
    args.dtype = dtype;
    args.input = input, args.matrix = matrix, args.output = output;
    args.L = L, args.M = M, args.N = N;
    RowmeanPlan plan;
    FG_RETURN_IF_ERROR(rowmean_call(args, driver_inspector(*h.context), h.settings.rowmean_algo, &plan));
    fg_rowmean_algo_t ran = FG_ROWMEAN_AUTO;
    if (!plan.empty) {
      Context &context = *h.context;
      FG_RETURN_IF_ERROR(
          using_workspace(context, [&] { return detail::run_rowmean(plan.problem, context, plan.algo, &ran); }));
    }
    h.last.rowmean_algo = ran;
    trace.set_algorithm(fg_rowmean_algo_name(ran));
    return Status::success();
  });
}

fg_status_t fg_get_last_rowmean_algo(fg_handle_t handle, fg_rowmean_algo_t *algo) {
  CallTrace trace("fg_get_last_rowmean_algo", "handle=%p", static_cast<void *>(handle));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    if (algo == nullptr) return null_argument("algo");
    *algo = handle->last.rowmean_algo;
    return Status::success();
  });
}

fg_status_t fg_rowmean_workspace_size(fg_handle_t handle, fg_dtype_t dtype, int64_t L, int64_t M, int64_t N,
                                      size_t *bytes) {
  CallTrace trace("fg_rowmean_workspace_size", "handle=%p, dtype=%d, L=%lld, M=%lld, N=%lld",
                  static_cast<void *>(handle), dtype, static_cast<long long>(L), static_cast<long long>(M),
                  static_cast<long long>(N));
  return with_handle(trace, handle, [&](fg_context &h) -> Status {
    DeviceWorkspaceSizer sizer(h);
    return rowmean_workspace_query(dtype, L, M, N, sizer, bytes);
  });
}

}  // extern "C"
