// SPDX-License-Identifier: Apache-2.0
// Products by cuBLAS on the legacy default stream, as a program that links cuBLAS makes them: the FP32 baseline
// every sgemm ratio is taken to, and the FP64 products the result checks measure against.
#pragma once

#include <cstdint>

#include "gpu.hpp"
#include "sgemm_suite.hpp"

namespace bench {

// The leading dimensions of a shape's dense operands: each the smallest the contract allows.
struct LeadingDimensions {
  int64_t a;
  int64_t b;
  int64_t c;
};
LeadingDimensions leading_dimensions(const GemmShape &shape);

// Elements of op(A), op(B) and C over all batches, dense.
int64_t a_elements(const GemmShape &shape);
int64_t b_elements(const GemmShape &shape);
int64_t c_elements(const GemmShape &shape);

// C = op(A) op(B) in the shape's layout, transposes and batches (dense), through cublasSgemm or
// cublasSgemmStridedBatched (FP32 math, TF32 off), or their FP64 counterparts for doubles. The classic 32-bit
// entry points, as most programs call them: sizes up to INT_MAX. Throws BenchError.
void cublas_product(const GemmShape &shape, const float *a, const float *b, float *c);
void cublas_product(const GemmShape &shape, const double *a, const double *b, double *c);

// From float operands, in double and laid out as C: op(A) op(B) (into exact, unless it is null) and
// |op(A)| |op(B)| (into absolute). Each product of two floats is exact in double (24 + 24 significant bits of
// 53), and the sums' rounding, at most k 2^-53 (|A||B|)_ij, lies orders of magnitude under FP32's: both stand
// for the exact values. Throws BenchError.
void double_products(const GemmShape &shape, const float *a, const float *b, double *exact, double *absolute);

}  // namespace bench
