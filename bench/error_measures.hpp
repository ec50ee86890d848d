// SPDX-License-Identifier: Apache-2.0
// How far a product is from another or from the exact one, measured on the device against |A||B|: the scale of
// the rounding errors an FP32 product can make in each element, whatever the cancellation in the sum.
#pragma once

#include <cstdint>

namespace bench {

// out[i] = in[i] (or |in[i]|) in double, on the legacy default stream.
void widen(const float *in, double *out, int64_t count, bool absolute);

// max_i |result_i - reference_i| / absolute_i, where absolute = |A||B|: 0 where the two are bitwise equal
// (NaN included), +Inf where they differ and absolute_i is 0, NaN where only one of them is NaN or infinite.
// Waits for the device.
double largest_error_over_absolute(const float *result, const float *reference, const double *absolute, int64_t count);

// The accuracy contract's measures of a result against the exact product (exact, absolute = |A||B|, both in
// double): the normwise ||result - exact||_F / ||exact||_F, and the median and largest of
// |result - exact|_i / absolute_i (0 / 0 counted as 0, x / 0 as +Inf; a NaN or infinite result element as
// +Inf); nonfinite counts the result's NaN and infinite elements. The same data give bitwise the same figures,
// so that equal results compare as equal. Waits for the device.
struct ErrorMeasures {
  double normwise = 0;
  double median = 0;
  double largest = 0;
  int64_t nonfinite = 0;
};
ErrorMeasures measure_errors(const float *result, const double *exact, const double *absolute, int64_t count);

// The emulated mode's per-element guarantee, checked for C = A B (row-major m x k and k x n, alpha 1, beta 0):
// uncertified counts the elements (i, j) with |result - exact|_ij > (2^-24 (1 + sqrt(t)) + 2 k 2^-53) absolute_ij,
// t = min(k, nonzeros of row i of A, of column j of B) (at least 1), NaN and infinite results included; the k 2^-53
// terms allow for cublasDgemm's own rounding of exact and of absolute. With integer_valued (operands whose exact
// partial sums never exceed the sum), inexact counts the elements with absolute_i < 2^24, where FP32's sums are exact,
// whose result is not bitwise the exact product; otherwise it is 0. Waits for the device.
struct CertificateCounts {
  int64_t uncertified = 0;
  int64_t inexact = 0;
};
CertificateCounts certificate_counts(const float *result, const double *exact, const double *absolute, const float *a,
                                     const float *b, int64_t m, int64_t n, int64_t k, bool integer_valued);

}  // namespace bench
