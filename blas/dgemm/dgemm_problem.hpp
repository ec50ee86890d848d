// SPDX-License-Identifier: Apache-2.0
// A call of fastgemm_blas_dgemm_host checked and turned into the host engine's canonical problem, as capi/ does for
// fg_sgemm_host: row-major C = op(A) op(B), a column-major call being the same problem with A and B swapped and m
// and n exchanged (C^T = B^T A^T). Pure, so that it is tested without a device.
#pragma once

#include <cstdint>

#include "core/problem.hpp"
#include "core/status.hpp"
#include "fastgemm/fastgemm.h"

namespace fastgemm::blas_dgemm {

// fastgemm_blas_dgemm_host's arguments.
struct DgemmCall {
  fg_layout_t layout = FG_COL_MAJOR;
  fg_op_t transa = FG_OP_N, transb = FG_OP_N;
  int64_t m = 0, n = 0, k = 0;
  double alpha = 1.0;
  const double *A = nullptr;
  int64_t lda = 0;
  const double *B = nullptr;
  int64_t ldb = 0;
  double beta = 0.0;
  double *C = nullptr;
  int64_t ldc = 0;
};

// What a valid call leaves to do: nothing (m or n 0, or C := 1 C), C := beta C alone (k 0 or alpha 0), or a product.
enum class DgemmWork { nothing, scale_c, product };

// Checks the call as fg_sgemm checks its own (enumerations, sizes >= 0, leading dimensions against the layout and
// transposes, the operands that are read or written not NULL), naming the first bad argument; then gives the
// canonical problem (FG_OP_C is FG_OP_T for real data) and what is left to do.
detail::Status dgemm_problem(const DgemmCall &call, detail::BasicGemmProblem<double> *problem, DgemmWork *work);

}  // namespace fastgemm::blas_dgemm
