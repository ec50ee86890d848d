// SPDX-License-Identifier: Apache-2.0
// FG_SGEMM_OZAKI_INT8's steps (see plan.hpp): scan both operands; the plan, tile by tile the codes, their
// INT8 product and every element's need; read the needs' histogram (the one synchronization) and choose the moduli
// count; then tile by tile the residues, the INT8 products over the moduli (cuBLAS) and the reconstruction into C;
// last, the elements no count certifies, and those NaN or Inf reach, in FP32.
#include <cmath>
#include <cstring>
#include <string>

#include "core/check.hpp"
#include "sgemm/ozaki_int8/kernels.hpp"
#include "sgemm/ozaki_int8/plan.hpp"
#include "sgemm/variant.hpp"

namespace fastgemm::detail {
namespace {

using namespace ozaki;

// The FP32 fix-up of the elements that NaN or Inf reach reads a row of op(A) and a column of op(B) per element,
// k FMAs each: it may take up to 1 / kFlaggedShare of the product's FMAs, or kFlaggedWork, whichever is more
// (a few milliseconds at most); beyond, plain FP32 throughout is the faster way.
constexpr double kFlaggedShare = 128, kFlaggedWork = double(1 << 26);

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

size_t ozaki_workspace_bytes(const GemmProblem &p, const DeviceInfo &) {
  return max_workspace_bytes(p.m, p.n, p.k, p.batch);
}

// products[b][l] = residues_a[b][l] residues_b[b][l]^T for the tile's batches and moduli: one INT8 tensor-core
// product per pair, INT32 sums (exact: depth <= kMaxDepth). cuBLAS is column-major: the row-major products are
// its (residues_b)^T-by-residues_a products, both operands k-contiguous (its fast "TN" form). Large products go
// one call per pair: cuBLAS's heuristic picks faster kernels for them alone than for the strided batch, and slower
// ones for smaller products (bench/NOTES-emulated.md).
Status int8_products(cublasHandle_t handle, const int8_t *residues_a, const int8_t *residues_b, int32_t *products,
                     int64_t padded_rows, int64_t padded_cols, int64_t pitch, int64_t depth, int64_t count) {
  constexpr double kOneCallWork = 3072.0 * 3072.0 * 3072.0;
  const int32_t one = 1, zero = 0;
  const int64_t a_stride = padded_rows * depth, b_stride = padded_cols * depth, product_stride = padded_rows * pitch;
  if (static_cast<double>(padded_rows) * padded_cols * depth >= kOneCallWork) {
    for (int64_t pair = 0; pair < count; ++pair)
      FG_CUBLAS_CHECK(cublasGemmEx(
          handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(padded_cols), static_cast<int>(padded_rows),
          static_cast<int>(depth), &one, residues_b + pair * b_stride, CUDA_R_8I, static_cast<int>(depth),
          residues_a + pair * a_stride, CUDA_R_8I, static_cast<int>(depth), &zero, products + pair * product_stride,
          CUDA_R_32I, static_cast<int>(pitch), CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
    return Status::success();
  }
  FG_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(padded_cols), static_cast<int>(padded_rows),
      static_cast<int>(depth), &one, residues_b, CUDA_R_8I, static_cast<int>(depth), b_stride, residues_a, CUDA_R_8I,
      static_cast<int>(depth), a_stride, &zero, products, CUDA_R_32I, static_cast<int>(pitch), product_stride,
      static_cast<int>(count), CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
  return Status::success();
}

int64_t round_up_4(int64_t value) { return (value + 3) / 4 * 4; }

// What run_tiles does with each tile: with `constants`, the residues at its moduli count, their products and the
// reconstruction of C; without, the codes, their product and the plan of every element's need.
struct TileSteps {
  const CrtConstants *constants = nullptr;
  const CertificateConstants *certificate = nullptr;
  uint8_t *needs = nullptr;
  ScanSummary *summary = nullptr;
};

// The steps over every tile of the problem.
Status run_tiles(const GemmProblem &p, const Tiling &tiling, const WorkspaceLayout &layout, char *workspace,
                 const TileSteps &steps, cublasHandle_t handle, cudaStream_t stream) {
  const Lines a = rows_of_a(p), b = columns_of_b(p);
  const auto *a_facts = reinterpret_cast<const LineFacts *>(workspace + layout.a_lines);
  const auto *b_facts = reinterpret_cast<const LineFacts *>(workspace + layout.b_lines);
  auto *a_residues = reinterpret_cast<int8_t *>(workspace + layout.a_residues);
  auto *b_residues = reinterpret_cast<int8_t *>(workspace + layout.b_residues);
  auto *products = reinterpret_cast<int32_t *>(workspace + layout.products);
  const int64_t count = steps.constants != nullptr ? steps.constants->count : 1;
  const bool a_whole = tiling.rows == p.m;
  for (int64_t first_batch = 0; first_batch < p.batch; first_batch += tiling.batches) {
    const int64_t batches = tiling.batches < p.batch - first_batch ? tiling.batches : p.batch - first_batch;
    ResidueTile a_tile{first_batch, batches, 0, p.m, round_up_4(p.m), tiling.depth};
    if (a_whole) FG_RETURN_IF_ERROR(make_residues(a, a_facts, a_tile, steps.constants, a_residues, stream));
    for (int64_t first_col = 0; first_col < p.n; first_col += tiling.cols) {
      const int64_t cols = tiling.cols < p.n - first_col ? tiling.cols : p.n - first_col;
      const ResidueTile b_tile{first_batch, batches, first_col, cols, round_up_4(cols), tiling.depth};
      FG_RETURN_IF_ERROR(make_residues(b, b_facts, b_tile, steps.constants, b_residues, stream));
      for (int64_t first_row = 0; first_row < p.m; first_row += tiling.rows) {
        const int64_t rows = tiling.rows < p.m - first_row ? tiling.rows : p.m - first_row;
        if (!a_whole) {
          a_tile = ResidueTile{first_batch, batches, first_row, rows, round_up_4(rows), tiling.depth};
          FG_RETURN_IF_ERROR(make_residues(a, a_facts, a_tile, steps.constants, a_residues, stream));
        }
        FG_RETURN_IF_ERROR(int8_products(handle, a_residues, b_residues, products, a_tile.padded_lines,
                                         b_tile.padded_lines, tiling.padded_cols, tiling.depth, batches * count));
        const ProductTile tile{first_batch,         batches,   first_row, rows,
                               a_tile.padded_lines, first_col, cols,      tiling.padded_cols};
        if (steps.constants == nullptr)
          FG_RETURN_IF_ERROR(
              plan_needs(p, tile, products, a_facts, b_facts, *steps.certificate, steps.needs, steps.summary, stream));
        else
          FG_RETURN_IF_ERROR(reconstruct(p, tile, products, a_facts, b_facts, *steps.constants, *steps.certificate,
                                         steps.needs, stream));
      }
    }
  }
  return Status::success();
}

// The dispatcher declines it on a stream being captured (kSynchronizes), and where its workspace cannot be
// allocated (kDeclinesWithoutWorkspace): AUTO then runs an FP32 algorithm, which needs none, and the caller gets C.
Status run_ozaki(const GemmProblem &p, const RunArgs &args) {
  const cudaStream_t stream = args.stream;
  const size_t bytes = args.workspace_bytes;
  cublasHandle_t handle = args.cublas;

  // The scan, then the plan: the codes' product and every element's need. Nothing of C is written until the host
  // has read the needs' histogram (the one synchronization) and chosen the moduli count, or declined.
  char *workspace = static_cast<char *>(args.workspace);
  const Tiling plan_tiling = choose_tiling(p.m, p.n, p.k, p.batch, 1);
  const WorkspaceLayout plan_layout = workspace_layout(p.m, p.n, p.batch, plan_tiling);
  auto *summary = reinterpret_cast<ScanSummary *>(workspace + plan_layout.summary);
  auto *a_facts = reinterpret_cast<LineFacts *>(workspace + plan_layout.a_lines);
  auto *b_facts = reinterpret_cast<LineFacts *>(workspace + plan_layout.b_lines);
  auto *a_flagged = reinterpret_cast<int64_t *>(workspace + plan_layout.a_flagged);
  auto *b_flagged = reinterpret_cast<int64_t *>(workspace + plan_layout.b_flagged);
  auto *needs = reinterpret_cast<uint8_t *>(workspace + plan_layout.needs);
  const CertificateConstants certificate = certificate_constants(p.k);
  FG_CUDA_CHECK(cudaMemsetAsync(summary, 0, sizeof(ScanSummary), stream));
  FG_RETURN_IF_ERROR(scan_lines(rows_of_a(p), p.batch, 0, certificate, a_facts, a_flagged, summary, stream));
  FG_RETURN_IF_ERROR(scan_lines(columns_of_b(p), p.batch, 1, certificate, b_facts, b_flagged, summary, stream));
  TileSteps steps;
  steps.certificate = &certificate;
  steps.needs = needs;
  steps.summary = summary;
  FG_RETURN_IF_ERROR(run_tiles(p, plan_tiling, plan_layout, workspace, steps, handle, stream));
  ScanSummary found;
  FG_CUDA_CHECK(cudaMemcpyAsync(&found, summary, sizeof found, cudaMemcpyDeviceToHost, stream));
  FG_CUDA_CHECK(cudaStreamSynchronize(stream));

  const auto flagged_rows = static_cast<int64_t>(found.flagged_lines[0]);
  const auto flagged_cols = static_cast<int64_t>(found.flagged_lines[1]);
  const double fix_up_work = (static_cast<double>(flagged_rows) * p.n + static_cast<double>(flagged_cols) * p.m) * p.k;
  const double product_work = static_cast<double>(p.batch) * p.m * p.n * p.k;
  if (fix_up_work > kFlaggedWork && fix_up_work * kFlaggedShare > product_work)
    return declined(std::to_string(flagged_rows) + " rows of op(A) and " + std::to_string(flagged_cols) +
                    " columns of op(B) hold NaN or Inf: too many for the FP32 fix-up of their elements");
  const ModuliChoice choice = choose_moduli(found.needs, p.m, p.n, p.k, p.batch, p.beta != 0.0f);
  if (choice.declined)
    return declined("the certificate needs FP32 for " + std::to_string(found.needs[kNeedsFp32]) + " of " +
                    std::to_string(p.batch * p.m * p.n) +
                    " elements, or more moduli than pay: FP32 throughout is faster for these operands");

  const Tiling tiling = choose_tiling(p.m, p.n, p.k, p.batch, choice.count);
  const WorkspaceLayout layout = workspace_layout(p.m, p.n, p.batch, tiling);
  if (layout.total > bytes) return Status::failure(StatusCode::internal_error, "the tiling outgrew its workspace");
  const CrtConstants constants = crt_constants(choice.count, p.k);
  steps.constants = &constants;
  FG_RETURN_IF_ERROR(run_tiles(p, tiling, layout, workspace, steps, handle, stream));
  FG_RETURN_IF_ERROR(recompute_uncertified(p, needs, choice.count, stream));
  FG_RETURN_IF_ERROR(fix_flagged(p, a_flagged, flagged_rows, b_flagged, flagged_cols, a_facts, stream));
  if (args.emulation != nullptr) {
    args.emulation->moduli = choice.count;
    args.emulation->fp32_elements = choice.fp32_elements;
  }
  return Status::success();
}

}  // namespace

extern const SgemmVariant ozaki_int8_sgemm = {FG_SGEMM_OZAKI_INT8,
                                              "ozaki_int8",
                                              ozaki_can_implement,
                                              ozaki_workspace_bytes,
                                              run_ozaki,
                                              kInspectsOperands | kSynchronizes | kDeclinesWithoutWorkspace,
                                              always_uses_cublas<GemmProblem>};

}  // namespace fastgemm::detail
