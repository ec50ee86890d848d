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
};

struct DistributionInfo {
  Distribution id;
  const char *name;         // as --dist takes it
  const char *description;  // for --help
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
