// SPDX-License-Identifier: Apache-2.0
// dtrsm on the device over host arrays: A's stored triangle uploaded once, B streamed through in panels of its
// independent lines (columns for side L, rows for side R), each panel solved on the device whole and sent back, the
// uploads, solves and downloads of neighbouring panels overlapped. Where the host engine's composition
// (blas/composed.hpp) sends the rest of B across the bus at every level of halving and solves the diagonal blocks on
// the host, this moves A once and B once each way.
//
// The solve of a panel halves its lines as the composition does, at multiples of 32 times powers of two counted from
// line 0 (composed.cpp's halving_cut): the first part substitution takes is solved, the other updated by one product
// (the handle's FP64 product: at FG_REPRODUCIBLE_SHAPE the project's own, whose elements do not depend on the
// product's shape), then solved; blocks of 32 lines are solved by substitution, one thread per line of B, in a fixed
// order. Each line of X is so a function of A, alpha and that line of B alone: it does not depend on the order of
// the other dimension, on the panels' widths or on the call's other lines (at FG_REPRODUCIBLE_SHAPE; at
// FG_REPRODUCIBLE_RUN the products are cuBLAS's, and a call is the same bits run after run, the panels being of a
// fixed width).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "core/context.hpp"
#include "core/problem.hpp"
#include "core/status.hpp"

namespace fastgemm::blas_dgemm {

// One dtrsm_ in Fortran's terms (column-major, the letters upper case: 'L' or 'R', 'U' or 'L', 'N' or 'T' (a 'C' is
// a 'T' in real arithmetic), 'U' or 'N'), already checked, m, n > 0 and alpha != 0.
struct TrsmCall {
  char side, uplo, transa, diag;
  int64_t m, n;
  double alpha;
  const double *A;
  int64_t lda;
  double *B;
  int64_t ldb;
};

// The handle's FP64 product on device operands, enqueued on the context's stream (row-major, as the engine's tiles).
using DeviceProduct = std::function<detail::Status(const detail::BasicGemmProblem<double> &)>;

// What a handle keeps between calls: pinned staging chunks (64 MiB in all, allocated on the first call) and the host
// threads that pack B into them and unpack it back.
class TrsmResources {
 public:
  TrsmResources();
  ~TrsmResources();
  TrsmResources(const TrsmResources &) = delete;
  TrsmResources &operator=(const TrsmResources &) = delete;
  struct State;

 private:
  friend detail::Status device_trsm(detail::Context &, TrsmResources &, const DeviceProduct &, const TrsmCall &,
                                    int64_t *, bool *);
  std::unique_ptr<State> state_;
};

// Solves op(A) X = alpha B (side L) or X op(A) = alpha B (side R) in place in B on the context's device. On success
// every line of B is X's. On failure *done lines of B (the first ones: columns [0, done) for side L, rows for side R)
// are X's, and the others are B's as given unless *partial, which says a failure while a panel was being copied back
// left some of its lines part written. StatusCode::not_supported, with nothing written, where the device lacks the
// memory for A and two panels, or a line is too long for the staging.
detail::Status device_trsm(detail::Context &context, TrsmResources &resources, const DeviceProduct &product,
                           const TrsmCall &call, int64_t *done, bool *partial);

}  // namespace fastgemm::blas_dgemm
