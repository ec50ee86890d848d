// SPDX-License-Identifier: Apache-2.0
// The last resort, where no system BLAS defines a routine: plain column-major loops with the reference's
// semantics (what each reads and writes, alpha == 0 reading neither A nor B, beta == 0 never reading C,
// the other triangle and a unit diagonal never read), of arguments already checked and with the letters
// of checks.hpp. Correct, and many times slower than any BLAS.
#pragma once

#include <cstdint>

namespace fastgemm_blas {

void plain_sgemm(bool a_trans, bool b_trans, int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                 const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

// Instantiated for float and double.
template <typename T>
void plain_gemm(char transa, char transb, int64_t m, int64_t n, int64_t k, T alpha, const T *A, int64_t lda, const T *B,
                int64_t ldb, T beta, T *C, int64_t ldc);
template <typename T>
void plain_symm(char side, char uplo, int64_t m, int64_t n, T alpha, const T *A, int64_t lda, const T *B, int64_t ldb,
                T beta, T *C, int64_t ldc);
template <typename T>
void plain_syrk(char uplo, char trans, int64_t n, int64_t k, T alpha, const T *A, int64_t lda, T beta, T *C,
                int64_t ldc);
template <typename T>
void plain_syr2k(char uplo, char trans, int64_t n, int64_t k, T alpha, const T *A, int64_t lda, const T *B, int64_t ldb,
                 T beta, T *C, int64_t ldc);
template <typename T>
void plain_trmm(char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha, const T *A, int64_t lda,
                T *B, int64_t ldb);
template <typename T>
void plain_trsm(char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha, const T *A, int64_t lda,
                T *B, int64_t ldb);

}  // namespace fastgemm_blas
