// SPDX-License-Identifier: Apache-2.0
// FG_SGEMM_OZAKI_INT8, emulated FP32 after Ozaki scheme II (arXiv 2504.08009), with a certificate for every
// element it returns. Every row of op(A) and every column of op(B) is scaled by a power of two to integers whose
// 2-norm is below S = sqrt(P / 2) (P the product of the moduli), so that every element of the integer product is
// below P / 2 (Cauchy-Schwarz) and the Chinese remainder theorem rebuilds it exactly from its residues modulo N
// pairwise coprime moduli of at most 256 (one INT8 tensor-core product per modulus, INT32 sums). What remains is
// the rounding of the scaled operands to integers; a power of two keeps integers exact.
//
// The certificate (derivation: bench/NOTES-emulated.md, "The certificate"). Before any product, for every element
// (i, j) and every moduli count N, a rigorous upper bound E_ij(N) of |C_ij - R_ij| (R the exact result, alpha and
// beta included) is held against 2^-24 sqrt(k) (|alpha| L_ij + |beta| |C0_ij|), where L_ij <= (|A||B|)_ij is a
// guaranteed lower bound from one INT8 product of 7-bit codes of |A| and |B| rounded down (every term is
// nonnegative: nothing cancels). An N that certifies the element (the fewest, or one a little above it where the
// plan takes a shortcut: math.hpp's code_thresholds) is its need; the call takes the N that
// costs least over the whole product and recomputes in FP32 (a sum in k order with FMA) the elements whose need
// is larger, or declines when FP32 throughout is faster. After the products, an element that the a-priori bound
// could not certify gets a second chance from |C~_ij| - E_ij, also a lower bound of (|A||B|)_ij.
//
// This header holds what the host decides: the moduli and the constants of the reconstruction and the
// certificate, the choice of the moduli count, and how C is cut into tiles so that the workspace stays bounded.
// The bound itself is in math.hpp (shared by the kernels and the unit tests), the kernels in operand_kernels.cu
// (scan, codes, residues) and product_kernels.cu (plan, reconstruction, FP32 elements), the variant's steps in
// steps.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fastgemm::detail::ozaki {

// The moduli, largest first so that N of them give the largest product: pairwise coprime, at most 256, so that a
// residue in [-128, 127] is one int8.
constexpr int kMaxModuli = 13;  // 14 would allow scaled integers of 2^53 and more: no longer exact in a double
constexpr int kModuli[kMaxModuli] = {256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217, 211};
constexpr int kMinModuli = 2;

// What an element's need is recorded as when no moduli count certifies it: FP32 recomputes it.
constexpr int kNeedsFp32 = kMaxModuli + 1;

// INT32 sums of int8 products stay exact while depth * 128 * 128 < 2^31, and those of the 7-bit codes
// (depth * 127 * 127) too.
constexpr int64_t kMaxDepth = 131071;

// The INT8 products take the depth in whole multiples of this (zero-padded): cuBLAS's fast form wants 16; the own
// product's tensor copies run at full speed only on rows of whole 64 bytes (on the H100, 4096 x 4096 x 4112 took its
// products 1.17 ms, 4096 x 4096 x 4160 0.70 ms and 4096^3 0.67 ms).
constexpr int64_t kDepthAlignment = 64;

// What the reconstruction kernel needs of the moduli, by value (a kernel parameter). With W_l = (P / p_l) *
// ((P / p_l)^-1 mod p_l) mod P, the integer product is V = sum_l c_l W_l - q P for residues c_l of it, where
// q = rint(sum_l c_l W_l / P) (CrtSums::value finds it from the two sums below). W_l and P are split into a high
// part on a grid of 2^grid_bits, exact in a double, with few enough bits that every partial sum of c_l W_l,high is
// exact too, and the rest, rounded to a double.
struct CrtConstants {
  int count = 0;
  double modulus[kMaxModuli] = {};
  double inverse_modulus[kMaxModuli] = {};  // 1 / p_l, rounded
  double weight_high[kMaxModuli] = {};
  double weight_low[kMaxModuli] = {};
  double product_high = 0, product_low = 0;
  double inverse_product = 0;  // 1 / P, rounded
  // For the residues in integer arithmetic (math.hpp's integer_residue): p_l, floor(2^39 / p_l) + 1 and
  // 2^24 mod p_l.
  uint32_t integer_modulus[kMaxModuli] = {};
  uint32_t reciprocal[kMaxModuli] = {};
  uint32_t power24_residue[kMaxModuli] = {};
  // For the residues in FP32 arithmetic (math.hpp's float_residue_bits): p_l, 1 / p_l rounded to a float, and 2^12 mod
  // p_l in (-p_l / 2, p_l / 2).
  float float_modulus[kMaxModuli] = {};
  float float_inverse[kMaxModuli] = {};
  float split_residue[kMaxModuli] = {};
  // S: every line is scaled to a 2-norm of at most S (line_scale), so that, rounded to integers, it is below
  // S + sqrt(k) / 2 <= sqrt((P / 2)(1 - 2^-19)). 0 where no scaling keeps the count exact at this depth.
  double scale_target = 0;
};

// The constants for the first `count` moduli (kMinModuli..kMaxModuli) and products of depth k.
CrtConstants crt_constants(int count, int64_t k);

// S for `count` moduli and depth k: (S + sqrt(k) / 2)^2 <= (P / 2) (1 - 2^-19), with room for roundings; 0 when
// no S >= 1 does.
double scale_target(int count, int64_t k);

// What the certificate needs of every moduli count, by value (a kernel parameter); indices are moduli counts.
struct CertificateConstants {
  double scale_target[kMaxModuli + 1] = {};
  // Bounds of the rebuilt integer V divided by the two lines' scales, for every count, relative to the product of
  // the lines' 2-norms: |V~| / (s t) <= magnitude ||x|| ||y||, and |V~ - V| / (s t) <= reconstruction_error
  // ||x|| ||y|| (the doubles of the Chinese remainder sums). A scale is at least S / (2 ||x||).
  double magnitude = 0;
  double reconstruction_error = 0;
  double error_allowance = 0;  // 2^-24 sqrt(k), rounded down: dense lines' (element_error_allowance)
  int64_t depth = 0;           // k
};
CertificateConstants certificate_constants(int64_t k);

// The moduli count of a call (choice.hpp's choose_moduli, which the host and the device both run): the count of
// least estimated time, the elements recomputed in FP32 at that count, and whether FP32 throughout would be faster
// (the call then declines).
struct ModuliChoice {
  int count = 0;
  int64_t fp32_elements = 0;
  bool declined = false;
  double emulated_seconds = 0, fp32_seconds = 0;  // the estimates the choice compared
};

// How the product is cut so that the workspace stays bounded: `batches` products at a time when each is whole
// (rows == m and cols == n), otherwise tiles of C of rows x cols, one product at a time. The INT8 products run
// over rows and cols rounded up to 4 (zero lines of residues past the tile), the form cuBLAS's INT8 kernels take.
// With count = 1 it is the tiling of the codes' product, which the certificate's plan runs first; its residue
// buffers then hold kCodeSets sets of codes a line (the codes and the codes at half depth, math.hpp's half_code).
constexpr int kCodeSets = 2;
// The own product reads a half-depth set in steps of this many bytes: the set is zero from depth / 2 up to the next
// multiple (kernels.hpp's make_residues), what lies past it is never read.
constexpr int64_t kHalfSetStep = 128;

// What the codes' kernel finds of the pairs (math.hpp's codes_at_half_depth): the 64-deep pieces of lines with a
// nonzero code, and those whose codes at half depth keep less than half of their codes' sum.
struct CodeChunks {
  unsigned long long counted = 0, lost = 0;
};
// The moduli count whose residues a captured call's codes pass writes beside the codes where its preview foresees
// that count (uniform and normal operands' need; the residues of 7 moduli are scaled integers below 2^28): the
// residues' own pass then finds them written and stops (steps.cpp's run_tiles).
constexpr int kSpeculatedModuli = 7;

struct Tiling {
  int64_t batches = 1;
  int64_t rows = 0, cols = 0;
  int64_t padded_rows = 0, padded_cols = 0;  // rounded up to 4; padded_cols is also the INT32 products' pitch
  int64_t depth = 0;                         // k rounded up to kDepthAlignment
  size_t a_residue_bytes = 0;                // batches * count * padded_rows * depth (kCodeSets for count 1)
  size_t b_residue_bytes = 0;                // batches * count * padded_cols * depth (kCodeSets for count 1)
  // batches * count * padded_rows * padded_cols * 4, or, where byte_sums, batches * count * padded_rows *
  // residue_pitch(padded_cols) (wgmma_products.hpp)
  size_t product_bytes = 0;
  // The moduli's products of the whole problem in one pass write each sum's residue in one byte (the own product's,
  // residue_bytes_run): the product budget counts those bytes, not INT32 sums.
  bool byte_sums = false;
  // The codes' tiling (count 1) where the residues may be speculated (whole products in one pass at both counts):
  // the bytes left free before its buffers, where kSpeculatedModuli's tiling lays out its residues; 0 elsewhere.
  size_t speculated_bytes = 0;
};
// Where the INT8 products of a tiling run, as the tiling must know it: the device's multiprocessors and whether the
// project's own product runs there (wgmma_products.hpp's own_products_ready).
struct ProductPath {
  int processors = 0;
  bool own_ready = false;
};
// Whether steps.cpp's int8_products runs the own product for `pairs` products of these padded sizes on `path`, and
// whether, for the moduli's products, it writes their sums' residues in bytes (from kResidueBytesDepth deep).
bool own_products_run(int64_t padded_rows, int64_t padded_cols, int64_t depth, int64_t pairs, const ProductPath &path);
constexpr int64_t kResidueBytesDepth = 1024;
bool residue_bytes_run(int64_t padded_rows, int64_t padded_cols, int64_t depth, int64_t pairs, const ProductPath &path);
// The tiling of the codes (count 1) or of `count` moduli's residues and products on `path`. Where the moduli's products
// of the whole problem, all its batches in one pass, write bytes (residue_bytes_run), their budget counts bytes: more
// problems stay whole (16384 x 16384 x 4096 and 128 products of 1024^3 at 7 moduli), so that the codes' pass may
// write their residues (speculated_bytes) and A's residues are made once.
Tiling choose_tiling(int64_t m, int64_t n, int64_t k, int64_t batch, int count, const ProductPath &path);

// The rows of C's tile that each block of the plan's kernel (kernels.hpp's plan_needs, kPlanColumns columns a block)
// walks: kPlanMostRows, or half or a quarter of it (multiples of 8, the rows whose search descends) where chunks of
// kPlanMostRows would give fewer than kPlanFill blocks a multiprocessor. On the H200, 2048 x 2048 x 4096's plan took
// 38 us with 32 rows against 64 us with 128 (128 blocks: one a multiprocessor); 4096^3's 106 us with 128 against
// 116 us with 64 (each block loads its rows' facts and thresholds), where 128 rows already give 512 blocks.
constexpr int kPlanColumns = 256;
constexpr int kPlanMostRows = 128;
constexpr int kPlanFewestRows = 32;
constexpr int kPlanFill = 2;
int plan_chunk_rows(int64_t rows, int64_t cols, int64_t batches, int processors);

// The preview (kernels.hpp's preview_choice) looks at kPreviewLines lines of each operand, spread evenly over it
// (lines s * count / kPreviewLines), in each of up to kPreviewBatches products spread over the batch.
constexpr int kPreviewLines = 32;
constexpr int64_t kPreviewBatches = 2;

// The workspace: the summary the host reads, the operands of a kept graph's call (LiveOperands), per-line facts of
// both operands, the lists of
// lines holding NaN or Inf, every element's need (one byte each), the preview's buffers, then the residues (or codes)
// and products of one tile of `tiling`: the plan's (count 1) and the products' lay theirs over the same memory, one
// after the other. Offsets are 256-byte aligned.
struct WorkspaceLayout {
  size_t summary = 0;
  size_t live = 0;                      // LiveOperands
  size_t speculation = 0;               // an int: the count whose residues the codes pass writes (0: none)
  size_t a_lines = 0, b_lines = 0;      // LineFacts per line, over all batches
  size_t a_flagged = 0, b_flagged = 0;  // int64 ids of the lines that hold NaN or Inf
  size_t needs = 0;                     // uint8 per element of C, batch * m * n
  // The preview's: the facts and codes of its lines ([batch][operand][line], codes of depth bytes) and the INT32
  // products of their codes ([batch][row][col]).
  size_t preview_facts = 0, preview_codes = 0, preview_products = 0;
  size_t a_residues = 0, b_residues = 0, products = 0;
  size_t total = 0;
};
WorkspaceLayout workspace_layout(int64_t m, int64_t n, int64_t batch, const Tiling &tiling);

// The most workspace any operands of this shape can need on a device of `processors` multiprocessors (the tiling of
// every moduli count): where `own_possible` (compute capability 9.0), whether the own product runs there or not.
size_t max_workspace_bytes(int64_t m, int64_t n, int64_t k, int64_t batch, int processors, bool own_possible);

}  // namespace fastgemm::detail::ozaki
