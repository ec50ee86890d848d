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

__device__ float value_of(Distribution distribution, const OperandLayout &layout, int depth_log2, uint64_t seed,
                          int64_t batch, int64_t row, int64_t col) {
  const uint64_t key =
      mix(mix(mix(seed) ^ static_cast<uint64_t>(batch)) ^ static_cast<uint64_t>(row)) ^ static_cast<uint64_t>(col);
  const uint64_t first = mix(key), second = mix(key + 1), third = mix(key + 2);
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
