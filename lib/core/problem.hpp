// SPDX-License-Identifier: Apache-2.0
// Canonical problem forms that every kernel sees. The C ABI's layouts, transposes and trivial cases are
// resolved before a problem reaches lib/: a GemmProblem is always row-major, with m, n, k, batch >= 1 and
// alpha != 0.
#pragma once

#include <cstdint>

#include "fastgemm/fastgemm.h"

namespace fastgemm::detail {

// One row-major operand of a product: element (r, c) of op(X) lives at
// data[transposed ? c * ld + r : r * ld + c], batch i at data + i * stride. T is the element: float for every
// operation of the library, double for the FP64 products of the host engine (lib/host) that libfastgemm_blas uses.
template <typename T>
struct BasicGemmOperand {
  const T *data = nullptr;
  int64_t ld = 0;
  int64_t stride = 0;
  bool transposed = false;
};
using GemmOperand = BasicGemmOperand<float>;

// The operands' addresses and the scalars in device memory, where work captured into a graph reads them each time it
// runs rather than when it was captured: the same graph then serves calls that differ only in these, written there
// before each launch.
template <typename T>
struct BasicLiveOperands {
  const T *a = nullptr;
  const T *b = nullptr;
  T *c = nullptr;
  T alpha = T(1), beta = T(0);
};
using LiveOperands = BasicLiveOperands<float>;

// C := alpha * op(A) * op(B) + beta * C, op(A) m x k, op(B) k x n, C m x n, row-major, batch products.
// beta == 0 means C is written without being read. `math` is the handle's math mode: the accuracy asked for,
// which decides the algorithms AUTO may choose; `reproducibility` narrows them further (FG_REPRODUCIBLE_SHAPE:
// only those whose elements do not depend on the problem's shape). GemmProblem is the FP32 problem every
// algorithm sees; the host engine also takes BasicGemmProblem<double>, whose products its caller computes.
template <typename T>
struct BasicGemmProblem {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  fg_math_mode_t math = FG_MATH_FP32;
  fg_reproducibility_t reproducibility = FG_REPRODUCIBLE_RUN;
  T alpha = T(1), beta = T(0);
  BasicGemmOperand<T> a, b;
  T *c = nullptr;
  int64_t ldc = 0;
  int64_t stride_c = 0;
  // Where given (device memory), the variants that honour it read a.data, b.data, c, alpha and beta there when their
  // work runs, instead of the values above, which the host's choices still use (beta == 0 among them); the others
  // read the values above. A variant may read only the scalars there unless `live_addresses` asks for the addresses
  // too. Which variants honour them, and how far, is the operation's to say (SGEMM's: sgemm/variant.hpp).
  const BasicLiveOperands<T> *live = nullptr;
  bool live_addresses = false;
};
using GemmProblem = BasicGemmProblem<float>;

// output (L x N) = matrix (L x L) * means^T, means[k][j] = mean over M of input[k][j][:].
// L, M, N >= 1; arrays dense, row-major, of `dtype` elements.
struct RowmeanProblem {
  fg_dtype_t dtype = FG_F32;
  const void *input = nullptr;
  const void *matrix = nullptr;
  void *output = nullptr;
  int64_t L = 0, M = 0, N = 0;
};

inline int64_t element_size(fg_dtype_t dtype) { return dtype == FG_F64 ? 8 : 4; }

}  // namespace fastgemm::detail
