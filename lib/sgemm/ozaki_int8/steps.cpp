// SPDX-License-Identifier: Apache-2.0
// FG_SGEMM_OZAKI_INT8's steps (steps.hpp), tile by tile: the codes, their INT8 product and every element's need; the
// residues at the chosen moduli count, their INT8 products and the reconstruction into C; then the elements no count
// certifies, and those NaN or Inf reach, in FP32. On a stream being captured, a kernel chooses and switch nodes run
// the chosen branch.

#include "sgemm/ozaki_int8/steps.hpp"

#include "core/check.hpp"
#include "sgemm/cublas.hpp"
#include "sgemm/ozaki_int8/graph_cache.hpp"
#include "sgemm/ozaki_int8/graph_nodes.hpp"
#include "sgemm/ozaki_int8/kernels.hpp"
#include "sgemm/ozaki_int8/plan.hpp"
#include "sgemm/ozaki_int8/wgmma_products.hpp"
#include "sgemm/variant.hpp"

namespace fastgemm::detail::ozaki {
namespace {

// Products of at least this many multiply-adds run one cuBLAS call per pair, not a strided batch.
constexpr double kOneCallWork = 3072.0 * 3072.0 * 3072.0;
// products[b][l] = residues_a[b][l] residues_b[b][l]^T for the tile's batches and moduli: one INT8 tensor-core
// product per pair, INT32 sums (exact: depth <= kMaxDepth). cuBLAS is column-major: the row-major products are
// its (residues_b)^T-by-residues_a products, both operands k-contiguous (its fast "TN" form). Large products go
// one call per pair: cuBLAS's heuristic picks faster kernels for them alone than for the strided batch, and slower
// ones for smaller products (bench/NOTES-emulated.md); on Hopper, the project's own product takes products from
// kOwnProductWork that fill the device's multiprocessors (plan.hpp's own_products_run on `path`), all pairs in one
// launch (wgmma_products.hpp), and, with `constants` (the moduli's products, not the codes') on products
// kResidueBytesDepth deep or more (residue_bytes_run), writes each sum's residue modulo its pair's modulus in one byte
// instead, residue_pitch(padded_cols) bytes a row: then *residue_bytes is that pitch (0 for INT32 sums). With
// half_chunks, each pair's lines hold the codes' kCodeSets sets (make_residues'): the own product takes the half-depth
// set where *half_chunks chose it, and says so in *took_half; cuBLAS takes the first.
Status int8_products(cublasHandle_t handle, cudaStream_t stream, const int8_t *residues_a, const int8_t *residues_b,
                     int32_t *products, int64_t padded_rows, int64_t padded_cols, int64_t pitch, int64_t depth,
                     int64_t count, const CrtConstants *constants, int64_t *residue_bytes, CodeChunks *half_chunks,
                     bool *took_half, const ProductPath &path) {
  const int32_t one = 1, zero = 0;
  const int64_t sets = half_chunks != nullptr ? kCodeSets : 1;
  const int64_t a_stride = sets * padded_rows * depth, b_stride = sets * padded_cols * depth;
  const int64_t product_stride = padded_rows * pitch;
  *residue_bytes = 0;
  if (took_half != nullptr) *took_half = false;
  if (own_products_run(padded_rows, padded_cols, depth, count * sets, path)) {
    // All pairs in one launch. Residues in bytes pay from kResidueBytesDepth (1024) deep since the epilogue reduces a
    // sum in seven operations (math.hpp's sum_residue_byte), measured on the H200 (AUTO, a call): 4096 x 4096 x 1024
    // 0.649 -> 0.593 ms, 8192 x 8192 x 1024 2.16 -> 1.91, 8192 x 8192 x 2048 2.91 -> 2.65, 16 products of 2048^3 3.47
    // -> 3.21 (bench/NOTES-emulated-runs.md); shallower products keep their INT32 sums (not measured).
    if (constants != nullptr && residue_bytes_run(padded_rows, padded_cols, depth, count, path)) {
      const int64_t byte_pitch = residue_pitch(padded_cols);
      FG_RETURN_IF_ERROR(own_int8_residues(residues_a, residues_b, reinterpret_cast<int8_t *>(products), padded_rows,
                                           padded_cols, byte_pitch, depth, count, constants->modulus, constants->count,
                                           stream));
      *residue_bytes = byte_pitch;
      return Status::success();
    }
    if (took_half != nullptr) *took_half = half_chunks != nullptr;
    return own_int8_products(residues_a, residues_b, products, padded_rows, padded_cols, pitch, depth, count, stream,
                             half_chunks);
  }
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
  ProductPath path;  // where the INT8 products run (the plan's blocks follow the device's multiprocessors)
  // A captured call's (PlanBuffers::speculation): the count whose residues the codes' pass writes, read on the device.
  const int *speculation = nullptr;
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
  // The residues of kSpeculatedModuli moduli: the codes' pass writes them where that count's tiling lays them out,
  // before its own buffers (choose_tiling's speculated_bytes), where the preview foresaw that count; then the
  // residues' pass at that count finds them made.
  Speculation a_speculation, b_speculation;
  const Speculation *a_speculated = nullptr, *b_speculated = nullptr;
  CrtConstants speculated_constants;
  if (steps.speculation != nullptr &&
      (steps.constants == nullptr ? tiling.speculated_bytes != 0 : count == kSpeculatedModuli)) {
    a_speculation.count = b_speculation.count = steps.speculation;
    if (steps.constants == nullptr) {
      const Tiling speculated = choose_tiling(p.m, p.n, p.k, p.batch, kSpeculatedModuli, steps.path);
      const WorkspaceLayout at = workspace_layout(p.m, p.n, p.batch, speculated);
      if (at.b_residues + speculated.b_residue_bytes > layout.a_residues)
        return Status::failure(StatusCode::internal_error, "the speculated residues overlap the codes");
      speculated_constants = crt_constants(kSpeculatedModuli, p.k);
      a_speculation.constants = b_speculation.constants = &speculated_constants;
      a_speculation.residues = reinterpret_cast<int8_t *>(workspace + at.a_residues);
      b_speculation.residues = reinterpret_cast<int8_t *>(workspace + at.b_residues);
    }
    a_speculated = &a_speculation;
    b_speculated = &b_speculation;
  }
  // The plan's codes carry their half-depth set where the own product takes the tiling's tiles.
  CodeChunks *const half_chunks =
      steps.constants == nullptr && own_products_run(tiling.padded_rows, tiling.padded_cols, tiling.depth,
                                                     tiling.batches * kCodeSets, steps.path)
          ? &steps.summary->code_chunks
          : nullptr;
  for (int64_t first_batch = 0; first_batch < p.batch; first_batch += tiling.batches) {
    const int64_t batches = tiling.batches < p.batch - first_batch ? tiling.batches : p.batch - first_batch;
    ResidueTile a_tile{first_batch, batches, 0, p.m, round_up_4(p.m), tiling.depth};
    if (a_whole)
      FG_RETURN_IF_ERROR(
          make_residues(a, a_facts, a_tile, steps.constants, a_residues, stream, half_chunks, a_speculated));
    for (int64_t first_col = 0; first_col < p.n; first_col += tiling.cols) {
      const int64_t cols = tiling.cols < p.n - first_col ? tiling.cols : p.n - first_col;
      const ResidueTile b_tile{first_batch, batches, first_col, cols, round_up_4(cols), tiling.depth};
      FG_RETURN_IF_ERROR(
          make_residues(b, b_facts, b_tile, steps.constants, b_residues, stream, half_chunks, b_speculated));
      for (int64_t first_row = 0; first_row < p.m; first_row += tiling.rows) {
        const int64_t rows = tiling.rows < p.m - first_row ? tiling.rows : p.m - first_row;
        if (!a_whole) {
          a_tile = ResidueTile{first_batch, batches, first_row, rows, round_up_4(rows), tiling.depth};
          FG_RETURN_IF_ERROR(make_residues(a, a_facts, a_tile, steps.constants, a_residues, stream, half_chunks));
        }
        // A tiling that counted the sums as bytes has room for no INT32 sums: the same rule chooses both.
        if (tiling.byte_sums &&
            (steps.constants == nullptr ||
             !residue_bytes_run(a_tile.padded_lines, b_tile.padded_lines, tiling.depth, batches * count, steps.path)))
          return Status::failure(StatusCode::internal_error,
                                 "the tiling counted byte sums that the products would not write");
        int64_t residue_bytes = 0;
        bool took_half = false;
        FG_RETURN_IF_ERROR(int8_products(handle, stream, a_residues, b_residues, products, a_tile.padded_lines,
                                         b_tile.padded_lines, tiling.padded_cols, tiling.depth, batches * count,
                                         steps.constants, &residue_bytes, half_chunks, &took_half, steps.path));
        ProductTile tile{first_batch,         batches,   first_row, rows,
                         a_tile.padded_lines, first_col, cols,      tiling.padded_cols};
        tile.residue_pitch = residue_bytes;
        tile.half_codes = took_half;
        if (steps.constants == nullptr)
          FG_RETURN_IF_ERROR(plan_needs(p, tile, products, a_facts, b_facts, *steps.certificate, steps.needs,
                                        steps.summary, steps.path.processors, stream));
        else
          FG_RETURN_IF_ERROR(reconstruct(p, tile, products, a_facts, b_facts, *steps.constants, *steps.certificate,
                                         steps.needs, steps.summary, stream));
      }
    }
  }
  return Status::success();
}

}  // namespace

ProductPath product_path(const RunArgs &args) { return ProductPath{args.device->sm_count, own_products_ready()}; }

Status products_at(const GemmProblem &p, int count, const RunArgs &args, const PlanBuffers &plan,
                   const CertificateConstants &certificate, bool counted, int64_t flagged_rows, int64_t flagged_cols) {
  const ProductPath path = product_path(args);
  const Tiling tiling = choose_tiling(p.m, p.n, p.k, p.batch, count, path);
  const WorkspaceLayout layout = workspace_layout(p.m, p.n, p.batch, tiling);
  if (layout.total > args.workspace_bytes)
    return Status::failure(StatusCode::internal_error, "the tiling outgrew its workspace");
  const CrtConstants constants = crt_constants(count, p.k);
  TileSteps steps;
  steps.constants = &constants;
  steps.certificate = &certificate;
  steps.needs = plan.needs;
  steps.summary = plan.summary;
  steps.path = path;
  steps.speculation = plan.speculation;
  FG_RETURN_IF_ERROR(run_tiles(p, tiling, layout, plan.workspace, steps, args.cublas, args.stream));
  if (counted)
    return recompute_and_fix_counted(p, plan.needs, count, plan.summary, plan.a_flagged, plan.b_flagged, plan.a_facts,
                                     args.stream);
  FG_RETURN_IF_ERROR(recompute_uncertified(p, plan.needs, count, plan.summary, args.stream));
  return fix_flagged(p, plan.a_flagged, flagged_rows, plan.b_flagged, flagged_cols, plan.a_facts, args.stream);
}

namespace {

// For a kept graph's FP32 product captured as *product: where it is cuBLAS's (`algo`), the product captured again to
// read the addresses from p.live at launch takes its place when it runs the same kernels (cublas.hpp); *reads tells.
// Where that capture fails, the product captured first stays.
Status product_reading_addresses(const GemmProblem &p, const RunArgs &body_args, fg_sgemm_algo_t algo,
                                 cudaGraph_t *product, bool *reads) {
  *reads = false;
  if (algo != FG_SGEMM_CUBLAS || p.live == nullptr || !cublas_may_read_live_addresses(p)) return Status::success();
  GemmProblem reading = p;
  reading.live_addresses = true;
  cudaGraph_t candidate = nullptr;
  fg_sgemm_algo_t candidate_algo = FG_SGEMM_AUTO;
  if (!capture_fp32(reading, body_args, &candidate, &candidate_algo).ok()) {
    (void)cudaGetLastError();
    return Status::success();
  }
  bool same = false;
  const Status compared = candidate_algo == algo ? same_kernels(*product, candidate, &same) : Status::success();
  if (!compared.ok() || !same) {
    (void)cudaGraphDestroy(candidate);
    FG_RETURN_IF_ERROR(compared);
    return Status::success();
  }
  (void)cudaGraphDestroy(*product);
  *product = candidate;
  *reads = true;
  return Status::success();
}

// FP32 throughout, as a branch of the graph: the operation's workspace-free AUTO choice. In a kept graph (`given`),
// it is a child graph node, recorded there, so that a launch for other operands can capture it again for them (or
// cuBLAS's, reading them at launch).
Status fp32_branch(const GemmProblem &p, const RunArgs &body_args, GivenNodes *given, fg_sgemm_algo_t *fallback) {
  if (given == nullptr) return run_fp32_fallback(p, body_args, fallback);
  if (given->fp32_count == GraphCache::kMostChildren)
    return Status::failure(StatusCode::internal_error, "more FP32 branches than a kept graph records");
  cudaGraph_t product = nullptr;
  FG_RETURN_IF_ERROR(capture_fp32(p, body_args, &product, fallback));
  bool reads = false;
  const Status chosen = product_reading_addresses(p, body_args, *fallback, &product, &reads);
  if (!chosen.ok()) {
    (void)cudaGraphDestroy(product);
    return chosen;
  }
  given->fp32_read_addresses = given->fp32_read_addresses && reads;
  const Status added = add_child(body_args.stream, product, &given->fp32[given->fp32_count]);
  (void)cudaGraphDestroy(product);
  FG_RETURN_IF_ERROR(added);
  ++given->fp32_count;
  return Status::success();
}

// After the plan, on a stream being captured: decide's kernel chooses at each replay, and a switch node runs the
// chosen branch: FP32 throughout (branch 0), or the products over N moduli (branch N - kMinModuli + 1). decide
// leaves each replay's choice in `choice` where one is given; *fallback is the FP32 algorithm of branch 0; `given`
// as in fp32_branch.
Status run_captured(const GemmProblem &p, const RunArgs &args, const PlanBuffers &plan,
                    const CertificateConstants &certificate, DeviceChoice *choice, fg_sgemm_algo_t *fallback,
                    GivenNodes *given) {
  cudaGraphConditionalHandle branch = 0;
  FG_RETURN_IF_ERROR(new_handle(args.stream, &branch));
  FG_RETURN_IF_ERROR(decide(plan.summary, p.m, p.n, p.k, p.batch, p.beta != 0.0f, branch, choice, args.stream));
  constexpr unsigned int kBranches = 1 + kMaxModuli - kMinModuli + 1;
  cudaGraph_t *bodies = nullptr;
  FG_RETURN_IF_ERROR(add_switch(args.stream, branch, kBranches, &bodies));
  return capture_branches(args, bodies, kBranches, [&](unsigned int index, const RunArgs &body_args) {
    const int count = static_cast<int>(index) + kMinModuli - 1;
    return index == 0 ? fp32_branch(p, body_args, given, fallback)
                      : products_at(p, count, body_args, plan, certificate, true, 0, 0);
  });
}

}  // namespace

Status enqueue_plan(const GemmProblem &p, const RunArgs &args, const CertificateConstants &certificate,
                    PlanBuffers *plan, int *speculation) {
  const cudaStream_t stream = args.stream;
  plan->workspace = static_cast<char *>(args.workspace);
  const ProductPath path = product_path(args);
  const Tiling plan_tiling = choose_tiling(p.m, p.n, p.k, p.batch, 1, path);
  const WorkspaceLayout plan_layout = workspace_layout(p.m, p.n, p.batch, plan_tiling);
  plan->summary = reinterpret_cast<ScanSummary *>(plan->workspace + plan_layout.summary);
  plan->a_facts = reinterpret_cast<LineFacts *>(plan->workspace + plan_layout.a_lines);
  plan->b_facts = reinterpret_cast<LineFacts *>(plan->workspace + plan_layout.b_lines);
  plan->a_flagged = reinterpret_cast<int64_t *>(plan->workspace + plan_layout.a_flagged);
  plan->b_flagged = reinterpret_cast<int64_t *>(plan->workspace + plan_layout.b_flagged);
  plan->needs = reinterpret_cast<uint8_t *>(plan->workspace + plan_layout.needs);
  plan->speculation = speculation;
  FG_CUDA_CHECK(cudaMemsetAsync(plan->summary, 0, sizeof(ScanSummary), stream));
  FG_RETURN_IF_ERROR(scan_operands(rows_of_a(p), columns_of_b(p), p.batch, certificate, plan->a_facts, plan->a_flagged,
                                   plan->b_facts, plan->b_flagged, plan->summary, stream));
  TileSteps steps;
  steps.certificate = &certificate;
  steps.needs = plan->needs;
  steps.summary = plan->summary;
  steps.path = path;
  steps.speculation = speculation;
  return run_tiles(p, plan_tiling, plan_layout, plan->workspace, steps, args.cublas, stream);
}

Status enqueue_captured(const GemmProblem &p, const RunArgs &args, DeviceChoice *choice, fg_sgemm_algo_t *fallback,
                        GivenNodes *given) {
  if (args.fallback == nullptr)
    return Status::failure(StatusCode::internal_error, "a captured emulation needs the FP32 product");
  const CertificateConstants certificate = certificate_constants(p.k);
  const Tiling plan_tiling = choose_tiling(p.m, p.n, p.k, p.batch, 1, product_path(args));
  const WorkspaceLayout layout = workspace_layout(p.m, p.n, p.batch, plan_tiling);
  char *workspace = static_cast<char *>(args.workspace);
  PreviewBuffers preview;
  preview.facts = reinterpret_cast<LineFacts *>(workspace + layout.preview_facts);
  preview.codes = reinterpret_cast<int8_t *>(workspace + layout.preview_codes);
  preview.products = reinterpret_cast<int32_t *>(workspace + layout.preview_products);
  if (plan_tiling.speculated_bytes != 0) preview.speculation = reinterpret_cast<int *>(workspace + layout.speculation);
  cudaGraphConditionalHandle handle = 0;
  FG_RETURN_IF_ERROR(new_handle(args.stream, &handle));
  FG_RETURN_IF_ERROR(preview_choice(p, certificate, preview, plan_tiling.depth, handle, choice, args.stream));
  cudaGraph_t *bodies = nullptr;
  FG_RETURN_IF_ERROR(add_switch(args.stream, handle, 2, &bodies));
  return capture_branches(args, bodies, 2, [&](unsigned int index, const RunArgs &body_args) {
    if (index == 0) return fp32_branch(p, body_args, given, fallback);
    PlanBuffers plan;
    FG_RETURN_IF_ERROR(enqueue_plan(p, body_args, certificate, &plan, preview.speculation));
    fg_sgemm_algo_t same_fallback = FG_SGEMM_AUTO;
    return run_captured(p, body_args, plan, certificate, choice, &same_fallback, given);
  });
}

}  // namespace fastgemm::detail::ozaki
