// SPDX-License-Identifier: Apache-2.0
// The exact integer arithmetic of FG_SGEMM_OZAKI_INT8 in doubles and its certificate, for the kernels and for the
// host (the unit tests check them against 128-bit integers and exact rational arithmetic).
#pragma once

#include <math.h>

#include <climits>
#include <cstdint>
#include <cstring>

#include "sgemm/ozaki_int8/plan.hpp"

#if defined(__CUDACC__)
#define FG_OZAKI_INLINE __host__ __device__ __forceinline__
#else
#define FG_OZAKI_INLINE inline
#endif

namespace fastgemm::detail::ozaki {

// The int c as a double, exactly, by adding integers below 2^53 (a double's bits plus c are 2^52 + 2^31 + c's, for
// |c| < 2^31): a double add instead of a conversion, whose throughput is a quarter of it on the GPU.
FG_OZAKI_INLINE double exact_double(int c) {
  const double offset = 0x1p52 + 0x1p31;
  uint64_t bits = 0;
  memcpy(&bits, &offset, sizeof bits);
  bits += static_cast<uint64_t>(static_cast<int64_t>(c));
  double shifted = 0;
  memcpy(&shifted, &bits, sizeof shifted);
  return shifted - offset;
}

// Residues in bytes (the own product's, wgmma_products.hpp) as the reconstruction reads them: a word of four signed
// bytes c, each XOR 0x80 (biased_bytes), so that byte t holds c + 128 in [0, 255]. The double with high word 0x43300000
// and that byte as its low word is 2^52 + c + 128, exactly; less 2^52 + 128 it is c. A byte permutation and a double
// add, where exact_double of a sign-extended byte takes a shift, a sign extension, a 64-bit add and the double add.
FG_OZAKI_INLINE uint32_t biased_bytes(uint32_t packed) { return packed ^ 0x80808080u; }

FG_OZAKI_INLINE double biased_byte_double(uint32_t biased, int t) {
#if defined(__CUDA_ARCH__)
  const unsigned low = __byte_perm(biased, 0u, 0x4440u + static_cast<unsigned>(t));  // byte t, zero-extended
  return __hiloint2double(0x43300000, static_cast<int>(low)) - (0x1p52 + 128.0);
#else
  const uint64_t bits = uint64_t{0x43300000} << 32 | (biased >> (8 * t) & 0xffu);
  double shifted = 0;
  memcpy(&shifted, &bits, sizeof shifted);
  return shifted - (0x1p52 + 128.0);
#endif
}

// u mod p for 0 <= u < 2^30 and a modulus 128 < p <= 256 (every one of kModuli), with reciprocal = floor(2^39 / p)
// + 1 (below 2^32): reciprocal p = 2^39 + e with 0 < e <= p, so u reciprocal / 2^39 = u / p + u e / (p 2^39) is
// below u / p + 2^-9, while the fraction of u / p is at most 1 - 1 / p <= 1 - 2^-8: the floors are equal.
FG_OZAKI_INLINE uint32_t reduce_below_2_30(uint32_t u, uint32_t p, uint32_t reciprocal) {
#if defined(__CUDA_ARCH__)
  const uint32_t high = __umulhi(u, reciprocal);
#else
  const uint32_t high = static_cast<uint32_t>((static_cast<uint64_t>(u) * reciprocal) >> 32);
#endif
  return u - (high >> 7) * p;
}

// The residue of the integer v modulo p in integer arithmetic, where |v| < 2^28 (kNarrow) or |v| < 2^52: the
// representative in [-p / 2, p / 2), in [-128, 127] for every modulus (at most 256). Adding
// p 2^21 (in [2^28.7, 2^29]) makes v, or the high part v >> 24 (|v >> 24| < 2^28), a nonnegative u < 2^30 of the
// same residue; the low 24 bits come back in as (high residue) (2^24 mod p) + low < 2^16 + 2^24.
template <bool kNarrow>
FG_OZAKI_INLINE int integer_residue(int64_t v, uint32_t p, uint32_t reciprocal, uint32_t power24_residue) {
  uint32_t r = 0;
  if (kNarrow) {
    r = reduce_below_2_30(static_cast<uint32_t>(static_cast<int32_t>(v) + static_cast<int32_t>(p << 21)), p,
                          reciprocal);
  } else {
    const auto high = static_cast<int32_t>(v >> 24);
    const auto low = static_cast<uint32_t>(v & 0xffffff);
    const uint32_t high_residue =
        reduce_below_2_30(static_cast<uint32_t>(high + static_cast<int32_t>(p << 21)), p, reciprocal);
    r = reduce_below_2_30(high_residue * power24_residue + low, p, reciprocal);
  }
  return r >= (p + 1) / 2 ? static_cast<int>(r) - static_cast<int>(p) : static_cast<int>(r);
}

// The narrow residues (|v| < 2^28) in FP32 arithmetic, which the GPU issues at twice the rate of integer
// multiplies. v = 2^12 h + l with h = v >> 12 (|h| <= 2^16) and l = v & 0xfff, both exact in floats (made from their
// bits, no conversion). For an odd modulus p, w = h c + l, with c = 2^12 mod p taken in (-p / 2, p / 2) (|c| <= 127),
// is congruent to v, and |w| <= 2^16 127 + 4095 < 2^23: the fma is exact. q = fma(w, 1/p rounded, 1.5 2^23) -
// 1.5 2^23 is w times the rounded inverse rounded to an integer; that product lies within |w| 2^-24 / p < 1 / (2p) of
// w / p, while w / p, a multiple of 1 / p with p odd, lies at least 1 / (2p) from every half-integer: q is w / p
// rounded to the nearest, and r = w - q p (exact) is integer_residue's representative, in [-(p - 1) / 2, (p - 1) / 2].
// The modulus 256 needs no arithmetic: its representative is the low byte of v.
struct SplitInteger {
  float high = 0, low = 0;
};
FG_OZAKI_INLINE float float_from_bits(uint32_t bits) {
  float value = 0;
  memcpy(&value, &bits, sizeof value);
  return value;
}
FG_OZAKI_INLINE SplitInteger split_integer(int32_t v) {
  SplitInteger split;
  split.high = float_from_bits(0x4B400000u + static_cast<uint32_t>(v >> 12)) - 0x1.8p23f;    // 1.5 2^23 + h
  split.low = float_from_bits(0x4B000000u | (static_cast<uint32_t>(v) & 0xfffu)) - 0x1p23f;  // 2^23 + l
  return split;
}
// 2^16 mod p in [-(p - 1) / 2, (p - 1) / 2] for an odd p, 0 for 256 (sum_residue_byte's c).
FG_OZAKI_INLINE int sum_split_residue(int p) {
  const int c = (1 << 16) % p;
  return 2 * c > p ? c - p : c;
}

// The low byte of an INT32 sum's residue modulo p (256, or odd) as s - p rint(s / p) has it (CrtSums::add; the own
// product's epilogue, wgmma_products.cu), in seven operations. s = 2^16 h + l with h = s >> 16 in [-2^15, 2^15) and
// l = s & 0xffff; with c = sum_split_residue(p) (|c| <= 127), w = h c + l is congruent to s modulo p and lies in
// [-2^15 127, 2^15 127 + 2^16 - 1], 2^23 integers: M + w, M = 2^23 + 2^15 127, lies in [2^23, 2^24), where floats are
// the integers, so the float whose bits are M's plus w is M + w, and w comes back exactly. q = fma(w, 1 / p rounded,
// 1.5 2^23) holds w / p rounded to the nearest in its bits' low 22 (float_residue_bits's argument: |w| < 2^23), and
// w - p q is the representative in [-(p - 1) / 2, (p - 1) / 2] for an odd p; for 256 (c = 0, any q) its low byte is
// l's, s's. The bits' 1.5 2^23 part, 0x4B400000 times p, has a low byte of 0: w - p bits(q) has w - p q's low byte.
FG_OZAKI_INLINE uint32_t sum_residue_byte(int32_t s, int32_t c, float inverse, int32_t p) {
  const int32_t w = (s >> 16) * c + (s & 0xffff);
  const float exact = float_from_bits(0x4B3F8000u + static_cast<uint32_t>(w)) - 12550144.0f;  // M = 12550144
  const float q = fmaf(exact, inverse, 0x1.8p23f);
  uint32_t bits = 0;
  memcpy(&bits, &q, sizeof bits);
  return (static_cast<uint32_t>(w) - static_cast<uint32_t>(p) * bits) & 0xffu;
}

// The bits of 1.5 2^23 + r: their low byte is r as an int8.
FG_OZAKI_INLINE uint32_t float_residue_bits(const SplitInteger &v, float p, float inverse, float split) {
  const float w = fmaf(v.high, split, v.low);
  const float q = fmaf(w, inverse, 0x1.8p23f) - 0x1.8p23f;
  const float shifted = fmaf(-q, p, w) + 0x1.8p23f;
  uint32_t bits = 0;
  memcpy(&bits, &shifted, sizeof bits);
  return bits;
}

// The sums of CrtConstants over the moduli, from the INT32 product modulo each.
struct CrtSums {
  double high = 0, low = 0;
  bool all_zero = true;  // every residue of the product is 0: the product is 0, exactly

  // Adds the product's sum of residue products for modulus l (any integer congruent to the product modulo p_l,
  // |sum| < 2^31): reduced to [-p_l / 2, p_l / 2] first; the high sum stays exact (CrtConstants).
  FG_OZAKI_INLINE void add(double sum, const CrtConstants &constants, int l) {
    const double c = fma(-rint(sum * constants.inverse_modulus[l]), constants.modulus[l], sum);
    all_zero = all_zero && c == 0;
    high = fma(c, constants.weight_high[l], high);
    low = fma(c, constants.weight_low[l], low);
  }

  // add's sums for a residue c already reduced as add reduces it (the own product's bytes), given as its exact
  // double. all_zero is left as it is: the reconstruction tests the bytes themselves, and only for the few elements
  // whose certificate asks (certified_by_value).
  FG_OZAKI_INLINE void add_reduced(double c, const CrtConstants &constants, int l) {
    high = fma(c, constants.weight_high[l], high);
    low = fma(c, constants.weight_low[l], low);
  }

  // The product V itself, rounded to a double: valid while |V| <= (P / 2)(1 - 2^-19), which the lines' scaling keeps
  // (scale_target). X = sum_l c_l W_l is qP + V; high is sum_l c_l W_l,high exactly, low sum_l c_l W_l,low within
  // 2^(grid_bits - 36) < P 2^-74 (plan.cpp's certificate_constants), and |X| < 13 * 128 P < 2^11 P (|c_l| <= 128,
  // W_l < P). So (high + low) / P, the sum and the product rounded and 1 / P within a relative 2^-51 of its value
  // (P and its inverse each rounded), lies within 2^-74 + 2^-42 + 2^-40 + 2^-42 < 2^-39 of X / P = q + V / P, whose
  // distance to the nearest half-integer is at least 2^-20: its nearest integer is q.
  FG_OZAKI_INLINE double value(const CrtConstants &constants) const {
    const double q = rint((high + low) * constants.inverse_product);
    return fma(-q, constants.product_high, high) + fma(-q, constants.product_low, low);
  }
};

// What the scan finds of one line x (a row of op(A) or a column of op(B)), for the scaling and the certificate.
enum LineFlags : int {
  kLineNonFinite = 1,  // holds NaN or Inf: its elements of C are FP32's (fix_flagged)
  kLineFaithful = 2,   // every nonzero element has a code of at least 1 (no nonzero element is lost to the codes)
};
constexpr float kDenseRoot = 3.0e38f;

// sqrt(t) for t >= 1, rounded down by up to 2^-19 (rsqrtf's 2 ulps and three roundings to float are below 2^-20):
// no double square root, whose slow path the scan's one lane per line would wait for.
FG_OZAKI_INLINE float root_below(int t) {
  const float x = static_cast<float>(t);  // exact: t < 2^24
#if defined(__CUDA_ARCH__)
  const float root = x * rsqrtf(x);
#else
  const float root = static_cast<float>(sqrt(static_cast<double>(x)));
#endif
  return root * (1.0f - 0x1p-20f);
}

struct LineFacts {
  double norm1 = 0;           // sum |x_l|, rounded up
  double norm2 = 0;           // ||x||_2, rounded up
  double inverse_norm2 = 1;   // 1 / ||x||_2, rounded down (1 for a line of zeros)
  int integral_exponent = 0;  // z: x_l 2^e is an integer for every l and every e >= z (a very low z for zeros)
  int code_exponent = 0;      // g: max |x_l| 2^g lies in [64, 128), so the codes floor(|x_l| 2^g) in [0, 127]
  int nonzeros = 0;
  int flags = 0;
  // For every moduli count N: 1 / the line's scale (line_scale), rounded, and bit N of `rounding` set where the
  // scaled line rounds. Computed once per line, so that the certificate of an element divides nothing.
  double inverse_scale[kMaxModuli + 1] = {};
  int rounding = 0;
  // For a finite line with fewer nonzeros t than k: at most sqrt(max(t, 1)), within 2^-19 of it
  // (element_error_allowance's); kDenseRoot for the others, above any line's; 1 (the least) for a line that holds NaN
  // or Inf, whose elements are FP32's.
  float terms_root = 1.0f;
};

// The integral exponent of a line of zeros: below any scale exponent.
constexpr int kNoIntegralExponent = -100000;

// 2^exponent for exponents of normal doubles (-1022 .. 1023), from its bits: no call to ldexp.
FG_OZAKI_INLINE double power_of_two(int exponent) {
  const uint64_t bits = static_cast<uint64_t>(exponent + 1023) << 52;
  double value = 0;
  memcpy(&value, &bits, sizeof value);
  return value;
}

FG_OZAKI_INLINE double round_up(double value) { return value * (1.0 + 0x1p-50); }
FG_OZAKI_INLINE double round_down(double value) { return value * (1.0 - 0x1p-50); }

// The smallest e for which the float x (nonzero, finite) times 2^e is an integer: minus the exponent of its
// lowest set bit.
FG_OZAKI_INLINE int integral_exponent_of(float x) {
  uint32_t bits = 0;
  memcpy(&bits, &x, sizeof bits);
  const int biased = static_cast<int>(bits >> 23 & 0xffu);
  uint32_t significand = bits & 0x7fffffu;
  int lowest_bit_exponent = -149;  // of the significand's bit 0, for subnormals
  if (biased != 0) {
    significand |= 0x800000u;
    lowest_bit_exponent = biased - 150;
  }
#if defined(__CUDA_ARCH__)
  const int trailing_zeros = __ffs(static_cast<int>(significand)) - 1;
#else
  const int trailing_zeros = __builtin_ctz(significand);
#endif
  return -(lowest_bit_exponent + trailing_zeros);
}

// The value of the lowest set bit of x (nonzero, finite): 2^-integral_exponent_of(x), a power of two down to 2^-149.
// Clearing the significand's lowest set bit keeps |x| in its binade, so the difference is that bit, exactly
// (subnormal differences too: nothing here flushes them); a power of two is its own lowest bit. A line's least
// such value gives its integral exponent (integral_exponent_of_bit) in full-rate operations, where
// integral_exponent_of counts trailing zeros.
FG_OZAKI_INLINE float lowest_bit_value(float x) {
  const float magnitude = fabsf(x);
  uint32_t bits = 0;
  memcpy(&bits, &magnitude, sizeof bits);
  if ((bits & 0x7fffffu) == 0) return magnitude;
  const uint32_t cleared_bits = bits & (bits - 1u);
  float cleared = 0;
  memcpy(&cleared, &cleared_bits, sizeof cleared);
  return magnitude - cleared;
}

// -e for a power of two 2^e (a value of lowest_bit_value).
FG_OZAKI_INLINE int integral_exponent_of_bit(float bit) {
  uint32_t bits = 0;
  memcpy(&bits, &bit, sizeof bits);
  const int biased = static_cast<int>(bits >> 23 & 0xffu);
  if (biased != 0) return 127 - biased;
#if defined(__CUDA_ARCH__)
  const int position = 31 - __clz(static_cast<int>(bits));
#else
  const int position = 31 - __builtin_clz(bits);
#endif
  return 149 - position;  // a subnormal: 2^-149 times 2^position
}

// How a line is scaled at a moduli count whose scale target is S: by S / ||x||_2 (rounded down, to 29 significant
// bits, so that a float times it is exact in a double), or, where the line is made of integers at a power of two
// no larger, by that power of two: then nothing rounds, and integers stay exact. Either way the scaled line's 2-norm
// is at most S.
struct LineScale {
  double scale;
  bool rounds;
};
FG_OZAKI_INLINE LineScale line_scale(const LineFacts &x, double target) {
  const double raw = target * x.inverse_norm2;
  int exponent = 0;
  frexp(raw, &exponent);  // raw in [2^(exponent-1), 2^exponent)
  if (exponent - 1 >= x.integral_exponent) return {ldexp(1.0, exponent - 1), false};
  uint64_t bits = 0;
  memcpy(&bits, &raw, sizeof bits);
  bits &= ~((uint64_t{1} << 24) - 1);  // 28 of the 52 stored bits, and the leading one
  double truncated = 0;
  memcpy(&truncated, &bits, sizeof truncated);
  return {truncated, true};
}

// g = 7 - e for the largest magnitude of a line in [2^(e-1), 2^e) (nonzero): the line's codes' exponent
// (LineFacts::code_exponent).
FG_OZAKI_INLINE int code_exponent_of(float largest) {
  int largest_exponent = 0;
  frexp(static_cast<double>(largest), &largest_exponent);
  return 7 - largest_exponent;
}

// A line's scale at one moduli count, whose scale target is `target`, as its facts hold it (line_facts' last step,
// one count at a time): none (made false) for a line that holds NaN or Inf, or a count without a target (0). Reads
// the line's flags, inverse_norm2 and integral_exponent only.
struct CountScale {
  bool made = false;
  double inverse = 0;  // 1 / line_scale, rounded
  bool rounds = false;
};
FG_OZAKI_INLINE CountScale count_scale(const LineFacts &line, double target) {
  CountScale found;
  if ((line.flags & kLineNonFinite) != 0 || target == 0.0) return found;
  const LineScale scale = line_scale(line, target);
  found.made = true;
  found.inverse = 1.0 / scale.scale;
  found.rounds = scale.rounds;
  return found;
}
FG_OZAKI_INLINE void add_line_scale(LineFacts &line, int count, const CountScale &scale) {
  if (!scale.made) return;
  line.inverse_scale[count] = scale.inverse;
  if (scale.rounds) line.rounding |= 1 << count;
}

// A line's facts from its sums in double (of at most 2^17 terms, within 2^-36 of the exact ones: the norms are
// rounded up by 2^-30) and its other statistics over the nonzero elements, without its scales (add_line_scale).
FG_OZAKI_INLINE LineFacts line_facts_unscaled(double squares, double absolutes, float largest, float smallest,
                                              int nonzeros, int integral, bool finite,
                                              const CertificateConstants &constants) {
  LineFacts line;
  if (!finite) {
    line.flags = kLineNonFinite;
    return line;
  }
  const double rounded_up = 1.0 + 0x1p-30;
  line.norm1 = absolutes * rounded_up;
  line.nonzeros = nonzeros;
  line.terms_root = nonzeros < constants.depth ? root_below(nonzeros > 1 ? nonzeros : 1) : kDenseRoot;
  line.integral_exponent = nonzeros > 0 ? integral : kNoIntegralExponent;
  line.flags = kLineFaithful;
  if (nonzeros > 0) {
    line.norm2 = sqrt(squares) * rounded_up;
    line.inverse_norm2 = round_down(1.0 / line.norm2);
    line.code_exponent = code_exponent_of(largest);
    if (ldexp(static_cast<double>(smallest), line.code_exponent) < 1.0) line.flags = 0;
  }
  return line;
}

// A line's facts (line_facts_unscaled) and its scale at every moduli count. The scan's kernels find the same facts by
// parts, the counts' scales side by side (operand_kernels.cu's finishes; tests/gpu_internal/test_scan_facts.cpp).
FG_OZAKI_INLINE LineFacts line_facts(double squares, double absolutes, float largest, float smallest, int nonzeros,
                                     int integral, bool finite, const CertificateConstants &constants) {
  LineFacts line = line_facts_unscaled(squares, absolutes, largest, smallest, nonzeros, integral, finite, constants);
  for (int count = kMinModuli; count <= kMaxModuli; ++count) {
    // count_scale tests the target too (tested here as well, the scan's kernel had kept 64 registers, 84 without,
    // when it called this).
    if (constants.scale_target[count] == 0.0) continue;
    add_line_scale(line, count, count_scale(line, constants.scale_target[count]));
  }
  return line;
}

// A rigorous bound of the rounding error of one element's emulated sum, in the operands' units (before alpha):
// with a_l = x_l s and b_l = y_l t rounded to integers a_l + d_l, b_l + h_l (|d_l|, |h_l| <= 1/2, and 0 for a
// line that does not round),
//   |sum (a_l + d_l)(b_l + h_l) - sum a_l b_l| / (s t) <= max|d| ||y||_1 / s + max|h| ||x||_1 / t
//                                                         + sum |d_l h_l| / (s t).
FG_OZAKI_INLINE double rounding_error_bound(const LineFacts &x, const LineFacts &y, int count) {
  const bool x_rounds = (x.rounding >> count & 1) != 0, y_rounds = (y.rounding >> count & 1) != 0;
  const double x_unit = round_up(x.inverse_scale[count]), y_unit = round_up(y.inverse_scale[count]);
  double bound = 0;
  if (x_rounds) bound += 0.5 * x_unit * y.norm1;
  if (y_rounds) bound += 0.5 * y_unit * x.norm1;
  if (x_rounds && y_rounds)
    bound += 0.25 * exact_double(x.nonzeros < y.nonzeros ? x.nonzeros : y.nonzeros) * x_unit * y_unit;
  return round_up(bound);
}

// 2^-24 sqrt(t), rounded down, for an element of lines x and y: t = min(k, nonzeros of x, nonzeros of y), at least 1,
// bounds the count of nonzero terms of its sum, the only ones FP32's sum rounds. Two dense lines take the constant;
// the others the lesser of the lines' roots (LineFacts::terms_root, at most the square root). No square root here:
// the plan evaluates this for every element it searches.
FG_OZAKI_INLINE double element_error_allowance(int fewest_nonzeros, float least_root,
                                               const CertificateConstants &constants) {
  if (fewest_nonzeros >= constants.depth) return constants.error_allowance;
  return 0x1p-24 * static_cast<double>(least_root);
}
FG_OZAKI_INLINE double element_error_allowance(const LineFacts &x, const LineFacts &y,
                                               const CertificateConstants &constants) {
  return element_error_allowance(x.nonzeros < y.nonzeros ? x.nonzeros : y.nonzeros, fminf(x.terms_root, y.terms_root),
                                 constants);
}

// Whether an element whose emulated value (the rebuilt sum divided by the two scales, times alpha, plus beta C0,
// rounded once to float) is within `error` of the exact sum (before alpha) and below `magnitude` (before alpha)
// meets the guarantee
//   |C - R| <= 2^-24 (1 + sqrt(t)) (|alpha| (|A||B|)_ij + |beta C0|),  t = min(k, nonzeros of row i, of column j),
// given `lower` <= (|A||B|)_ij; `error_allowance` is element_error_allowance's 2^-24 sqrt(t). The final rounding to
// float takes 2^-24 |x| <= 2^-24 (|R| + |x - R|), and 2^-150 below FLT_MIN; the two divisions by the scales and the
// products by alpha and beta in double at most 2^-50 of their magnitude; the rest must fit in 2^-24 sqrt(t) (|alpha|
// lower + |beta C0|). NaN anywhere is not certified.
FG_OZAKI_INLINE bool meets_guarantee(double error, double magnitude, double alpha_abs, double beta_c_abs, double lower,
                                     double error_allowance) {
  const double worst =
      (alpha_abs * error + (alpha_abs * magnitude + beta_c_abs) * 0x1p-50) * (1.0 + 0x1p-20) + 0x1p-149;
  const double allowed = error_allowance * (alpha_abs * lower + beta_c_abs) * (1.0 - 0x1p-40);
  return worst <= allowed;
}

// What the certificate of one element holds against the rounding error bound of each count, before any product:
// the terms that do not depend on the count, bounded independently of it, so that a count that certifies an element
// is followed by larger ones that do too (the scales grow with the count, and a line that does not round at one
// count does not at larger ones). `lower` <= (|A||B|)_ij.
struct ElementAllowance {
  double alpha_abs, fixed, allowed;
};
FG_OZAKI_INLINE ElementAllowance element_allowance(const LineFacts &x, const LineFacts &y, double lower,
                                                   double alpha_abs, double beta_c_abs,
                                                   const CertificateConstants &constants) {
  const double norms = x.norm2 * y.norm2;
  // meets_guarantee's terms, with every rounding here and below covered by one more factor (1 + 2^-40).
  return {alpha_abs,
          alpha_abs * constants.reconstruction_error * norms +
              (alpha_abs * constants.magnitude * norms + beta_c_abs) * 0x1p-50,
          element_error_allowance(x, y, constants) * (alpha_abs * lower + beta_c_abs) * (1.0 - 0x1p-40)};
}
FG_OZAKI_INLINE bool certified_before(const LineFacts &x, const LineFacts &y, const ElementAllowance &allowance,
                                      int count, const CertificateConstants &constants) {
  if (constants.scale_target[count] == 0.0) return false;
  const double worst = (allowance.alpha_abs * rounding_error_bound(x, y, count) + allowance.fixed) *
                           ((1.0 + 0x1p-20) * (1.0 + 0x1p-40)) +
                       0x1p-149;
  return worst <= allowance.allowed;
}

// The code at half depth of two elements' codes c_a = floor(|x_2m| 2^g) and c_b = floor(|x_2m+1| 2^g) (integers
// 0..127, as floats): floor(sqrt(c_a c_b)) <= sqrt(|x_2m| |x_2m+1|) 2^g, in [0, 127]. For two lines x and y with
// such codes u_m and v_m,
//   2 sum_m u_m v_m 2^-(g+h) <= sum_m 2 sqrt(|x_2m| |x_2m+1|) sqrt(|y_2m| |y_2m+1|) <= sum_l |x_l| |y_l|,
// each pair's two terms being at least twice their geometric mean: the codes' product at half the depth, doubled,
// is a lower bound of (|A||B|)_ij as the full one is. It misses what a pair with one zero holds, so it gives no zero
// test (kLineFaithful), and it falls far below the full one where a pair's magnitudes differ (codes_at_half_depth).
// The root: n = c_a c_b is an integer below 2^14, exact in a float. n rsqrt(n) is within 2^-14 of sqrt(n), while the
// root of an integer that is no square lies at least 1 / (2 sqrt(n)) >= 2^-8 below the next integer: floor(r +
// 2^-10) is floor(sqrt(n)) exactly, on the device and on the host alike.
FG_OZAKI_INLINE int half_code(float code_a, float code_b) {
  const float n = code_a * code_b;
#if defined(__CUDA_ARCH__)
  const float root = n * rsqrtf(fmaxf(n, 1.0f));
  return static_cast<int>(__float_as_uint(__fadd_rd(root + 0x1p-10f, 0x1p23f)) & 0xffu);  // 2^23 + the floor
#else
  const float root = n * (1.0f / sqrtf(fmaxf(n, 1.0f)));
  return static_cast<int>(floorf(root + 0x1p-10f));
#endif
}

// Whether the plan's codes' product takes the half-depth set: at most one 64-deep piece of the operands' lines in
// 256 (of those with a nonzero code) lost more than half of its codes' sum to its pairs (4 sum u < sum c), so that
// nearly every element keeps most of its lower bound. Uniform and normal operands keep 0.7-0.8 of it, and their
// moduli counts (a count covers a factor of about 256 in the bound); sparse operands, and exponents spread over
// 2^16, lose most pieces and keep the full depth. A choice of speed only: either set gives a sound bound.
FG_OZAKI_INLINE bool codes_at_half_depth(const CodeChunks &chunks) {
  return chunks.counted > 0 && chunks.lost * 256 <= chunks.counted;
}

// A count that certifies element (i, j) before any product, from the product of the codes of x and y
// (sum_l floor(|x_l| 2^g) floor(|y_l| 2^h), so that lower = code_product 2^-(g+h) <= (|A||B|)_ij), alpha, beta and
// C0 (0 when beta is 0); kNeedsFp32 when none does. The search starts at `guess` (a neighbour's need); from a
// certifying guess it goes down only where `descend` (the fewest that certify), so that most elements take one
// evaluation and the needs still follow the operands. Above a failing guess (or first, where `largest_first`) it
// tries the largest count, then bisects: certifying is monotone in the count (element_allowance), so an element no
// count certifies, which inner-scaled operands give by the million, costs two evaluations, not one per count.
FG_OZAKI_INLINE int element_need(const LineFacts &x, const LineFacts &y, int32_t code_product, float alpha, float beta,
                                 float c0, const CertificateConstants &constants, int guess, bool descend = true,
                                 bool largest_first = false) {
  // No nonzero element of x meets one of y (a line of zeros, or the codes miss none): every term is 0, so is the sum
  // at any count (the scaled zero line's integers are 0, and so is V).
  if (code_product == 0 &&
      (x.nonzeros == 0 || y.nonzeros == 0 || ((x.flags & kLineFaithful) != 0 && (y.flags & kLineFaithful) != 0)))
    return kMinModuli;
  // Code exponents lie in [-122, 155]: their sum's power of two is a normal double.
  const double lower = exact_double(code_product) * power_of_two(-(x.code_exponent + y.code_exponent));
  const double beta_c_abs = beta == 0.0f ? 0.0 : fabs(static_cast<double>(beta) * static_cast<double>(c0));
  const ElementAllowance allowance =
      element_allowance(x, y, lower, fabs(static_cast<double>(alpha)), beta_c_abs, constants);
  // Where the neighbour needed FP32 (`largest_first`), so will this element, most likely: one evaluation tells.
  if (largest_first && !certified_before(x, y, allowance, kMaxModuli, constants)) return kNeedsFp32;
  int count = guess < kMinModuli ? kMinModuli : guess > kMaxModuli ? kMaxModuli : guess;
  if (certified_before(x, y, allowance, count, constants)) {
    while (descend && count > kMinModuli && certified_before(x, y, allowance, count - 1, constants)) --count;
    return count;
  }
  if (count == kMaxModuli || !certified_before(x, y, allowance, kMaxModuli, constants)) return kNeedsFp32;
  int high = kMaxModuli;  // certifies; `count` does not
  while (high - count > 1) {
    const int middle = (count + high) / 2;
    if (certified_before(x, y, allowance, middle, constants))
      high = middle;
    else
      count = middle;
  }
  return high;
}

// The plan's shortcut (plan_kernel): certified_before's condition for every row of a group at once, as a least code
// product per moduli count. Multiplied by 2^(g + h) (the codes' scales, exact), the condition reads
//   K1 |alpha| [(1 + 2^-50) (U_x N1_y / 2 + U_y N1_x / 2 + min(nnz) U_x U_y / 4) + c1 N2_x N2_y]
//     + K1 2^-50 |beta C0| 2^(g+h) + 2^-149 P_x P_y  <=  e (1 - 2^-40) (|alpha| code + |beta C0| 2^(g+h)),
// with U = round_up(1 / scale) 2^g where the line rounds at the count (else 0), N1 = ||.||_1 2^g, N2 = ||.||_2 2^g,
// P = 2^g, c1 = reconstruction_error + magnitude 2^-50, K1 = (1 + 2^-20)(1 + 2^-40), e = error_allowance. The
// beta terms only help (e (1 - 2^-40) >= 2^-25 > K1 2^-50), so leaving them out is sufficient; every other term
// grows with each line's U, N1, N2, P and nonzeros, so the group's largest of each (taken separately) give a code
// product that suffices for every row of the group. U, N1 and N2 do not change when a line is scaled by a power of
// two: lines alike in shape but not in size share thresholds.
struct CodeBounds {
  double unit[kMaxModuli + 1] = {};  // U at each count
  double norm1 = 0, norm2 = 0, power = 0, nonzeros = 0;
  // The fewest nonzeros of a line with any, and its terms_root (its allowance, element_error_allowance, is the
  // least). A line of zeros needs no bound: its code products are 0, below every threshold.
  int fewest_nonzeros = INT32_MAX;
  float least_root = kDenseRoot;
};
FG_OZAKI_INLINE CodeBounds code_bounds(const LineFacts &x) {
  CodeBounds bounds;
  if ((x.flags & kLineNonFinite) != 0) return bounds;  // its elements are FP32's: no bound is asked of it
  const double power = power_of_two(x.code_exponent);
  for (int count = kMinModuli; count <= kMaxModuli; ++count)
    bounds.unit[count] = (x.rounding >> count & 1) != 0 ? round_up(x.inverse_scale[count]) * power : 0.0;
  bounds.norm1 = x.norm1 * power;
  bounds.norm2 = x.norm2 * power;
  bounds.power = power;
  bounds.nonzeros = exact_double(x.nonzeros);
  if (x.nonzeros > 0) bounds.fewest_nonzeros = x.nonzeros, bounds.least_root = x.terms_root;
  return bounds;
}
FG_OZAKI_INLINE void take_largest(CodeBounds &into, const CodeBounds &other) {
  for (int count = kMinModuli; count <= kMaxModuli; ++count)
    into.unit[count] = fmax(into.unit[count], other.unit[count]);
  into.norm1 = fmax(into.norm1, other.norm1);
  into.norm2 = fmax(into.norm2, other.norm2);
  into.power = fmax(into.power, other.power);
  into.nonzeros = fmax(into.nonzeros, other.nonzeros);
  into.fewest_nonzeros = into.fewest_nonzeros < other.fewest_nonzeros ? into.fewest_nonzeros : other.fewest_nonzeros;
  into.least_root = fminf(into.least_root, other.least_root);
}
// thresholds[N] (N = kMinModuli..kMaxModuli): an element of a row bounded by `rows` and of `column` whose code
// product is at least thresholds[N] is certified at N moduli; INT32_MAX (above any code product) where that bound
// certifies none. Nonincreasing in N, like the certificate. The double arithmetic here rounds at most a few dozen
// times, each by 2^-53: the last factor (1 + 2^-40) covers them.
FG_OZAKI_INLINE void code_thresholds(const CodeBounds &rows, const CodeBounds &column, double alpha_abs,
                                     const CertificateConstants &constants, int32_t (&thresholds)[kMaxModuli + 1]) {
  const double k1 = (1.0 + 0x1p-20) * (1.0 + 0x1p-40);
  const double c1 = constants.reconstruction_error + constants.magnitude * 0x1p-50;
  const double fixed = k1 * c1 * rows.norm2 * column.norm2 + 0x1p-149 * rows.power * column.power / alpha_abs;
  const double nonzeros = fmin(rows.nonzeros, column.nonzeros);
  const double divisor = element_error_allowance(rows.fewest_nonzeros < column.fewest_nonzeros ? rows.fewest_nonzeros
                                                                                               : column.fewest_nonzeros,
                                                 fminf(rows.least_root, column.least_root), constants) *
                         (1.0 - 0x1p-40);
  int32_t last = 0;  // the threshold of the count above: every threshold is at least 1
  for (int count = kMaxModuli; count >= kMinModuli; --count) {
    int32_t threshold = INT32_MAX;
    if (constants.scale_target[count] != 0.0) {
      const double rounding = 0.5 * rows.unit[count] * column.norm1 + 0.5 * column.unit[count] * rows.norm1 +
                              0.25 * nonzeros * rows.unit[count] * column.unit[count];
      const double least = (k1 * (1.0 + 0x1p-50) * rounding + fixed) / divisor * (1.0 + 0x1p-40);
      if (least < 0x1p31) threshold = static_cast<int32_t>(ceil(least));  // false for inf and NaN too
    }
    last = threshold > last ? threshold : last;
    thresholds[count] = last;
  }
}

// The plan's shortcut: the fewest count N whose threshold (code_thresholds', `threshold(N)`, nonincreasing in N) the
// code product reaches, kNeedsFp32 where it reaches none. A product from `low`, the threshold of `guess`, up to, not
// including, `high`, that of guess - 1 (INT32_MAX for kMinModuli), reaches guess's and no fewer count's: it is
// answered in two comparisons (plan_kernel: neighbours mostly need the same count), the others by comparing with
// every count's.
template <typename Threshold>
FG_OZAKI_INLINE int shortcut_need(int32_t code_product, int guess, int32_t low, int32_t high, Threshold threshold) {
  int shortcut = guess;
  if (code_product < low || code_product >= high) {
    shortcut = kNeedsFp32;
    if (code_product >= threshold(kMaxModuli)) {
      shortcut = kMinModuli;
      for (int count = kMinModuli; count < kMaxModuli; ++count) shortcut += code_product < threshold(count);
    }
  }
  return shortcut;
}

// After the products, for an element the bound above could not certify at `count` moduli: `value` is the rebuilt
// sum times the inverses of the scales (before alpha), `all_zero` whether every residue of it was 0. |value| less the
// error bound is a lower bound of |(AB)_ij| <= (|A||B|)_ij; and where neither line rounds, the sum is 0 exactly when
// every residue is.
FG_OZAKI_INLINE bool certified_by_value(const LineFacts &x, const LineFacts &y, double value, bool all_zero,
                                        float alpha, float beta, float c0, int count,
                                        const CertificateConstants &constants) {
  if ((x.rounding >> count & 1) == 0 && (y.rounding >> count & 1) == 0 && all_zero) return true;
  const double norms = x.norm2 * y.norm2;
  const double error = round_up(rounding_error_bound(x, y, count) + constants.reconstruction_error * norms);
  const double lower = round_down(fabs(value)) - error;
  const double beta_c_abs = beta == 0.0f ? 0.0 : fabs(static_cast<double>(beta) * static_cast<double>(c0));
  return lower > 0.0 && meets_guarantee(error, fabs(value), fabs(static_cast<double>(alpha)), beta_c_abs, lower,
                                        element_error_allowance(x, y, constants));
}

}  // namespace fastgemm::detail::ozaki
