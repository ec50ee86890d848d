// SPDX-License-Identifier: Apache-2.0
// FG_SGEMM_OZAKI_INT8, emulated FP32 after Ozaki scheme II (arXiv 2504.08009): every row of op(A) and every
// column of op(B) is scaled to integers whose 2-norm is at most Q, the integer product is computed exactly from
// its residues modulo N pairwise coprime moduli of at most 256 (one INT8 tensor-core product per modulus, INT32
// sums), and rebuilt by the Chinese remainder theorem. The product of the moduli, P, exceeds 2 Q^2, which bounds
// every element of the integer product (Cauchy-Schwarz), so the rebuilt value is exact; what remains is the
// rounding of the operands to integers, an error of about 0.4 ||A_i|| ||B_j|| / Q per element.
//
// This header holds what the host decides: the moduli and the constants of the reconstruction, how many moduli
// the operands need, and how C is cut into tiles so that the workspace stays bounded. The kernels are in
// ozaki_int8_kernels.cu, the variant's steps in ozaki_int8.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fastgemm::detail::ozaki {

// The moduli, largest first so that N of them give the largest product: pairwise coprime, at most 256, so that a
// residue in [-128, 127] is one int8.
constexpr int kMaxModuli = 13;  // 14 would allow Q >= 2^53: integers no longer exact in a double
constexpr int kModuli[kMaxModuli] = {256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217, 211};
constexpr int kMinModuli = 2;

// INT32 sums of int8 products stay exact while depth * 128 * 128 < 2^31.
constexpr int64_t kMaxDepth = 131071;

// The INT8 products take the depth in whole multiples of this (zero-padded), the fast form of cuBLAS's kernels.
constexpr int64_t kDepthAlignment = 16;

// What the reconstruction kernel needs of the moduli, by value (a kernel parameter). With W_l = (P / p_l) *
// ((P / p_l)^-1 mod p_l) mod P, the integer product is V = sum_l c_l W_l - q P for residues c_l of it, where
// q = rint(sum_l c_l W_l / P). W_l and P are split into a high part on a grid of 2^grid_bits, exact in a double,
// with few enough bits that every partial sum of c_l W_l,high is exact too, and the rest, rounded to a double.
struct CrtConstants {
  int count = 0;
  double modulus[kMaxModuli] = {};
  double inverse_modulus[kMaxModuli] = {};  // 1 / p_l, rounded
  double weight_fraction[kMaxModuli] = {};  // W_l / P, rounded
  double weight_high[kMaxModuli] = {};
  double weight_low[kMaxModuli] = {};
  double product_high = 0, product_low = 0;
  // Q: rows and columns are scaled so that their 2-norms are Q (and the scaled integers' at most
  // sqrt(P / 2) (1 - 2^-21)).
  double scale_target = 0;
};

// The constants for the first `count` moduli (kMinModuli..kMaxModuli) and products of depth k.
CrtConstants crt_constants(int count, int64_t k);

// log2 of Q for `count` moduli and depth k.
double scale_target_bits(int count, int64_t k);

// How many bits Q needs beyond 2^24 depends on the operands' dynamic range. The error of element (i, j) relative to
// (|A||B|)_ij is about 0.4 kappa_ij / Q with kappa_ij = ||A_i|| ||B_j|| / (|A||B|)_ij, which no statistic of single
// lines bounds; two statistics of a line x with nnz nonzeros do on every distribution of the accuracy suite, with
// the margins below (measured there: bench/NOTES-emulated.md):
//   concentration(x) = sqrt(nnz) ||x||_2 / ||x||_1  (>= 1; 1.15 for uniform values), the typical kappa's factor
//     where a line's 1-norm is carried by its bulk;
//   spread(x) = ||x||_2 / (sqrt(nnz) M(x)), M(x) = (sum_l sqrt|x_l| / nnz)^2, a mean of order 1/2 (>= 1; 1.6 for
//     uniform values), which a line's few largest values, carrying its 2-norm, and its tiny ones move little.
// With s and c the bits of the largest spread of a row of op(A) times that of a column of op(B), and the same for
// the concentrations: Q >= 2^(24 + s + kSpreadMarginBits) always suffices; where s - c <= kBulkGapBits (the bulk
// carries the 1-norm), so does Q >= 2^(24 + c + kConcentrationMarginBits), and the smaller of the two is taken.
constexpr double kSpreadMarginBits = 1.0;
constexpr double kConcentrationMarginBits = 2.0;
constexpr double kBulkGapBits = 8.0;

// The fewest moduli whose Q reaches the bits above for spreads and concentrations of these bits; 0 when kMaxModuli
// moduli are not enough.
int moduli_needed(double spread_bits, double concentration_bits, int64_t k);

// log2 of the Q the moduli count must reach.
double needed_scale_bits(double spread_bits, double concentration_bits);

// How the product is cut so that the workspace stays bounded: `batches` products at a time when each is whole
// (rows == m and cols == n), otherwise tiles of C of rows x cols, one product at a time. The INT8 products run
// over rows and cols rounded up to 4 (zero lines of residues past the tile), the form cuBLAS's INT8 kernels take.
struct Tiling {
  int64_t batches = 1;
  int64_t rows = 0, cols = 0;
  int64_t padded_rows = 0, padded_cols = 0;  // rounded up to 4; padded_cols is also the INT32 products' pitch
  int64_t depth = 0;                         // k rounded up to kDepthAlignment
  size_t a_residue_bytes = 0;                // batches * count * padded_rows * depth
  size_t b_residue_bytes = 0;                // batches * count * padded_cols * depth
  size_t product_bytes = 0;                  // batches * count * padded_rows * padded_cols * 4
};
Tiling choose_tiling(int64_t m, int64_t n, int64_t k, int64_t batch, int count);

// The workspace: per-line statistics of both operands, the summary the host reads, the lists of lines holding
// NaN or Inf, then the residues and products of one tile. Offsets are 256-byte aligned.
struct WorkspaceLayout {
  size_t summary = 0;
  size_t a_norms = 0, b_norms = 0;      // double per line, over all batches
  size_t a_flagged = 0, b_flagged = 0;  // int64 ids of the lines that hold NaN or Inf
  size_t a_residues = 0, b_residues = 0, products = 0;
  size_t total = 0;
};
WorkspaceLayout workspace_layout(int64_t m, int64_t n, int64_t batch, const Tiling &tiling);

// The most workspace any operands of this shape can need (the tiling of every moduli count).
size_t max_workspace_bytes(int64_t m, int64_t n, int64_t k, int64_t batch);

}  // namespace fastgemm::detail::ozaki
