// SPDX-License-Identifier: Apache-2.0
#include "distributions.hpp"

#include <cuda_runtime.h>

#include <cmath>

#include "launch.cuh"
#include "options.hpp"
#include "text.hpp"

namespace bench {
namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

__device__ uint64_t mix(uint64_t z) {
  z += kGolden;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// In (-1, 1), never 0, with 23 random bits: (j + 1/2) / 2^22 - 1 is exact in float.
__device__ double signed_unit(uint64_t bits) { return (static_cast<double>(bits >> 41) + 0.5) * 0x1p-22 - 1.0; }
// In (0, 1), never 0 or 1, with 23 random bits.
__device__ double open_unit(uint64_t bits) { return (static_cast<double>(bits >> 41) + 0.5) * 0x1p-23; }
// In (0, 1) with 53 random bits: the normal's tails need the small values.
__device__ double fine_unit(uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * 0x1p-53; }

__device__ double standard_normal(uint64_t first, uint64_t second) {
  return sqrt(-2.0 * log(fine_unit(first))) * cospi(2.0 * fine_unit(second));
}

// The scale exponent in [-20, 20] of one row of A or one column of B.
__device__ int line_exponent(uint64_t seed, int64_t batch, int64_t line) {
  return static_cast<int>(
             mix(mix(seed ^ 0x5CA1Eull) ^ static_cast<uint64_t>(batch) * kGolden ^ static_cast<uint64_t>(line)) % 41) -
         20;
}

// The hash every value of one element of op(X) draws its bits from.
__device__ uint64_t element_key(uint64_t seed, int64_t batch, int64_t row, int64_t col) {
  return mix(mix(mix(seed) ^ static_cast<uint64_t>(batch)) ^ static_cast<uint64_t>(row)) ^ static_cast<uint64_t>(col);
}

// The inner scaling's exponent d_l in [-range, range] of inner index l: a fixed seed, not the operand's, so that
// column l of op(A) and row l of op(B) draw the same d_l and their scales cancel in every product.
__device__ int inner_exponent(int64_t inner, int range) {
  return static_cast<int>(mix(0x1AE5CA1Eull ^ static_cast<uint64_t>(inner) * kGolden) %
                          static_cast<uint64_t>(2 * range + 1)) -
         range;
}

// A random sign times a full 24-bit significand in [1, 2).
__device__ double full_significand(uint64_t bits) {
  const double magnitude = 1.0 + static_cast<double>((bits >> 41) & 0x7FFFFF) * 0x1p-23;
  return (bits >> 63) != 0 ? -magnitude : magnitude;
}

// Values spread so as to try the emulation's certificate rather than its averages (see the descriptions).
__device__ double adversarial_value(Distribution distribution, int64_t along_line, uint64_t first, uint64_t second,
                                    uint64_t third) {
  if (distribution == Distribution::span24) return ldexp(full_significand(first), (second & 1) != 0 ? 0 : -23);
  // edge128: the line's maximum is 2 - 2^-23 (its first element); a quarter of the rest lie in [1, 2), the
  // others are 2^-6 - m 2^-30, m in [1, 64]: just under 1/128 of the maximum, every significand bit but the
  // lowest few set, so that they straddle the boundary of a slice taken relative to the line's maximum.
  const double sign = (first >> 63) != 0 ? -1.0 : 1.0;
  if (along_line == 0) return sign * (2.0 - 0x1p-23);
  if (second % 4 == 0) return full_significand(first);
  return sign * (0x1p-6 - static_cast<double>(1 + third % 64) * 0x1p-30);
}

__device__ float value_of(Distribution distribution, const OperandLayout &layout, int depth_log2, uint64_t seed,
                          int64_t batch, int64_t row, int64_t col) {
  const uint64_t key = element_key(seed, batch, row, col);
  const uint64_t first = mix(key), second = mix(key + 1), third = mix(key + 2);
  // The inner index l runs along op(A)'s rows and down op(B)'s columns.
  const int64_t inner = layout.is_a ? col : row;
  switch (distribution) {
    case Distribution::uniform: return static_cast<float>(signed_unit(first));
    case Distribution::uniform01: return static_cast<float>(open_unit(first));
    case Distribution::normal: return static_cast<float>(standard_normal(first, second));
    case Distribution::phi0_5:
    case Distribution::phi1:
    case Distribution::phi2:
    case Distribution::phi4: {
      const double phi = distribution == Distribution::phi0_5 ? 0.5
                         : distribution == Distribution::phi1 ? 1.0
                         : distribution == Distribution::phi2 ? 2.0
                                                              : 4.0;
      return static_cast<float>((open_unit(first) - 0.5) * exp(phi * standard_normal(second, third)));
    }
    case Distribution::wide_exponent: {
      const double magnitude = 1.0 + static_cast<double>((first >> 41) & 0x7FFFFF) * 0x1p-23;
      const int exponent = static_cast<int>(second % 33) - 16;
      return static_cast<float>(ldexp((first >> 63) != 0 ? -magnitude : magnitude, exponent));
    }
    case Distribution::scaled_rows_cols:
      return static_cast<float>(ldexp(signed_unit(first), line_exponent(seed, batch, layout.is_a ? row : col)));
    case Distribution::near_flt_max:
      // (1 - 2^-23) 2^128 < FLT_MAX, so A reaches FLT_MAX's binade; |B| < 2^-(ceil(log2 k) + 2) keeps every sum of
      // k products, and of their magnitudes, below 2^126.
      return static_cast<float>(ldexp(signed_unit(first), layout.is_a ? 128 : -(depth_log2 + 2)));
    case Distribution::near_denormal:
      // A's values are odd multiples of 2^-149 below 2^-126: denormals, exact; B's 2^24 lifts the products into
      // the normal range.
      return static_cast<float>(ldexp(signed_unit(first), layout.is_a ? -126 : 24));
    case Distribution::inner10:
    case Distribution::inner20:
    case Distribution::inner40: {
      const int range = distribution == Distribution::inner10 ? 10 : distribution == Distribution::inner20 ? 20 : 40;
      const int exponent = inner_exponent(inner, range);
      return static_cast<float>(ldexp(signed_unit(first), layout.is_a ? exponent : -exponent));
    }
    case Distribution::outlier:
      if (inner != 3) return static_cast<float>(signed_unit(first));
      return layout.is_a ? static_cast<float>(ldexp(signed_unit(first), 30)) : 0.0f;
    case Distribution::sparse1:
    case Distribution::sparse01:
      return second % 1000 < (distribution == Distribution::sparse1 ? 10u : 1u) ? static_cast<float>(signed_unit(first))
                                                                                : 0.0f;
    case Distribution::binary: return static_cast<float>(first >> 63);
    case Distribution::counts: return static_cast<float>(first >> 61);
    case Distribution::int2048: return static_cast<float>(first >> (layout.is_a ? 53 : 63));
    case Distribution::cancel: {
      // The pair (2t, 2t + 1) shares the value drawn for its even index, so that each element is still a
      // function of its own (row, col).
      const int64_t even = inner & ~int64_t{1};
      const uint64_t shared =
          mix(layout.is_a ? element_key(seed, batch, row, even) : element_key(seed, batch, even, col));
      const double value = signed_unit(shared);
      if (layout.is_a || inner == even) return static_cast<float>(value);
      return static_cast<float>(-value * (1.0 + 0x1p-12 * signed_unit(second)));
    }
    case Distribution::edge128:
    case Distribution::span24: return static_cast<float>(adversarial_value(distribution, inner, first, second, third));
  }
  return 0.0f;
}

__global__ void fill_distribution_kernel(float *data, OperandLayout layout, Distribution distribution, uint64_t seed,
                                         int depth_log2) {
  const int64_t per_batch = layout.rows * layout.cols;
  const int64_t count = per_batch * layout.batch;
  for (int64_t i = first_index(); i < count; i += grid_stride()) {
    const int64_t batch = i / per_batch, row = i % per_batch / layout.cols, col = i % layout.cols;
    const int64_t stored_row = layout.transposed ? col : row, stored_col = layout.transposed ? row : col;
    const int64_t offset = batch * layout.stride + (layout.row_major ? stored_row * layout.ld + stored_col
                                                                     : stored_col * layout.ld + stored_row);
    data[offset] = value_of(distribution, layout, depth_log2, seed, batch, row, col);
  }
}

}  // namespace

const std::vector<DistributionInfo> &distributions() {
  static const std::vector<DistributionInfo> list = {
      {Distribution::uniform, "uniform", "uniform(-1, 1)"},
      {Distribution::uniform01, "uniform01", "uniform(0, 1): all products positive"},
      {Distribution::normal, "normal", "normal(0, 1)"},
      {Distribution::phi0_5, "phi0.5", "(U - 0.5) exp(phi N(0, 1)), U uniform(0, 1), phi = 0.5"},
      {Distribution::phi1, "phi1", "the same, phi = 1"},
      {Distribution::phi2, "phi2", "the same, phi = 2"},
      {Distribution::phi4, "phi4", "the same, phi = 4"},
      {Distribution::wide_exponent, "wide_exponent",
       "random sign and mantissa, exponent uniform in [-16, 16]: magnitudes from 2^-16 to 2^17"},
      {Distribution::scaled_rows_cols, "scaled_rows_cols",
       "uniform(-1, 1), each row of A and each column of B times its own 2^e, e uniform in [-20, 20]"},
      {Distribution::near_flt_max, "near_flt_max",
       "A uniform(-1, 1) 2^128 (up to FLT_MAX's binade), B uniform(-1, 1) 2^-(ceil(log2 k) + 2): each product "
       "is below 2^126 / k, so every sum, and every (|A||B|)_ij, stays below 2^126 = FLT_MAX / 4"},
      {Distribution::near_denormal, "near_denormal",
       "A uniform(-1, 1) 2^-126 (denormal numbers, the smallest 2^-149), B uniform(-1, 1) 2^24: all but about "
       "one product in a million are normal numbers (above FLT_MIN = 2^-126)"},
      {Distribution::inner10, "inner10",
       "inner scaling: A = U D, B = D^-1 V, U and V uniform(-1, 1), D diagonal 2^d_l with d_l uniform in "
       "[-10, 10] for each inner index l: products of the same size, lines of A and B spanning 2^20"},
      {Distribution::inner20, "inner20", "the same, d_l in [-20, 20]"},
      {Distribution::inner40, "inner40", "the same, d_l in [-40, 40]: lines spanning 2^80"},
      {Distribution::outlier, "outlier",
       "uniform(-1, 1), but column 3 of A is 2^30 times larger and meets row 3 of B, all zero: the outlier "
       "dominates A's rows and adds nothing to C"},
      {Distribution::sparse1, "sparse1", "1% nonzeros, uniform(-1, 1), stored dense"},
      {Distribution::sparse01, "sparse01", "0.1% nonzeros, uniform(-1, 1), stored dense"},
      {Distribution::binary, "binary", "0 or 1: integer sums, exact in FP32 below 2^24", true},
      {Distribution::counts, "counts", "integers 0 to 7: integer sums, exact in FP32 below 2^24", true},
      {Distribution::int2048, "int2048",
       "A integers 0 to 2047, B 0 or 1: integer sums, exact in FP32 below 2^24 (all of them up to k = 8192)", true},
      {Distribution::cancel, "cancel",
       "pairwise cancellation: uniform(-1, 1) with A's column 2t + 1 equal to column 2t and B's row 2t + 1 equal "
       "to -(1 + 2^-12 u) times row 2t, u uniform(-1, 1): each pair's sum 2^12 times smaller than its terms",
       false, true},
      {Distribution::edge128, "edge128",
       "each row of A and column of B has maximum 2 - 2^-23; a quarter of the rest in [1, 2), the others just "
       "under 1/128 of the maximum (2^-6 - m 2^-30, m in [1, 64]) with their significands full: values that "
       "straddle the slices an INT8 split takes relative to the line's maximum"},
      {Distribution::span24, "span24",
       "random sign and 24-bit significand times 2^0 or 2^-23, half each: every line spans 2^24, and the small "
       "ones' products with large ones lie at FP32's unit roundoff of the sum"},
  };
  return list;
}

const DistributionInfo &distribution_info(Distribution distribution) {
  for (const DistributionInfo &info : distributions())
    if (info.id == distribution) return info;
  return distributions().front();
}

Distribution parse_distribution(const std::string &name) {
  std::vector<std::string> names;
  for (const DistributionInfo &info : distributions()) {
    if (name == info.name) return info.id;
    names.push_back(info.name);
  }
  throw UsageError("--dist '" + name + "' is no distribution (" + join(names, ", ") + ")");
}

void fill_distribution(float *data, const OperandLayout &layout, Distribution distribution, uint64_t seed) {
  int depth_log2 = 0;
  while ((int64_t{1} << depth_log2) < layout.depth) ++depth_log2;
  launch("fill_distribution_kernel", fill_distribution_kernel, blocks_for(layout.rows * layout.cols * layout.batch),
         data, layout, distribution, seed, depth_log2);
}

}  // namespace bench
