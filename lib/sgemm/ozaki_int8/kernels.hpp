// SPDX-License-Identifier: Apache-2.0
// The kernels of FG_SGEMM_OZAKI_INT8 (see plan.hpp): the scan of the operands, the codes and the residues,
// the certificate's plan, the reconstruction of C from the INT32 products, and the FP32 elements (those NaN or
// Inf reach, and those no moduli count certifies).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/problem.hpp"
#include "core/status.hpp"
#include "core/variant.hpp"
#include "sgemm/emulation_report.hpp"
#include "sgemm/ozaki_int8/math.hpp"
#include "sgemm/ozaki_int8/plan.hpp"

namespace fastgemm::detail::ozaki {

// The lines of one operand: the rows of op(A) or the columns of op(B), `count` per product, each of `length`
// (k) elements: element l of line i of product b lies at data[b * batch_stride + i * line_stride +
// l * element_stride]. One of the two strides is 1.
struct Lines {
  const float *data = nullptr;
  int64_t count = 0, length = 0;
  int64_t line_stride = 0, element_stride = 0, batch_stride = 0;
  // Where given (the problem's LiveOperands), the kernels read `data` there when they run.
  const float *const *live_data = nullptr;
};

Lines rows_of_a(const GemmProblem &p);
Lines columns_of_b(const GemmProblem &p);

// What the device leaves for the host: per operand (0: A, 1: B) the lines holding NaN or Inf, and the histogram
// of the elements' needs (needs[N]: elements that N moduli certify and N - 1 do not; needs[kNeedsFp32]: elements
// no count certifies), and the elements whose float overflowed in the reconstruction. Zeroed before the scan.
struct ScanSummary {
  unsigned long long flagged_lines[2];
  unsigned long long needs[kNeedsFp32 + 1];
  unsigned long long overflowed;
  CodeChunks code_chunks;  // of the plan's codes, where they are made with their half-depth set
};

// For each line of every product (ids b * count + i) of op(A) (its rows, operand 0) and op(B) (its columns, operand
// 1), in one launch: its LineFacts; the ids of lines holding NaN or Inf are appended to the operand's `flagged`.
Status scan_operands(const Lines &a, const Lines &b, int64_t batch, const CertificateConstants &constants,
                     LineFacts *a_facts, int64_t *a_flagged, LineFacts *b_facts, int64_t *b_flagged,
                     ScanSummary *summary, cudaStream_t stream);

// Lines first_line .. first_line + line_count - 1 of products first_batch .. first_batch + batches - 1 as int8 in
// out[batch][modulus][line][depth], padded_lines lines (zeros past line_count) of depth (zeros past k): with
// `constants`, the residues of each line scaled by 2^(T - n) and rounded; without (nullptr), one set of codes
// floor(|x| 2^g) in [0, 127], and, with `half_chunks`, a second set after them, out[batch][1][line][depth]: the
// codes at half depth (math.hpp's half_code of elements 2m and 2m + 1 at m < depth / 2, zeros from depth / 2 to
// the next multiple of kHalfSetStep, the rest unwritten),
// the pieces counted into *half_chunks. Lines holding NaN or Inf give zeros.
// With `speculation` (a captured call's, plan.hpp's kSpeculatedModuli), read on the device when the kernels run:
// the codes also write the residues at speculation->constants' count into speculation->residues, laid out as above,
// where *speculation->count is that count; the residues at a count are not made where *speculation->count is it
// (the codes' pass of the same operands wrote them).
struct ResidueTile {
  int64_t first_batch = 0, batches = 1;
  int64_t first_line = 0, line_count = 0, padded_lines = 0;
  int64_t depth = 0;
};
struct Speculation {
  const int *count = nullptr;               // device memory: the count the preview foresaw, or 0
  const CrtConstants *constants = nullptr;  // the codes': kSpeculatedModuli's constants
  int8_t *residues = nullptr;               // the codes': where that count's residues go
};
Status make_residues(const Lines &lines, const LineFacts *facts, const ResidueTile &tile, const CrtConstants *constants,
                     int8_t *out, cudaStream_t stream, CodeChunks *half_chunks = nullptr,
                     const Speculation *speculation = nullptr);

// A tile of C: rows first_row.. x cols first_col.. of products first_batch.., and the layout of its INT32
// products, products[batch][modulus][row][padded_cols], or, where residue_pitch is not 0, of their residues modulo
// each modulus, one byte each, rows residue_pitch bytes apart (the own INT8 product's, wgmma_products.hpp).
struct ProductTile {
  int64_t first_batch = 0, batches = 1;
  int64_t first_row = 0, rows = 0, padded_rows = 0;
  int64_t first_col = 0, cols = 0, padded_cols = 0;
  int64_t residue_pitch = 0;
  // The plan's: its codes were made with their half-depth set, and the product took that set where the summary's
  // code_chunks chose it (codes_at_half_depth): each product then counts twice.
  bool half_codes = false;
};

// From the product of the codes (one "modulus"), every element's need into needs[batch][row][n] (0 for elements
// that NaN or Inf reach), counted into the summary's histogram. `processors`: the device's multiprocessors, which
// the rows each block walks follow (plan.hpp's plan_chunk_rows).
Status plan_needs(const GemmProblem &p, const ProductTile &tile, const int32_t *code_products, const LineFacts *a_facts,
                  const LineFacts *b_facts, const CertificateConstants &certificate, uint8_t *needs,
                  ScanSummary *summary, int processors, cudaStream_t stream);

// C's elements of the tile whose need is at most constants.count, and those certified from their value:
// alpha V 2^-(e+f) + beta C, V rebuilt by the Chinese remainder theorem, rounded to float once. An element
// certified from its value gets the need kMinModuli; one whose float overflows gets kNeedsFp32, and is counted in
// the summary.
Status reconstruct(const GemmProblem &p, const ProductTile &tile, const int32_t *products, const LineFacts *a_facts,
                   const LineFacts *b_facts, const CrtConstants &constants, const CertificateConstants &certificate,
                   uint8_t *needs, ScanSummary *summary, cudaStream_t stream);

// The elements whose need is more than `count`, as FP32 arithmetic gives them: the sum of products in k order
// with FMA, then alpha and beta. Nothing to do, read on the device, where the summary counts none above `count`.
Status recompute_uncertified(const GemmProblem &p, const uint8_t *needs, int count, const ScanSummary *summary,
                             cudaStream_t stream);

// The elements that the flagged rows of op(A) and columns of op(B) reach, as FP32 arithmetic gives them.
Status fix_flagged(const GemmProblem &p, const int64_t *a_flagged, int64_t a_count, const int64_t *b_flagged,
                   int64_t b_count, const LineFacts *a_facts, cudaStream_t stream);
// recompute_uncertified and fix_flagged in one launch, the lists' lengths read on the device from the scan's summary
// (a captured call's replays).
Status recompute_and_fix_counted(const GemmProblem &p, const uint8_t *needs, int count, const ScanSummary *summary,
                                 const int64_t *a_flagged, const int64_t *b_flagged, const LineFacts *a_facts,
                                 cudaStream_t stream);

// A graph's choice, made on the device from the plan's summary (choice.hpp) into the conditional node's handle:
// branch 0 runs FP32 throughout, branch N - kMinModuli + 1 the products over N moduli. Where `choice` is given, the
// choice is also left there (moduli 0 for FP32 throughout).
Status decide(const ScanSummary *summary, int64_t m, int64_t n, int64_t k, int64_t batch, bool reads_c,
              cudaGraphConditionalHandle handle, DeviceChoice *choice, cudaStream_t stream);

// The preview (preview.cu): the certificate's needs of a sample of the elements, from the facts and codes of a
// sample of the lines (plan.hpp's kPreviewLines), and a choice from them scaled to the whole product, into the
// conditional node's handle: 0 for FP32 throughout (also left in `choice` where one is given, as moduli 0), where
// the sample says the plan of every element would choose it too; 1 for that plan. Reads the operands and C only.
struct PreviewBuffers {
  LineFacts *facts = nullptr;
  int8_t *codes = nullptr;
  int32_t *products = nullptr;
  // Where given: kSpeculatedModuli, where the sample's choice is that count, else 0 (kernels.hpp's Speculation).
  int *speculation = nullptr;
};
Status preview_choice(const GemmProblem &p, const CertificateConstants &certificate, const PreviewBuffers &buffers,
                      int64_t depth, cudaGraphConditionalHandle handle, DeviceChoice *choice, cudaStream_t stream);

// A kept graph's operands (live_operands.cu): where its first node writes the call's addresses and scalars
// (GemmProblem::live), in the workspace.
LiveOperands *live_operands(char *workspace, const WorkspaceLayout &layout);
// Enqueues the node that writes p's addresses and scalars there (the first node of a kept graph).
Status publish_operands(const GemmProblem &p, LiveOperands *live, cudaStream_t stream);
// Gives that node of an instantiated graph p's addresses and scalars, for its next launches.
Status publish_again(cudaGraphExec_t exec, cudaGraphNode_t node, const GemmProblem &p, LiveOperands *live);

}  // namespace fastgemm::detail::ozaki
