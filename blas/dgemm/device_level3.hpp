// SPDX-License-Identifier: Apache-2.0
// trsm, trmm, symm, syrk and syr2k on the device over host arrays, in double precision (the products the handle's FP64
// ones) and in single (the products the caller's: libfastgemm_blas's fg_sgemm, in the math mode of its handle). A's
// stored triangle goes to the device once (for symm the other triangle written out there as its mirror); B (and C, for
// symm with beta != 0) goes through in panels of its independent lines (columns for side L, rows for side R), each
// panel computed on the device and sent back, the uploads, computations and downloads of neighbouring panels
// overlapped. Where the host engine's composition (blas/composed.hpp) writes A out whole on the host, or sends the rest
// of B across the bus at every level of halving and solves the diagonal blocks on the host, this moves A's triangle
// once and B once each way. syrk and syr2k send A (and B) once, by the lines each panel of C's columns adds, and C's
// triangle once each way (C's whole diagonal blocks up), a panel of C one product (two for syr2k) over all of k.
//
// symm: one product per panel, over all of k (the handle's FP64 product: at FG_REPRODUCIBLE_SHAPE the project's own,
// whose elements do not depend on the product's shape). trsm and trmm: the panel's lines halved as the composition
// does, at multiples of 32 times powers of two counted from line 0 (composed.cpp's halving_cut). trsm: the first part
// substitution takes is solved, the other updated by one product, then solved; trmm: each part's own product, then
// the block of the triangle between them times one part added to the other (half the work of one product over A
// written out whole, and no term of the other triangle, whose zeros times an infinite or NaN element of B would be
// NaN). Blocks of 32 lines are solved by substitution or multiplied, one thread per line of B, in a fixed order. Each
// line of the result is so a function of A, the scalars and that line of B (and C) alone: at FG_REPRODUCIBLE_SHAPE it
// does not depend on the order of the other dimension, on the panels' widths or on the call's other lines; at
// FG_REPRODUCIBLE_RUN the products are cuBLAS's, and a call is the same bits run after run, the panels' widths being
// fixed by the count of lines. The blocks' steps are those docs/reproducibility.md gives, which
// tests/blas/shape_sequence_sgemm.c computes on the CPU.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "core/context.hpp"
#include "core/problem.hpp"
#include "core/status.hpp"

namespace fastgemm::blas_dgemm {

enum class Level3Routine { trsm, trmm, symm, syrk, syr2k };

// One call in Fortran's terms (column-major; the letters upper case: 'L' or 'R', 'U' or 'L', 'N' or 'T' (a 'C' is a
// 'T' in real arithmetic), 'U' or 'N'), already checked, m, n > 0 and alpha != 0. trsm and trmm overwrite B (C is
// B, ldc ldb); symm reads B and writes C, reading C only where beta != 0 (transa and diag unused). syrk and syr2k:
// m is C's order and n the depth k, transa the routine's trans, B syr2k's second operand (side and diag unused);
// only C's triangle uplo is written, C read only where beta != 0 (the whole of each diagonal block's columns).
template <typename T>
struct Level3Call {
  Level3Routine routine;
  char side, uplo, transa, diag;
  int64_t m, n;
  T alpha, beta;
  const T *A;
  int64_t lda;
  const T *B;
  int64_t ldb;
  T *C;
  int64_t ldc;
};

// A product on device operands, enqueued on the context's stream (row-major, as the engine's tiles).
template <typename T>
using DeviceProduct = std::function<detail::Status(const detail::BasicGemmProblem<T> &)>;

// What a handle keeps between calls: pinned staging chunks (128 MiB in all, allocated on the first call) and the host
// threads that pack into them and unpack from them; on the device two streams, their events, and A's and the panels'
// buffers where they total at most 128 MiB (larger ones are freed as their call ends, all of them after a failure),
// so that a run of small calls allocates nothing after its first.
class Level3Resources {
 public:
  Level3Resources();
  ~Level3Resources();
  Level3Resources(const Level3Resources &) = delete;
  Level3Resources &operator=(const Level3Resources &) = delete;
  struct State;
  State &state() { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

// Computes the call on the context's device. On success every line of the output is the routine's. On failure *done
// lines of the output (the first ones: columns [0, done) for side L, rows for side R) are the routine's, and the
// others as given unless *partial, which says a failure while a panel was being copied back left some of its lines
// part written; syrk and syr2k leave *done 0, C as given unless *partial. StatusCode::not_supported, with nothing
// written, where the device lacks the memory for A (and B) and two panels, or a line is too long for the staging.
// Instantiated for float and double.
template <typename T>
detail::Status device_level3(detail::Context &context, Level3Resources &resources, const DeviceProduct<T> &product,
                             const Level3Call<T> &call, int64_t *done, bool *partial);

}  // namespace fastgemm::blas_dgemm
