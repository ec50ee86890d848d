// SPDX-License-Identifier: Apache-2.0
// The kernels of FG_SGEMM_OZAKI_INT8 (see ozaki_int8.hpp): the scan of the operands, the residues, the
// reconstruction of C from the INT32 products, and the FP32 products of the elements that NaN or Inf reach.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/problem.hpp"
#include "core/status.hpp"
#include "sgemm/ozaki_int8.hpp"

namespace fastgemm::detail::ozaki {

// The lines of one operand: the rows of op(A) or the columns of op(B), `count` per product, each of `length`
// (k) elements: element l of line i of product b lies at data[b * batch_stride + i * line_stride +
// l * element_stride]. One of the two strides is 1.
struct Lines {
  const float *data = nullptr;
  int64_t count = 0, length = 0;
  int64_t line_stride = 0, element_stride = 0, batch_stride = 0;
};

Lines rows_of_a(const GemmProblem &p);
Lines columns_of_b(const GemmProblem &p);

// What the scan leaves for the host, per operand (0: A, 1: B).
struct ScanSummary {
  // log2 of the largest spread and concentration of a line (see moduli_needed), as the bits of non-negative
  // doubles: those order as the values do, so that atomicMax on them takes the largest.
  unsigned long long spread_bits[2];
  unsigned long long concentration_bits[2];
  unsigned long long flagged_lines[2];  // lines holding NaN or Inf
};

// For each line of every product (ids b * count + i): its 2-norm in norms[id], or -1 when it holds NaN or Inf,
// its id then appended to `flagged`; the largest spread and concentration into the summary. The summary must be
// zeroed first.
Status scan_lines(const Lines &lines, int64_t batch, int operand, double *norms, int64_t *flagged, ScanSummary *summary,
                  cudaStream_t stream);

// The residues of lines first_line .. first_line + line_count - 1 of products first_batch ..
// first_batch + batches - 1, scaled by Q / norm (0 for lines of norm 0 or -1), as int8 in
// residues[batch][modulus][line][depth], padded_lines lines (zeros past line_count) of depth (zeros past k).
struct ResidueTile {
  int64_t first_batch = 0, batches = 1;
  int64_t first_line = 0, line_count = 0, padded_lines = 0;
  int64_t depth = 0;
};
Status make_residues(const Lines &lines, const double *norms, const ResidueTile &tile, const CrtConstants &constants,
                     int8_t *residues, cudaStream_t stream);

// C's elements of the tile rows first_row.. x cols first_col.. of products first_batch.. from the INT32 products
// products[batch][modulus][row][padded_cols]: alpha V / (scale_i scale_j) + beta C, V rebuilt by the Chinese
// remainder theorem, rounded to float once. Elements whose row or column holds NaN or Inf are left alone.
struct ProductTile {
  int64_t first_batch = 0, batches = 1;
  int64_t first_row = 0, rows = 0, padded_rows = 0;
  int64_t first_col = 0, cols = 0, padded_cols = 0;
};
Status reconstruct(const GemmProblem &p, const ProductTile &tile, const int32_t *products, const double *a_norms,
                   const double *b_norms, const CrtConstants &constants, cudaStream_t stream);

// The elements that the flagged rows of op(A) and columns of op(B) reach, as FP32 arithmetic gives them: the sum
// of products in k order with FMA, then alpha and beta.
Status fix_flagged(const GemmProblem &p, const int64_t *a_flagged, int64_t a_count, const int64_t *b_flagged,
                   int64_t b_count, const double *a_norms, cudaStream_t stream);

}  // namespace fastgemm::detail::ozaki
