// SPDX-License-Identifier: Apache-2.0
// AUTO's emulation outside a capture (graph_call.hpp): the whole call captured once into a graph of its own, kept by
// the handle for every call of the same shape and given each call's addresses and scalars.

#include "sgemm/ozaki_int8/graph_call.hpp"

#include "core/check.hpp"
#include "sgemm/ozaki_int8/graph_cache.hpp"
#include "sgemm/ozaki_int8/graph_nodes.hpp"
#include "sgemm/ozaki_int8/kernels.hpp"
#include "sgemm/ozaki_int8/plan.hpp"
#include "sgemm/ozaki_int8/steps.hpp"
#include "sgemm/variant.hpp"

namespace fastgemm::detail::ozaki {
namespace {

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
  inner.report = nullptr;
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
Status give_operands(const GemmProblem &p, const RunArgs &args, GraphCache &graphs, LiveOperands *live,
                     GraphCache::Kept *kept) {
  FG_RETURN_IF_ERROR(publish_again(kept->exec, kept->given, p, live));
  const GraphCache::Key products_for = product_key(p, kept->tag, kept->children_read_addresses);
  if (kept->child_count > 0 && products_for != kept->children_for) {
    // The FP32 product captured for these operands before, or captured now (and kept with the graph, which destroys
    // it: also where setting it fails, and the caller erases the graph).
    cudaGraph_t product = kept->child_graph(products_for);
    if (product == nullptr) {
      fg_sgemm_algo_t algo = FG_SGEMM_AUTO;
      cudaStream_t stream = nullptr;
      FG_RETURN_IF_ERROR(graphs.capture_stream(&stream));
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

}  // namespace

Status run_as_graph(const GemmProblem &p, const RunArgs &args) {
  GraphCache *const cache = GraphCache::of(args);
  if (cache == nullptr) return Status::failure(StatusCode::alloc_failed, "the handle's graph cache could not be made");
  GraphCache &graphs = *cache;
  const GraphCache::Key key = graph_key(p, args);
  const WorkspaceLayout layout =
      workspace_layout(p.m, p.n, p.batch, choose_tiling(p.m, p.n, p.k, p.batch, 1, product_path(args)));
  LiveOperands *live = live_operands(static_cast<char *>(args.workspace), layout);
  DeviceChoice *slot = nullptr;
  GraphCache::Kept *kept = graphs.find(key, &slot);
  // Where the FP32 product captured for the new operands cannot take the kept one's place (cuBLAS chose other
  // kernels), the graph is made again.
  if (kept != nullptr && kept->operands != operands_key(p) && !give_operands(p, args, graphs, live, kept).ok()) {
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
  if (args.report != nullptr) {
    EmulationReport &report = *args.report->emulation;
    report = EmulationReport{};
    FG_RETURN_IF_ERROR(graphs.record_done(args.stream, &report.done));
    report.pending = slot;
    report.fallback = static_cast<fg_sgemm_algo_t>(kept->tag);
  }
  return Status::success();
}

}  // namespace fastgemm::detail::ozaki
