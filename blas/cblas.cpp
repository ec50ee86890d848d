// SPDX-License-Identifier: Apache-2.0
// CBLAS's forms of the Level 3 routines besides cblas_sgemm (blas.cpp). Each checks as netlib's CBLAS
// (LAPACK 3.11's, the one Debian and Ubuntu ship) does: the layout, then its enumerations, with the
// positions and messages it passes to cblas_xerbla; then a row-major call becomes the column-major call of
// the transposed problem that the reference makes of it (sides and triangles swap, so do M and N, and
// gemm's operands), whose Fortran checks name the position after it. The reference's quick returns follow,
// then the column-major call goes to its family's function (level3.hpp).
#include "checks.hpp"
#include "common.hpp"
#include "level3.hpp"

#define FASTGEMM_BLAS_EXPORT extern "C" __attribute__((visibility("default")))

using namespace fastgemm_blas;

namespace {

bool layout_ok(const char *routine, int layout) {
  if (layout == row_major || layout == col_major) return true;
  report_cblas_error(false, 1, routine, "Illegal layout setting, %d\n", layout);
  return false;
}

// Whether the Fortran checks of the column-major call passed; where not (INFO, the argument's position there),
// CBLAS's error handler is told the position after it (the layout comes first).
bool fortran_checks_passed(const char *routine, bool row, int info) {
  if (info == 0) return true;
  report_cblas_error(row, info + 1, routine, "", 0);
  return false;
}

// symm, trmm and trsm check their Side (parameter 2) and Uplo (3) alike, in either layout.
bool side_and_uplo_ok(const char *routine, bool row, int side, int uplo) {
  if (side != left && side != right) {
    report_cblas_error(row, 2, routine, "Illegal Side setting, %d\n", side);
    return false;
  }
  if (uplo != upper && uplo != lower) {
    report_cblas_error(row, 3, routine, "Illegal Uplo setting, %d\n", uplo);
    return false;
  }
  return true;
}

bool is_trans(int value) { return value == no_trans || value == trans || value == conj_trans; }

// Two checks of netlib's differ between layouts (LAPACK 3.11's): in row-major an invalid TransB of gemm is
// reported as parameter 2, the position it takes in the column-major call, and so is an invalid Uplo of
// syrk and syr2k as parameter 3.

template <typename T>
void cblas_gemm(const char *routine, int layout, int transa, int transb, int m, int n, int k, T alpha, const T *A,
                int lda, const T *B, int ldb, T beta, T *C, int ldc) {
  if (!layout_ok(routine, layout)) return;
  const bool row = layout == row_major;
  if (!is_trans(transa)) {
    report_cblas_error(row, 2, routine, "Illegal TransA setting, %d\n", transa);
    return;
  }
  if (!is_trans(transb)) {
    report_cblas_error(row, row ? 2 : 3, routine, "Illegal TransB setting, %d\n", transb);
    return;
  }
  // Row-major C is column-major C^T = op(B)^T op(A)^T: the operands trade places.
  const char ta = (row ? transb : transa) == no_trans ? 'N' : 'T';
  const char tb = (row ? transa : transb) == no_trans ? 'N' : 'T';
  const int fm = row ? n : m, fn = row ? m : n;
  const T *const fa = row ? B : A, *const fb = row ? A : B;
  const int flda = row ? ldb : lda, fldb = row ? lda : ldb;
  if (!fortran_checks_passed(routine, row, gemm_argument_error(ta, tb, fm, fn, k, flda, fldb, ldc))) return;
  if (fm == 0 || fn == 0 || ((alpha == T(0) || k == 0) && beta == T(1))) return;
  gemm<T>(Caller{routine, row}, ta, tb, fm, fn, k, alpha, fa, flda, fb, fldb, beta, C, ldc);
}

template <typename T>
void cblas_symm(const char *routine, int layout, int side, int uplo, int m, int n, T alpha, const T *A, int lda,
                const T *B, int ldb, T beta, T *C, int ldc) {
  if (!layout_ok(routine, layout)) return;
  const bool row = layout == row_major;
  if (!side_and_uplo_ok(routine, row, side, uplo)) return;
  const char s = (side == left) != row ? 'L' : 'R', u = (uplo == upper) != row ? 'U' : 'L';
  const int fm = row ? n : m, fn = row ? m : n;
  if (!fortran_checks_passed(routine, row, symm_argument_error(s, u, fm, fn, lda, ldb, ldc))) return;
  if (fm == 0 || fn == 0 || (alpha == T(0) && beta == T(1))) return;
  symm<T>(Caller{routine, row}, s, u, fm, fn, alpha, A, lda, B, ldb, beta, C, ldc);
}

// syrk and syr2k check alike: the letters of the column-major call, or false when one is reported. In
// row-major, op(A) op(A)^T of a row-major A is that of the column-major A^T: the transpose turns over.
bool rank_letters(const char *routine, bool row, int uplo, int transpose, char *u, char *t) {
  if (uplo != upper && uplo != lower) {
    report_cblas_error(row, row ? 3 : 2, routine, "Illegal Uplo setting, %d\n", uplo);
    return false;
  }
  if (!is_trans(transpose)) {
    report_cblas_error(row, 3, routine, "Illegal Trans setting, %d\n", transpose);
    return false;
  }
  *u = (uplo == upper) != row ? 'U' : 'L';
  *t = (transpose == no_trans) != row ? 'N' : 'T';
  return true;
}

template <typename T>
void cblas_syrk(const char *routine, int layout, int uplo, int transpose, int n, int k, T alpha, const T *A, int lda,
                T beta, T *C, int ldc) {
  if (!layout_ok(routine, layout)) return;
  const bool row = layout == row_major;
  char u = 'U', t = 'N';
  if (!rank_letters(routine, row, uplo, transpose, &u, &t)) return;
  if (!fortran_checks_passed(routine, row, syrk_argument_error(u, t, n, k, lda, ldc))) return;
  if (n == 0 || ((alpha == T(0) || k == 0) && beta == T(1))) return;
  syrk<T>(Caller{routine, row}, u, t, n, k, alpha, A, lda, beta, C, ldc);
}

template <typename T>
void cblas_syr2k(const char *routine, int layout, int uplo, int transpose, int n, int k, T alpha, const T *A, int lda,
                 const T *B, int ldb, T beta, T *C, int ldc) {
  if (!layout_ok(routine, layout)) return;
  const bool row = layout == row_major;
  char u = 'U', t = 'N';
  if (!rank_letters(routine, row, uplo, transpose, &u, &t)) return;
  if (!fortran_checks_passed(routine, row, syr2k_argument_error(u, t, n, k, lda, ldb, ldc))) return;
  if (n == 0 || ((alpha == T(0) || k == 0) && beta == T(1))) return;
  syr2k<T>(Caller{routine, row}, u, t, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

// trmm and trsm check alike; SOLVE picks the family. In row-major the side and the triangle swap, the
// transpose and the diagonal stay.
template <typename T>
void cblas_triangular(bool solve, const char *routine, int layout, int side, int uplo, int transa, int diag, int m,
                      int n, T alpha, const T *A, int lda, T *B, int ldb) {
  if (!layout_ok(routine, layout)) return;
  const bool row = layout == row_major;
  if (!side_and_uplo_ok(routine, row, side, uplo)) return;
  if (!is_trans(transa)) {
    report_cblas_error(row, 4, routine, "Illegal Trans setting, %d\n", transa);
    return;
  }
  if (diag != unit && diag != non_unit) {
    report_cblas_error(row, 5, routine, "Illegal Diag setting, %d\n", diag);
    return;
  }
  const char s = (side == left) != row ? 'L' : 'R', u = (uplo == upper) != row ? 'U' : 'L';
  const char t = transa == no_trans ? 'N' : 'T', d = diag == unit ? 'U' : 'N';
  const int fm = row ? n : m, fn = row ? m : n;
  if (!fortran_checks_passed(routine, row, triangular_argument_error(s, u, t, d, fm, fn, lda, ldb))) return;
  if (fm == 0 || fn == 0) return;
  if (solve)
    trsm<T>(Caller{routine, row}, s, u, t, d, fm, fn, alpha, A, lda, B, ldb);
  else
    trmm<T>(Caller{routine, row}, s, u, t, d, fm, fn, alpha, A, lda, B, ldb);
}

}  // namespace

FASTGEMM_BLAS_EXPORT void cblas_dgemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                                      const double *A, int lda, const double *B, int ldb, double beta, double *C,
                                      int ldc) {
  cblas_gemm("cblas_dgemm", layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

FASTGEMM_BLAS_EXPORT void cblas_ssymm(int layout, int side, int uplo, int m, int n, float alpha, const float *A,
                                      int lda, const float *B, int ldb, float beta, float *C, int ldc) {
  cblas_symm("cblas_ssymm", layout, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
}

FASTGEMM_BLAS_EXPORT void cblas_dsymm(int layout, int side, int uplo, int m, int n, double alpha, const double *A,
                                      int lda, const double *B, int ldb, double beta, double *C, int ldc) {
  cblas_symm("cblas_dsymm", layout, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
}

FASTGEMM_BLAS_EXPORT void cblas_ssyrk(int layout, int uplo, int transpose, int n, int k, float alpha, const float *A,
                                      int lda, float beta, float *C, int ldc) {
  cblas_syrk("cblas_ssyrk", layout, uplo, transpose, n, k, alpha, A, lda, beta, C, ldc);
}

FASTGEMM_BLAS_EXPORT void cblas_dsyrk(int layout, int uplo, int transpose, int n, int k, double alpha, const double *A,
                                      int lda, double beta, double *C, int ldc) {
  cblas_syrk("cblas_dsyrk", layout, uplo, transpose, n, k, alpha, A, lda, beta, C, ldc);
}

FASTGEMM_BLAS_EXPORT void cblas_ssyr2k(int layout, int uplo, int transpose, int n, int k, float alpha, const float *A,
                                       int lda, const float *B, int ldb, float beta, float *C, int ldc) {
  cblas_syr2k("cblas_ssyr2k", layout, uplo, transpose, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

FASTGEMM_BLAS_EXPORT void cblas_dsyr2k(int layout, int uplo, int transpose, int n, int k, double alpha, const double *A,
                                       int lda, const double *B, int ldb, double beta, double *C, int ldc) {
  cblas_syr2k("cblas_dsyr2k", layout, uplo, transpose, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

FASTGEMM_BLAS_EXPORT void cblas_strmm(int layout, int side, int uplo, int transa, int diag, int m, int n, float alpha,
                                      const float *A, int lda, float *B, int ldb) {
  cblas_triangular(false, "cblas_strmm", layout, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
}

FASTGEMM_BLAS_EXPORT void cblas_dtrmm(int layout, int side, int uplo, int transa, int diag, int m, int n, double alpha,
                                      const double *A, int lda, double *B, int ldb) {
  cblas_triangular(false, "cblas_dtrmm", layout, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
}

FASTGEMM_BLAS_EXPORT void cblas_strsm(int layout, int side, int uplo, int transa, int diag, int m, int n, float alpha,
                                      const float *A, int lda, float *B, int ldb) {
  cblas_triangular(true, "cblas_strsm", layout, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
}

FASTGEMM_BLAS_EXPORT void cblas_dtrsm(int layout, int side, int uplo, int transa, int diag, int m, int n, double alpha,
                                      const double *A, int lda, double *B, int ldb) {
  cblas_triangular(true, "cblas_dtrsm", layout, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
}
