// SPDX-License-Identifier: Apache-2.0
// symm, syrk, syr2k, trmm and trsm as general products, so that any engine of C := alpha op(A) op(B) + beta C serves
// them (the GPU's, through fg_sgemm_host). symm and trmm: the symmetric or triangular operand written out whole
// (from its stored triangle, a unit diagonal as ones) and the result of trmm computed in a buffer of its own, then
// copied into place. syrk, syr2k and trsm: by halves of the triangle, their products on blocks in place.
//
// Each takes the arguments of the column-major Fortran routine, already checked and with the letters of checks.hpp
// (none of the reference's quick returns), and returns whether the routine's output was computed. False means the
// output is untouched: a buffer could not be had, or the engine declined its first product (the engine itself
// never returns false after writing part of its C).
#pragma once

#include <cstdint>
#include <functional>

namespace fastgemm_blas {

// C (m x n, column-major) := alpha op(A) op(B) + beta C, op given as 'N' or 'T'; beta == 0 never reads C. True if
// computed; false with C untouched.
template <typename T>
using Product = std::function<bool(char transa, char transb, int64_t m, int64_t n, int64_t k, T alpha, const T *A,
                                   int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc)>;

// Instantiated for float and double.
template <typename T>
bool composed_symm(const Product<T> &product, char side, char uplo, int64_t m, int64_t n, T alpha, const T *A,
                   int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc);
// syrk and syr2k by halves of C (the cuts of trsm's below): the block between two halves one product in place in
// C (two for syr2k), the diagonal blocks of `block` lines computed whole in a buffer of that size and their
// triangle copied back; half the work of one product of C, and no copy of C but the diagonal blocks'. Products run
// on `product` until it declines one, then on `fallback` (which never declines), so that a call that has written
// part of C always completes; false, C untouched, where the buffer cannot be had or the first product is declined.
// The diagonal blocks' lines for composed_syrk (terms 1) and composed_syr2k (terms 2) at depth k over a triangle of
// order n: `block` doubled while a level of halving would read more of the operands than it saves of C. A level
// splits each diagonal block of L lines into one product on (L/2)^2 elements of C and two blocks of L/2 lines,
// which moves L^2/2 fewer elements of C (into the block's buffer and out of it) and reads terms * L * k more of
// the operands: it pays while L > 2 * terms * k, so the blocks keep the smallest L above terms * k. At most
// max(block, 16384) lines, so that a block's buffer stays within 2 GB of doubles.
int64_t symmetric_update_block(int64_t block, int64_t n, int64_t k, int terms);
template <typename T>
bool composed_syrk(const Product<T> &product, const Product<T> &fallback, int64_t block, char uplo, char trans,
                   int64_t n, int64_t k, T alpha, const T *A, int64_t lda, T beta, T *C, int64_t ldc);
template <typename T>
bool composed_syr2k(const Product<T> &product, const Product<T> &fallback, int64_t block, char uplo, char trans,
                    int64_t n, int64_t k, T alpha, const T *A, int64_t lda, const T *B, int64_t ldb, T beta, T *C,
                    int64_t ldc);
template <typename T>
bool composed_trmm(const Product<T> &product, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                   T alpha, const T *A, int64_t lda, T *B, int64_t ldb);

// The triangular solve of a diagonal block (the routine's own arguments, on a block of A and of B).
template <typename T>
using BlockSolve = std::function<void(char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha,
                                      const T *A, int64_t lda, T *B, int64_t ldb)>;

// trsm with diagonal blocks of `block` lines of the triangle (from line 0, the last shorter), each solved by `solve`,
// and everything else products: the lines are cut in two at the largest multiple of `block` times a power of two
// below their number, the part substitution takes first solved (so, in turn), the other updated by one product
// (B_other := beta B_other - op(A)_other,first X_first, beta = alpha where the reference's scaling of B has not yet
// reached those lines), then solved. The cuts are counted from line 0, so each line's sums do not depend on the
// order of the whole; B crosses to the product log2(order / block) times instead of order / block. B is changed
// from the first block on, so a product `product` declines is made by `fallback` (which never declines), as are
// all after it, and the call always completes: no return value.
template <typename T>
void composed_trsm(const Product<T> &product, const Product<T> &fallback, const BlockSolve<T> &solve, int64_t block,
                   char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha, const T *A, int64_t lda,
                   T *B, int64_t ldb);

}  // namespace fastgemm_blas
