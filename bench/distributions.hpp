// SPDX-License-Identifier: Apache-2.0
// The input distributions of `fastgemm-bench accuracy` and of `sgemm --dist`: from the benign uniform(-1, 1) to
// values spread over a wide range of exponents and values at the ends of FP32's range, generated on the device
// from a counter-based hash, so that a seed gives the same matrices on any GPU and in any layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

enum class Distribution {
  uniform,    // uniform(-1, 1)
  uniform01,  // uniform(0, 1): every product positive, no cancellation
  normal,     // N(0, 1)
  phi0_5,     // (U - 0.5) exp(phi N(0, 1)), U uniform(0, 1), for phi 0.5, 1, 2, 4
  phi1,
  phi2,
  phi4,
  wide_exponent,     // random sign and mantissa, exponent uniform in [-16, 16]
  scaled_rows_cols,  // uniform(-1, 1), each row of A and column of B scaled by its own 2^e, e in [-20, 20]
  near_flt_max,      // A up to FLT_MAX, B scaled down so that the sums stay finite
  near_denormal,     // A denormal, B scaled up so that the products are normal numbers
  inner10,           // A = U D, B = D^-1 V: U, V uniform(-1, 1), D = diag(2^d_l), d_l uniform in [-E, E], E = 10
  inner20,           // E = 20
  inner40,           // E = 40
  outlier,           // column 3 of op(A) 2^30 times the rest, meeting row 3 of op(B), all zero
  sparse1,           // 1% nonzeros, uniform(-1, 1), stored dense
  sparse01,          // 0.1% nonzeros
  binary,            // 0 or 1
  counts,            // integers 0 ... 7
  int2048,           // op(A) integers 0 ... 2047, op(B) 0 or 1
  cancel,            // adjacent inner pairs that nearly cancel: a_{i,2t+1} = a_{i,2t}, b_{2t+1,j} ~ -b_{2t,j}
  edge128,           // full-mantissa values just below 1/128 of their line's maximum, among large ones
  span24,            // each element 2^0 or 2^-23 times a full 24-bit mantissa: lines spanning 2^24
};

struct DistributionInfo {
  Distribution id;
  const char *name;         // as --dist takes it
  const char *description;  // for --help
  // Integer-valued operands, no negative values: every partial sum of an element no larger than the exact
  // sum, so that where (|A||B|)_ij < 2^24 FP32 arithmetic, and the emulation, give the exact product.
  bool integer = false;
  // Inner pairs that cancel: cuBLAS's summation order adds each pair first, which makes its error unusually
  // small, so that only the per-element guarantee is judged, not the ratios to cuBLAS.
  bool pairwise_cancellation = false;
};

// Every distribution, in the accuracy suite's order.
const std::vector<DistributionInfo> &distributions();
const DistributionInfo &distribution_info(Distribution distribution);
// Throws UsageError naming the known names.
Distribution parse_distribution(const std::string &name);

// One operand of C = op(A) op(B) as it lies in memory: op(A) is m x k, op(B) k x n, each stored in the layout,
// transposed or not, with its leading dimension, batch after batch `stride` elements apart. Values are a function
// of (seed, batch, row and column of op(X)) alone, so the layout never changes them.
struct OperandLayout {
  bool is_a = true;
  int64_t rows = 0;  // of op(X)
  int64_t cols = 0;
  int64_t batch = 1;
  bool row_major = true;
  bool transposed = false;
  int64_t ld = 0;
  int64_t stride = 0;
  int64_t depth = 0;  // k, which near_flt_max's scale of B depends on
};

// Fills the operand with the distribution's values on the legacy default stream; throws BenchError.
void fill_distribution(float *data, const OperandLayout &layout, Distribution distribution, uint64_t seed);

}  // namespace bench
