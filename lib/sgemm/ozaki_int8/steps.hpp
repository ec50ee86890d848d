// SPDX-License-Identifier: Apache-2.0
// FG_SGEMM_OZAKI_INT8's steps (steps.cpp), which its variant (ozaki_int8.cpp) and the graph of a call outside a
// capture (graph_call.cpp) enqueue: the scan and the plan, the products at a moduli count with the reconstruction and
// the FP32 fix-up, and the whole emulation on a stream being captured, choosing on the device.
#pragma once

#include <cstdint>

#include "core/problem.hpp"
#include "core/status.hpp"
#include "core/variant.hpp"
#include "sgemm/emulation_report.hpp"
#include "sgemm/ozaki_int8/graph_cache.hpp"
#include "sgemm/ozaki_int8/kernels.hpp"
#include "sgemm/ozaki_int8/plan.hpp"

namespace fastgemm::detail::ozaki {

// The plan's buffers in the workspace, which every tiling's layout shares.
struct PlanBuffers {
  char *workspace = nullptr;
  ScanSummary *summary = nullptr;
  LineFacts *a_facts = nullptr, *b_facts = nullptr;
  int64_t *a_flagged = nullptr, *b_flagged = nullptr;
  uint8_t *needs = nullptr;
  // A captured call's: where its preview leaves the moduli count whose residues the codes' pass writes (kernels.hpp's
  // Speculation), or nullptr.
  int *speculation = nullptr;
};

// The nodes of a kept graph (run_as_graph) that are set again for other operands: its FP32 products, each a child
// graph node captured again for the new addresses and scalars, unless every one reads them at launch.
struct GivenNodes {
  cudaGraphNode_t fp32[GraphCache::kMostChildren] = {};
  int fp32_count = 0;
  bool fp32_read_addresses = true;
};

// Where the call's INT8 products run: its device's multiprocessors, and whether the own product runs on the current
// device (the call's). Every tiling of the call is chosen for it.
ProductPath product_path(const RunArgs &args);

// The products over `count` moduli, the reconstruction, and the elements computed in FP32: those no count certifies,
// and those NaN or Inf reach (`flagged_rows` and `flagged_cols` of them, or, with `counted`, as many as the scan
// counted on the device).
Status products_at(const GemmProblem &p, int count, const RunArgs &args, const PlanBuffers &plan,
                   const CertificateConstants &certificate, bool counted, int64_t flagged_rows, int64_t flagged_cols);

// The scan, then the plan: the codes' product and every element's need, enqueued on args.stream. Nothing of C is
// written by them. With `speculation` (a captured call's, written by its preview), the codes' pass also writes the
// residues of the count found there, for products_at.
Status enqueue_plan(const GemmProblem &p, const RunArgs &args, const CertificateConstants &certificate,
                    PlanBuffers *plan, int *speculation = nullptr);

// The whole emulation on a stream being captured: the preview's choice, and a switch node whose branch 0 runs FP32
// throughout and whose branch 1 the scan, the plan and run_captured's choice. `choice`, *fallback and `given` as in
// run_captured.
Status enqueue_captured(const GemmProblem &p, const RunArgs &args, DeviceChoice *choice, fg_sgemm_algo_t *fallback,
                        GivenNodes *given);

}  // namespace fastgemm::detail::ozaki
