// SPDX-License-Identifier: Apache-2.0
// FG_SGEMM_OZAKI_INT8's steps (see plan.hpp): scan both operands; the plan, tile by tile the codes, their
// INT8 product and every element's need; choose the moduli count from the needs' histogram; then tile by tile the
// residues, the INT8 products over the moduli (cuBLAS) and the reconstruction into C; last, the elements no count
// certifies, and those NaN or Inf reach, in FP32. The choice is made on the device, in a graph (a kernel chooses,
// and a switch node runs its branch) that the call is captured into: the caller's, on a stream being captured, or,
// for AUTO, one of the handle's own, kept for every call of the same shape (given each call's addresses and scalars:
// its kernels read them from the workspace, and its FP32 products are captured again for them). A preview of the
// certificate on a sample of the elements comes first (preview.cu), and sends operands that no count would pay for
// to FP32 throughout before the scan and the plan of every element. Forced by name outside a capture, the host reads
// the histogram back (the one synchronization) and chooses, or declines with nothing written.

#include <cmath>
#include <string>

#include "core/check.hpp"
#include "sgemm/ozaki_int8/choice.hpp"
#include "sgemm/ozaki_int8/graph_call.hpp"
#include "sgemm/ozaki_int8/plan.hpp"
#include "sgemm/ozaki_int8/steps.hpp"
#include "sgemm/variant.hpp"

namespace fastgemm::detail {
namespace {

using namespace ozaki;

Status declined(const std::string &why) { return Status::failure(StatusCode::not_supported, why); }

Status ozaki_can_implement(const GemmProblem &p, const DeviceInfo &) {
  // The certificate bounds errors relative to |alpha| and |beta C0|; infinite or NaN scalars give FP32's pattern
  // only through FP32's own arithmetic.
  if (!std::isfinite(p.alpha) || !std::isfinite(p.beta))
    return declined("alpha = " + std::to_string(p.alpha) + " or beta = " + std::to_string(p.beta) +
                    " is not finite: FP32's arithmetic decides its NaN and Inf");
  if (p.k > kMaxDepth)
    return declined("k = " + std::to_string(p.k) + " is more than " + std::to_string(kMaxDepth) +
                    ", the depth whose INT32 sums of int8 products stay exact");
  return Status::success();
}

size_t ozaki_workspace_bytes(const GemmProblem &p, const DeviceInfo &device) {
  // The own product runs on compute capability 9.0 only (wgmma_products.hpp): elsewhere its tilings need no room.
  return max_workspace_bytes(p.m, p.n, p.k, p.batch, device.sm_count, device.cc_major == 9 && device.cc_minor == 0);
}

// AUTO's choice runs as a graph that chooses on the device (kDecidesOnDevice). The algorithm chosen by name reads
// the needs' histogram back (the one synchronization) and chooses the moduli count on the host, or declines, having
// written nothing. On a stream being captured, both choose on the device. The dispatcher declines it where its
// workspace cannot be allocated (kDeclinesWithoutWorkspace): AUTO then runs an FP32 algorithm, which needs none.
Status run_ozaki(const GemmProblem &p, const RunArgs &args) {
  if (!args.captured && args.auto_selected && args.state != nullptr) return run_as_graph(p, args);
  if (args.captured) {
    fg_sgemm_algo_t fallback = FG_SGEMM_AUTO;
    FG_RETURN_IF_ERROR(enqueue_captured(p, args, nullptr, &fallback, nullptr));
    // The report cannot tell a replay's choice: it says no emulation ran at capture.
    if (args.report != nullptr) *args.report->emulation = EmulationReport{};
    return Status::success();
  }
  const cudaStream_t stream = args.stream;
  const CertificateConstants certificate = certificate_constants(p.k);
  PlanBuffers plan;
  FG_RETURN_IF_ERROR(enqueue_plan(p, args, certificate, &plan));

  ScanSummary found;
  FG_CUDA_CHECK(cudaMemcpyAsync(&found, plan.summary, sizeof found, cudaMemcpyDeviceToHost, stream));
  FG_CUDA_CHECK(cudaStreamSynchronize(stream));
  const auto flagged_rows = static_cast<int64_t>(found.flagged_lines[0]);
  const auto flagged_cols = static_cast<int64_t>(found.flagged_lines[1]);
  if (too_many_flagged(static_cast<double>(flagged_rows), static_cast<double>(flagged_cols), p.m, p.n, p.k, p.batch))
    return declined(std::to_string(flagged_rows) + " rows of op(A) and " + std::to_string(flagged_cols) +
                    " columns of op(B) hold NaN or Inf: too many for the FP32 fix-up of their elements");
  const ModuliChoice choice = choose_moduli(found.needs, p.m, p.n, p.k, p.batch, p.beta != 0.0f);
  if (choice.declined)
    return declined("the certificate needs FP32 for " + std::to_string(found.needs[kNeedsFp32]) + " of " +
                    std::to_string(p.batch * p.m * p.n) +
                    " elements, or more moduli than pay: FP32 throughout is faster for these operands");
  FG_RETURN_IF_ERROR(products_at(p, choice.count, args, plan, certificate, false, flagged_rows, flagged_cols));
  if (args.report != nullptr) {
    args.report->emulation->moduli = choice.count;
    args.report->emulation->fp32_elements = choice.fp32_elements;
  }
  return Status::success();
}

}  // namespace

extern const SgemmVariant ozaki_int8_sgemm = {FG_SGEMM_OZAKI_INT8,
                                              "ozaki_int8",
                                              ozaki_can_implement,
                                              ozaki_workspace_bytes,
                                              run_ozaki,
                                              kInspectsOperands | kDecidesOnDevice | kDeclinesWithoutWorkspace,
                                              always_uses_cublas<GemmProblem>};

}  // namespace fastgemm::detail
