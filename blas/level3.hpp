// SPDX-License-Identifier: Apache-2.0
// Where each Level 3 call runs, decided in one place per family. The entry points (fortran.cpp, cblas.cpp)
// hand over a call that passed the reference's checks and is none of its quick returns, in the terms of
// the column-major Fortran routine (a CBLAS call in row-major turned over as netlib's CBLAS turns it), with
// the letters of checks.hpp. Each family's function sends the sizes the GPU takes there (gpu.hpp), in either
// precision, and the rest to the CPU BLAS. SGEMM keeps its own path (blas.cpp), and shares only cpu_gemm<float>.
#pragma once

namespace fastgemm_blas {

// Who called, for the log line.
struct Caller {
  const char *name;  // the entry point the program called: "dsymm_", "cblas_dsymm"
  bool row_major;    // a CBLAS call in row-major, handed over as the column-major call it becomes
};

// gemm is instantiated for double only; the others for float and double.
template <typename T>
void gemm(const Caller &caller, char transa, char transb, int m, int n, int k, T alpha, const T *A, int lda, const T *B,
          int ldb, T beta, T *C, int ldc);
template <typename T>
void symm(const Caller &caller, char side, char uplo, int m, int n, T alpha, const T *A, int lda, const T *B, int ldb,
          T beta, T *C, int ldc);
template <typename T>
void syrk(const Caller &caller, char uplo, char trans, int n, int k, T alpha, const T *A, int lda, T beta, T *C,
          int ldc);
template <typename T>
void syr2k(const Caller &caller, char uplo, char trans, int n, int k, T alpha, const T *A, int lda, const T *B, int ldb,
           T beta, T *C, int ldc);
template <typename T>
void trmm(const Caller &caller, char side, char uplo, char transa, char diag, int m, int n, T alpha, const T *A,
          int lda, T *B, int ldb);
template <typename T>
void trsm(const Caller &caller, char side, char uplo, char transa, char diag, int m, int n, T alpha, const T *A,
          int lda, T *B, int ldb);

// The CPU's computation of the same calls, unlogged: the CPU BLAS's Fortran routine, else its CBLAS form,
// else the own loop (plain.hpp). It is also what a CPU BLAS calling back into this library's Fortran
// symbols gets. Instantiated for float and double.
template <typename T>
void cpu_gemm(char transa, char transb, int m, int n, int k, T alpha, const T *A, int lda, const T *B, int ldb, T beta,
              T *C, int ldc);
template <typename T>
void cpu_symm(char side, char uplo, int m, int n, T alpha, const T *A, int lda, const T *B, int ldb, T beta, T *C,
              int ldc);
template <typename T>
void cpu_syrk(char uplo, char trans, int n, int k, T alpha, const T *A, int lda, T beta, T *C, int ldc);
template <typename T>
void cpu_syr2k(char uplo, char trans, int n, int k, T alpha, const T *A, int lda, const T *B, int ldb, T beta, T *C,
               int ldc);
template <typename T>
void cpu_trmm(char side, char uplo, char transa, char diag, int m, int n, T alpha, const T *A, int lda, T *B, int ldb);
template <typename T>
void cpu_trsm(char side, char uplo, char transa, char diag, int m, int n, T alpha, const T *A, int lda, T *B, int ldb);

}  // namespace fastgemm_blas
