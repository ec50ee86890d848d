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
#include <cstring>
#include <string>

#include "core/check.hpp"
#include "core/graph_cache.hpp"
#include "sgemm/cublas.hpp"
#include "sgemm/ozaki_int8/choice.hpp"
#include "sgemm/ozaki_int8/graph_nodes.hpp"
#include "sgemm/ozaki_int8/kernels.hpp"
#include "sgemm/ozaki_int8/plan.hpp"
#include "sgemm/ozaki_int8/wgmma_products.hpp"
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

size_t ozaki_workspace_bytes(const GemmProblem &p, const DeviceInfo &) {
  return max_workspace_bytes(p.m, p.n, p.k, p.batch);
}

// Products of at least this many multiply-adds run one launch (or one cuBLAS call) per pair, not a strided batch.
constexpr double kOneCallWork = 3072.0 * 3072.0 * 3072.0;

// Whether int8_products runs the own product for `pairs` products of these sizes.
bool own_products_run(int64_t padded_rows, int64_t padded_cols, int64_t depth, int64_t pairs) {
  return static_cast<double>(padded_rows) * padded_cols * depth >= kOneCallWork &&
         own_products_take(padded_rows, padded_cols, depth, pairs) && own_products_ready();
}

// products[b][l] = residues_a[b][l] residues_b[b][l]^T for the tile's batches and moduli: one INT8 tensor-core
// product per pair, INT32 sums (exact: depth <= kMaxDepth). cuBLAS is column-major: the row-major products are
// its (residues_b)^T-by-residues_a products, both operands k-contiguous (its fast "TN" form). Large products go
// one call per pair: cuBLAS's heuristic picks faster kernels for them alone than for the strided batch, and slower
// ones for smaller products (bench/NOTES-emulated.md); on Hopper, the project's own product takes them, all pairs
// in one launch (wgmma_products.hpp), and, with `constants` (the moduli's products, not the codes') on products 4096
// deep or more, writes each sum's residue modulo its pair's modulus in one byte instead, residue_pitch(padded_cols)
// bytes a row: then *residue_bytes is that pitch (0 for INT32 sums). With half_chunks, each pair's lines hold the
// codes' kCodeSets sets (make_residues'): the own product takes the half-depth set where *half_chunks chose it, and
// says so in *took_half; cuBLAS takes the first.
Status int8_products(cublasHandle_t handle, cudaStream_t stream, const int8_t *residues_a, const int8_t *residues_b,
                     int32_t *products, int64_t padded_rows, int64_t padded_cols, int64_t pitch, int64_t depth,
                     int64_t count, const CrtConstants *constants, int64_t *residue_bytes, CodeChunks *half_chunks,
                     bool *took_half) {
  const int32_t one = 1, zero = 0;
  const int64_t sets = half_chunks != nullptr ? kCodeSets : 1;
  const int64_t a_stride = sets * padded_rows * depth, b_stride = sets * padded_cols * depth;
  const int64_t product_stride = padded_rows * pitch;
  *residue_bytes = 0;
  if (took_half != nullptr) *took_half = false;
  if (own_products_run(padded_rows, padded_cols, depth, count * sets)) {
    // All pairs in one launch. Residues in bytes pay from 4096 deep (measured at 4096^3, 8192^3 and 16384^3: the
    // reduction in the product's epilogue, once per sum, costs less than the reconstruction's reads of INT32
    // sums); shallower products keep their INT32 sums (not measured).
    constexpr int64_t kResidueBytesDepth = 4096;
    if (constants != nullptr && depth >= kResidueBytesDepth) {
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
  // The plan's codes carry their half-depth set where the own product takes the tiling's tiles.
  CodeChunks *const half_chunks =
      steps.constants == nullptr &&
              own_products_run(tiling.padded_rows, tiling.padded_cols, tiling.depth, tiling.batches * kCodeSets)
          ? &steps.summary->code_chunks
          : nullptr;
  for (int64_t first_batch = 0; first_batch < p.batch; first_batch += tiling.batches) {
    const int64_t batches = tiling.batches < p.batch - first_batch ? tiling.batches : p.batch - first_batch;
    ResidueTile a_tile{first_batch, batches, 0, p.m, round_up_4(p.m), tiling.depth};
    if (a_whole)
      FG_RETURN_IF_ERROR(make_residues(a, a_facts, a_tile, steps.constants, a_residues, stream, half_chunks));
    for (int64_t first_col = 0; first_col < p.n; first_col += tiling.cols) {
      const int64_t cols = tiling.cols < p.n - first_col ? tiling.cols : p.n - first_col;
      const ResidueTile b_tile{first_batch, batches, first_col, cols, round_up_4(cols), tiling.depth};
      FG_RETURN_IF_ERROR(make_residues(b, b_facts, b_tile, steps.constants, b_residues, stream, half_chunks));
      for (int64_t first_row = 0; first_row < p.m; first_row += tiling.rows) {
        const int64_t rows = tiling.rows < p.m - first_row ? tiling.rows : p.m - first_row;
        if (!a_whole) {
          a_tile = ResidueTile{first_batch, batches, first_row, rows, round_up_4(rows), tiling.depth};
          FG_RETURN_IF_ERROR(make_residues(a, a_facts, a_tile, steps.constants, a_residues, stream, half_chunks));
        }
        int64_t residue_bytes = 0;
        bool took_half = false;
        FG_RETURN_IF_ERROR(int8_products(handle, stream, a_residues, b_residues, products, a_tile.padded_lines,
                                         b_tile.padded_lines, tiling.padded_cols, tiling.depth, batches * count,
                                         steps.constants, &residue_bytes, half_chunks, &took_half));
        ProductTile tile{first_batch,         batches,   first_row, rows,
                         a_tile.padded_lines, first_col, cols,      tiling.padded_cols};
        tile.residue_pitch = residue_bytes;
        tile.half_codes = took_half;
        if (steps.constants == nullptr)
          FG_RETURN_IF_ERROR(
              plan_needs(p, tile, products, a_facts, b_facts, *steps.certificate, steps.needs, steps.summary, stream));
        else
          FG_RETURN_IF_ERROR(reconstruct(p, tile, products, a_facts, b_facts, *steps.constants, *steps.certificate,
                                         steps.needs, steps.summary, stream));
      }
    }
  }
  return Status::success();
}

// The plan's buffers in the workspace, which every tiling's layout shares.
struct PlanBuffers {
  char *workspace = nullptr;
  ScanSummary *summary = nullptr;
  LineFacts *a_facts = nullptr, *b_facts = nullptr;
  int64_t *a_flagged = nullptr, *b_flagged = nullptr;
  uint8_t *needs = nullptr;
};

// The products over `count` moduli, the reconstruction, and the elements computed in FP32: those no count certifies,
// and those NaN or Inf reach (`flagged_rows` and `flagged_cols` of them, or, with `counted`, as many as the scan
// counted on the device).
Status products_at(const GemmProblem &p, int count, const RunArgs &args, const PlanBuffers &plan,
                   const CertificateConstants &certificate, bool counted, int64_t flagged_rows, int64_t flagged_cols) {
  const Tiling tiling = choose_tiling(p.m, p.n, p.k, p.batch, count);
  const WorkspaceLayout layout = workspace_layout(p.m, p.n, p.batch, tiling);
  if (layout.total > args.workspace_bytes)
    return Status::failure(StatusCode::internal_error, "the tiling outgrew its workspace");
  const CrtConstants constants = crt_constants(count, p.k);
  TileSteps steps;
  steps.constants = &constants;
  steps.certificate = &certificate;
  steps.needs = plan.needs;
  steps.summary = plan.summary;
  FG_RETURN_IF_ERROR(run_tiles(p, tiling, layout, plan.workspace, steps, args.cublas, args.stream));
  FG_RETURN_IF_ERROR(recompute_uncertified(p, plan.needs, count, plan.summary, args.stream));
  if (counted) return fix_flagged_counted(p, plan.a_flagged, plan.b_flagged, plan.summary, plan.a_facts, args.stream);
  return fix_flagged(p, plan.a_flagged, flagged_rows, plan.b_flagged, flagged_cols, plan.a_facts, args.stream);
}

// The nodes of a kept graph (run_as_graph) that are set again for other operands: its FP32 products, each a child
// graph node captured again for the new addresses and scalars, unless every one reads them at launch.
struct GivenNodes {
  cudaGraphNode_t fp32[GraphCache::kMostChildren] = {};
  int fp32_count = 0;
  bool fp32_read_addresses = true;
};

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
  if (given == nullptr) return body_args.fp32_product(p, body_args, fallback);
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

// The scan, then the plan: the codes' product and every element's need, enqueued on args.stream. Nothing of C is
// written by them.
Status enqueue_plan(const GemmProblem &p, const RunArgs &args, const CertificateConstants &certificate,
                    PlanBuffers *plan) {
  const cudaStream_t stream = args.stream;
  plan->workspace = static_cast<char *>(args.workspace);
  const Tiling plan_tiling = choose_tiling(p.m, p.n, p.k, p.batch, 1);
  const WorkspaceLayout plan_layout = workspace_layout(p.m, p.n, p.batch, plan_tiling);
  plan->summary = reinterpret_cast<ScanSummary *>(plan->workspace + plan_layout.summary);
  plan->a_facts = reinterpret_cast<LineFacts *>(plan->workspace + plan_layout.a_lines);
  plan->b_facts = reinterpret_cast<LineFacts *>(plan->workspace + plan_layout.b_lines);
  plan->a_flagged = reinterpret_cast<int64_t *>(plan->workspace + plan_layout.a_flagged);
  plan->b_flagged = reinterpret_cast<int64_t *>(plan->workspace + plan_layout.b_flagged);
  plan->needs = reinterpret_cast<uint8_t *>(plan->workspace + plan_layout.needs);
  FG_CUDA_CHECK(cudaMemsetAsync(plan->summary, 0, sizeof(ScanSummary), stream));
  FG_RETURN_IF_ERROR(
      scan_lines(rows_of_a(p), p.batch, 0, certificate, plan->a_facts, plan->a_flagged, plan->summary, stream));
  FG_RETURN_IF_ERROR(
      scan_lines(columns_of_b(p), p.batch, 1, certificate, plan->b_facts, plan->b_flagged, plan->summary, stream));
  TileSteps steps;
  steps.certificate = &certificate;
  steps.needs = plan->needs;
  steps.summary = plan->summary;
  return run_tiles(p, plan_tiling, plan_layout, plan->workspace, steps, args.cublas, stream);
}

// The whole emulation on a stream being captured: the preview's choice, and a switch node whose branch 0 runs FP32
// throughout and whose branch 1 the scan, the plan and run_captured's choice. `choice`, *fallback and `given` as in
// run_captured.
Status enqueue_captured(const GemmProblem &p, const RunArgs &args, DeviceChoice *choice, fg_sgemm_algo_t *fallback,
                        GivenNodes *given) {
  if (args.fp32_product == nullptr)
    return Status::failure(StatusCode::internal_error, "a captured emulation needs the FP32 product");
  const CertificateConstants certificate = certificate_constants(p.k);
  const Tiling plan_tiling = choose_tiling(p.m, p.n, p.k, p.batch, 1);
  const WorkspaceLayout layout = workspace_layout(p.m, p.n, p.batch, plan_tiling);
  char *workspace = static_cast<char *>(args.workspace);
  PreviewBuffers preview;
  preview.facts = reinterpret_cast<LineFacts *>(workspace + layout.preview_facts);
  preview.codes = reinterpret_cast<int8_t *>(workspace + layout.preview_codes);
  preview.products = reinterpret_cast<int32_t *>(workspace + layout.preview_products);
  cudaGraphConditionalHandle handle = 0;
  FG_RETURN_IF_ERROR(new_handle(args.stream, &handle));
  FG_RETURN_IF_ERROR(preview_choice(p, certificate, preview, plan_tiling.depth, handle, choice, args.stream));
  cudaGraph_t *bodies = nullptr;
  FG_RETURN_IF_ERROR(add_switch(args.stream, handle, 2, &bodies));
  return capture_branches(args, bodies, 2, [&](unsigned int index, const RunArgs &body_args) {
    if (index == 0) return fp32_branch(p, body_args, given, fallback);
    PlanBuffers plan;
    FG_RETURN_IF_ERROR(enqueue_plan(p, body_args, certificate, &plan));
    fg_sgemm_algo_t same_fallback = FG_SGEMM_AUTO;
    return run_captured(p, body_args, plan, certificate, choice, &same_fallback, given);
  });
}

// Everything the graph of a call outside a capture holds by value, less what is given again for other operands (the
// operands' addresses and the scalars): the problem's shape and layout, whether beta is 0 (C is read or not), the
// addresses' alignment (on which the FP32 product's kernels, captured again for other operands, may depend), and
// the workspaces.
GraphCache::Key graph_key(const GemmProblem &p, const RunArgs &args) {
  GraphCache::Key key;
  KeyWriter writer(&key);
  const auto operand = [&](const GemmOperand &x) {
    writer.add(static_cast<uint64_t>(x.ld)).add(static_cast<uint64_t>(x.stride)).add(x.transposed);
  };
  writer.add(static_cast<uint64_t>(p.m)).add(static_cast<uint64_t>(p.n)).add(static_cast<uint64_t>(p.k));
  writer.add(static_cast<uint64_t>(p.batch)).add(static_cast<uint64_t>(p.math));
  writer.add(static_cast<uint64_t>(p.reproducibility)).add(p.beta == 0.0f);
  operand(p.a);
  operand(p.b);
  writer.add(static_cast<uint64_t>(p.ldc)).add(static_cast<uint64_t>(p.stride_c));
  for (const void *address :
       {static_cast<const void *>(p.a.data), static_cast<const void *>(p.b.data), static_cast<const void *>(p.c)})
    writer.add(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(address) % 16));
  writer.add(args.workspace).add(static_cast<uint64_t>(args.workspace_bytes));
  writer.add(args.cublas).add(args.cublas_workspace).add(static_cast<uint64_t>(args.cublas_workspace_bytes));
  return key;
}

// The operands a kept graph was given: the addresses and the scalars.
GraphCache::Key operands_key(const GemmProblem &p) {
  GraphCache::Key key;
  KeyWriter writer(&key);
  writer.add(p.a.data).add(p.b.data).add(p.c).add_float(p.alpha).add_float(p.beta);
  return key;
}

// What a kept graph's FP32 products (child graphs) depend on: the addresses, unless they read them at launch
// (`read_addresses`), and the scalars unless the product is cuBLAS's (`fallback`), which reads them from the
// LiveOperands the graph's first node writes.
GraphCache::Key product_key(const GemmProblem &p, int fallback, bool read_addresses) {
  GraphCache::Key key;
  KeyWriter writer(&key);
  if (!read_addresses) writer.add(p.a.data).add(p.b.data).add(p.c);
  if (fallback != FG_SGEMM_CUBLAS) writer.add_float(p.alpha).add_float(p.beta);
  return key;
}

// The whole call captured into a graph of its own, on a stream of its own with the call's cuBLAS bound to it: first
// the node that writes the call's addresses and scalars to `live` (given them again for other operands), then the
// preview, the scan, the plan, decide (which leaves its choice in `choice`) and the switch nodes, whose kernels read
// them there, and whose FP32 products are child graph nodes (captured again for other operands).
Status capture_call(const GemmProblem &p, const RunArgs &args, LiveOperands *live, DeviceChoice *choice,
                    GraphCache::Kept *kept) {
  BranchCapture call(args);
  FG_RETURN_IF_ERROR(call.begin());
  RunArgs inner = args;
  inner.stream = call.stream();
  inner.captured = true;
  inner.emulation = nullptr;
  GemmProblem given = p;
  given.live = live;
  GivenNodes nodes;
  fg_sgemm_algo_t fallback = FG_SGEMM_AUTO;
  FG_CUDA_CHECK(cudaStreamBeginCapture(call.stream(), cudaStreamCaptureModeRelaxed));
  Status built = publish_operands(p, live, call.stream());
  if (built.ok()) built = last_captured_node(call.stream(), &kept->given);
  if (built.ok()) built = enqueue_captured(given, inner, choice, &fallback, &nodes);
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(call.stream(), &graph);
  if (!built.ok() || ended != cudaSuccess) {
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    FG_RETURN_IF_ERROR(built);
    FG_CUDA_CHECK(ended);
  }
  const cudaError_t made = cudaGraphInstantiate(&kept->exec, graph, 0);
  if (made != cudaSuccess) (void)cudaGraphDestroy(graph);
  FG_CUDA_CHECK(made);
  kept->graph = graph;
  for (int child = 0; child < nodes.fp32_count; ++child) kept->children[child] = nodes.fp32[child];
  kept->child_count = nodes.fp32_count;
  kept->operands = operands_key(p);
  kept->tag = fallback;
  kept->children_read_addresses = nodes.fp32_count > 0 && nodes.fp32_read_addresses;
  kept->children_for = product_key(p, fallback, kept->children_read_addresses);
  return Status::success();
}

// A kept graph given p's operands for its next launches: its first node's arguments, and its FP32 products captured
// again for them (not where they read on the device what changed: cuBLAS's reads the scalars, and the addresses where
// product_reading_addresses took it).
Status give_operands(const GemmProblem &p, const RunArgs &args, LiveOperands *live, GraphCache::Kept *kept) {
  FG_RETURN_IF_ERROR(publish_again(kept->exec, kept->given, p, live));
  const GraphCache::Key products_for = product_key(p, kept->tag, kept->children_read_addresses);
  if (kept->child_count > 0 && products_for != kept->children_for) {
    // The FP32 product captured for these operands before, or captured now (and kept with the graph, which destroys
    // it: also where setting it fails, and the caller erases the graph).
    cudaGraph_t product = kept->child_graph(products_for);
    if (product == nullptr) {
      fg_sgemm_algo_t algo = FG_SGEMM_AUTO;
      cudaStream_t stream = nullptr;
      FG_RETURN_IF_ERROR(args.graphs->capture_stream(&stream));
      GemmProblem given = p;
      given.live = live;  // as capture_call captured it: cuBLAS reads the scalars there
      FG_RETURN_IF_ERROR(capture_fp32(given, args, &product, &algo, stream));
      kept->keep_child_graph(products_for, product);
    }
    for (int child = 0; child < kept->child_count; ++child)
      FG_CUDA_CHECK(cudaGraphExecChildGraphNodeSetParams(kept->exec, kept->children[child], product));
    kept->children_for = products_for;
  }
  kept->operands = operands_key(p);
  return Status::success();
}

// AUTO's emulation outside a capture: the call's graph, captured on the first call of its key and kept by the
// handle, runs on the call's stream, given the call's addresses and scalars where they differ from its last launch's;
// the host waits for nothing, and the report reads the device's choice when asked.
Status run_as_graph(const GemmProblem &p, const RunArgs &args) {
  GraphCache &graphs = *args.graphs;
  const GraphCache::Key key = graph_key(p, args);
  const WorkspaceLayout layout = workspace_layout(p.m, p.n, p.batch, choose_tiling(p.m, p.n, p.k, p.batch, 1));
  LiveOperands *live = live_operands(static_cast<char *>(args.workspace), layout);
  DeviceChoice *slot = nullptr;
  GraphCache::Kept *kept = graphs.find(key, &slot);
  // Where the FP32 product captured for the new operands cannot take the kept one's place (cuBLAS chose other
  // kernels), the graph is made again.
  if (kept != nullptr && kept->operands != operands_key(p) && !give_operands(p, args, live, kept).ok()) {
    graphs.erase(kept);
    kept = nullptr;
  }
  if (kept == nullptr) {
    DeviceChoice *written = nullptr;
    FG_RETURN_IF_ERROR(graphs.next_slot(&slot, &written));
    GraphCache::Kept made;
    FG_RETURN_IF_ERROR(capture_call(p, args, live, written, &made));
    graphs.insert(key, made);
    kept = graphs.find(key, &slot);
    if (kept == nullptr) return Status::failure(StatusCode::internal_error, "a graph kept could not be found again");
  }
  FG_CUDA_CHECK(cudaGraphLaunch(kept->exec, args.stream));
  if (args.emulation != nullptr) {
    *args.emulation = EmulationReport{};
    FG_RETURN_IF_ERROR(graphs.record_done(args.stream, &args.emulation->done));
    args.emulation->pending = slot;
    args.emulation->fallback = static_cast<fg_sgemm_algo_t>(kept->tag);
  }
  return Status::success();
}

// AUTO's choice runs as a graph that chooses on the device (kDecidesOnDevice). The algorithm chosen by name reads
// the needs' histogram back (the one synchronization) and chooses the moduli count on the host, or declines, having
// written nothing. On a stream being captured, both choose on the device. The dispatcher declines it where its
// workspace cannot be allocated (kDeclinesWithoutWorkspace): AUTO then runs an FP32 algorithm, which needs none.
Status run_ozaki(const GemmProblem &p, const RunArgs &args) {
  if (!args.captured && args.auto_selected && args.graphs != nullptr) return run_as_graph(p, args);
  if (args.captured) {
    fg_sgemm_algo_t fallback = FG_SGEMM_AUTO;
    FG_RETURN_IF_ERROR(enqueue_captured(p, args, nullptr, &fallback, nullptr));
    // The report cannot tell a replay's choice: it says no emulation ran at capture.
    if (args.emulation != nullptr) *args.emulation = EmulationReport{};
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
                                              kInspectsOperands | kDecidesOnDevice | kDeclinesWithoutWorkspace,
                                              always_uses_cublas<GemmProblem>};

}  // namespace fastgemm::detail
