// SPDX-License-Identifier: Apache-2.0
// The reference BLAS's Fortran Level 3 routines besides sgemm_ (blas.cpp): dgemm_ and the symm, syrk,
// syr2k, trmm and trsm routines in single and double precision. Each checks its arguments as the
// reference does and reports the first bad one through xerbla_, makes the reference's quick returns, and
// hands the call to its family's function (level3.hpp), which decides where it runs.
#include <cstddef>

#include "checks.hpp"
#include "cpu_blas.hpp"
#include "level3.hpp"

#define FASTGEMM_BLAS_EXPORT extern "C" __attribute__((visibility("default")))

using namespace fastgemm_blas;

namespace {

// CALLER names the entry point in the log, NAME the routine for xerbla_ ("DGEMM "). Inside the CPU BLAS
// (its CBLAS form computing through this library's Fortran symbol) a call goes straight back to it.

template <typename T>
void fortran_gemm(const char *caller, const char *name, const char *transa, const char *transb, const int *m,
                  const int *n, const int *k, const T *alpha, const T *A, const int *lda, const T *B, const int *ldb,
                  const T *beta, T *C, const int *ldc) {
  const int info = gemm_argument_error(*transa, *transb, *m, *n, *k, *lda, *ldb, *ldc);
  if (info != 0) {
    report_fortran_error(name, info);
    return;
  }
  const char ta = trans_letter(*transa), tb = trans_letter(*transb);
  if (t_in_cpu_blas) {
    cpu_gemm<T>(ta, tb, *m, *n, *k, *alpha, A, *lda, B, *ldb, *beta, C, *ldc);
    return;
  }
  if (*m == 0 || *n == 0 || ((*alpha == T(0) || *k == 0) && *beta == T(1))) return;
  gemm<T>(Caller{caller, false}, ta, tb, *m, *n, *k, *alpha, A, *lda, B, *ldb, *beta, C, *ldc);
}

template <typename T>
void fortran_symm(const char *caller, const char *name, const char *side, const char *uplo, const int *m, const int *n,
                  const T *alpha, const T *A, const int *lda, const T *B, const int *ldb, const T *beta, T *C,
                  const int *ldc) {
  const int info = symm_argument_error(*side, *uplo, *m, *n, *lda, *ldb, *ldc);
  if (info != 0) {
    report_fortran_error(name, info);
    return;
  }
  const char s = upper_case(*side), u = upper_case(*uplo);
  if (t_in_cpu_blas) {
    cpu_symm<T>(s, u, *m, *n, *alpha, A, *lda, B, *ldb, *beta, C, *ldc);
    return;
  }
  if (*m == 0 || *n == 0 || (*alpha == T(0) && *beta == T(1))) return;
  symm<T>(Caller{caller, false}, s, u, *m, *n, *alpha, A, *lda, B, *ldb, *beta, C, *ldc);
}

template <typename T>
void fortran_syrk(const char *caller, const char *name, const char *uplo, const char *trans, const int *n, const int *k,
                  const T *alpha, const T *A, const int *lda, const T *beta, T *C, const int *ldc) {
  const int info = syrk_argument_error(*uplo, *trans, *n, *k, *lda, *ldc);
  if (info != 0) {
    report_fortran_error(name, info);
    return;
  }
  const char u = upper_case(*uplo), t = trans_letter(*trans);
  if (t_in_cpu_blas) {
    cpu_syrk<T>(u, t, *n, *k, *alpha, A, *lda, *beta, C, *ldc);
    return;
  }
  if (*n == 0 || ((*alpha == T(0) || *k == 0) && *beta == T(1))) return;
  syrk<T>(Caller{caller, false}, u, t, *n, *k, *alpha, A, *lda, *beta, C, *ldc);
}

template <typename T>
void fortran_syr2k(const char *caller, const char *name, const char *uplo, const char *trans, const int *n,
                   const int *k, const T *alpha, const T *A, const int *lda, const T *B, const int *ldb, const T *beta,
                   T *C, const int *ldc) {
  const int info = syr2k_argument_error(*uplo, *trans, *n, *k, *lda, *ldb, *ldc);
  if (info != 0) {
    report_fortran_error(name, info);
    return;
  }
  const char u = upper_case(*uplo), t = trans_letter(*trans);
  if (t_in_cpu_blas) {
    cpu_syr2k<T>(u, t, *n, *k, *alpha, A, *lda, B, *ldb, *beta, C, *ldc);
    return;
  }
  if (*n == 0 || ((*alpha == T(0) || *k == 0) && *beta == T(1))) return;
  syr2k<T>(Caller{caller, false}, u, t, *n, *k, *alpha, A, *lda, B, *ldb, *beta, C, *ldc);
}

// trmm and trsm check and return alike; SOLVE picks the family.
template <typename T>
void fortran_triangular(bool solve, const char *caller, const char *name, const char *side, const char *uplo,
                        const char *transa, const char *diag, const int *m, const int *n, const T *alpha, const T *A,
                        const int *lda, T *B, const int *ldb) {
  const int info = triangular_argument_error(*side, *uplo, *transa, *diag, *m, *n, *lda, *ldb);
  if (info != 0) {
    report_fortran_error(name, info);
    return;
  }
  const char s = upper_case(*side), u = upper_case(*uplo), t = trans_letter(*transa), d = upper_case(*diag);
  if (t_in_cpu_blas) {
    if (solve)
      cpu_trsm<T>(s, u, t, d, *m, *n, *alpha, A, *lda, B, *ldb);
    else
      cpu_trmm<T>(s, u, t, d, *m, *n, *alpha, A, *lda, B, *ldb);
    return;
  }
  if (*m == 0 || *n == 0) return;
  if (solve)
    trsm<T>(Caller{caller, false}, s, u, t, d, *m, *n, *alpha, A, *lda, B, *ldb);
  else
    trmm<T>(Caller{caller, false}, s, u, t, d, *m, *n, *alpha, A, *lda, B, *ldb);
}

}  // namespace

FASTGEMM_BLAS_EXPORT void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                                 const double *alpha, const double *A, const int *lda, const double *B, const int *ldb,
                                 const double *beta, double *C, const int *ldc, size_t, size_t) {
  fortran_gemm("dgemm_", "DGEMM ", transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

FASTGEMM_BLAS_EXPORT void ssymm_(const char *side, const char *uplo, const int *m, const int *n, const float *alpha,
                                 const float *A, const int *lda, const float *B, const int *ldb, const float *beta,
                                 float *C, const int *ldc, size_t, size_t) {
  fortran_symm("ssymm_", "SSYMM ", side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
}

FASTGEMM_BLAS_EXPORT void dsymm_(const char *side, const char *uplo, const int *m, const int *n, const double *alpha,
                                 const double *A, const int *lda, const double *B, const int *ldb, const double *beta,
                                 double *C, const int *ldc, size_t, size_t) {
  fortran_symm("dsymm_", "DSYMM ", side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
}

FASTGEMM_BLAS_EXPORT void ssyrk_(const char *uplo, const char *trans, const int *n, const int *k, const float *alpha,
                                 const float *A, const int *lda, const float *beta, float *C, const int *ldc, size_t,
                                 size_t) {
  fortran_syrk("ssyrk_", "SSYRK ", uplo, trans, n, k, alpha, A, lda, beta, C, ldc);
}

FASTGEMM_BLAS_EXPORT void dsyrk_(const char *uplo, const char *trans, const int *n, const int *k, const double *alpha,
                                 const double *A, const int *lda, const double *beta, double *C, const int *ldc, size_t,
                                 size_t) {
  fortran_syrk("dsyrk_", "DSYRK ", uplo, trans, n, k, alpha, A, lda, beta, C, ldc);
}

FASTGEMM_BLAS_EXPORT void ssyr2k_(const char *uplo, const char *trans, const int *n, const int *k, const float *alpha,
                                  const float *A, const int *lda, const float *B, const int *ldb, const float *beta,
                                  float *C, const int *ldc, size_t, size_t) {
  fortran_syr2k("ssyr2k_", "SSYR2K", uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

FASTGEMM_BLAS_EXPORT void dsyr2k_(const char *uplo, const char *trans, const int *n, const int *k, const double *alpha,
                                  const double *A, const int *lda, const double *B, const int *ldb, const double *beta,
                                  double *C, const int *ldc, size_t, size_t) {
  fortran_syr2k("dsyr2k_", "DSYR2K", uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

FASTGEMM_BLAS_EXPORT void strmm_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m,
                                 const int *n, const float *alpha, const float *A, const int *lda, float *B,
                                 const int *ldb, size_t, size_t, size_t, size_t) {
  fortran_triangular(false, "strmm_", "STRMM ", side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
}

FASTGEMM_BLAS_EXPORT void dtrmm_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m,
                                 const int *n, const double *alpha, const double *A, const int *lda, double *B,
                                 const int *ldb, size_t, size_t, size_t, size_t) {
  fortran_triangular(false, "dtrmm_", "DTRMM ", side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
}

FASTGEMM_BLAS_EXPORT void strsm_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m,
                                 const int *n, const float *alpha, const float *A, const int *lda, float *B,
                                 const int *ldb, size_t, size_t, size_t, size_t) {
  fortran_triangular(true, "strsm_", "STRSM ", side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
}

FASTGEMM_BLAS_EXPORT void dtrsm_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m,
                                 const int *n, const double *alpha, const double *A, const int *lda, double *B,
                                 const int *ldb, size_t, size_t, size_t, size_t) {
  fortran_triangular(true, "dtrsm_", "DTRSM ", side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
}
