// SPDX-License-Identifier: Apache-2.0
// The reference BLAS's argument checks of the Level 3 routines, and how a bad argument is reported: by the
// Fortran routines through xerbla_, by their CBLAS forms through cblas_xerbla, as netlib's do.
#pragma once

namespace fastgemm_blas {

// A Fortran character argument as the reference's LSAME reads it, in upper case; the checks below take
// either case. After them every argument is one of these letters, and the rest of the library takes only
// these: 'N' or 'T' (a transpose; 'C' is 'T' for real matrices), 'L' or 'R' (a side), 'U' or 'L' (a
// triangle), 'N' or 'U' (a diagonal).
char upper_case(char value);
char trans_letter(char value);

// The reference's checks, in its order (netlib's sgemm.f, ssymm.f, ssyrk.f, ssyr2k.f, strmm.f and strsm.f,
// the same for d): 0 when the arguments are good, else the position of the first bad one. STRMM and STRSM
// check alike.
int gemm_argument_error(char transa, char transb, int m, int n, int k, int lda, int ldb, int ldc);
int symm_argument_error(char side, char uplo, int m, int n, int lda, int ldb, int ldc);
int syrk_argument_error(char uplo, char trans, int n, int k, int lda, int ldc);
int syr2k_argument_error(char uplo, char trans, int n, int k, int lda, int ldb, int ldc);
int triangular_argument_error(char side, char uplo, char transa, char diag, int m, int n, int lda, int ldb);

// The program's xerbla_ (netlib's tests define their own), else the CPU BLAS's, else the reference's
// message and stop. NAME is the reference's, padded to 6 characters as it passes it ("DSYRK ").
void report_fortran_error(const char *name, int info);

// A bad argument of a CBLAS form (ROUTINE: "cblas_dsyrk"), at the position netlib's CBLAS passes: its own
// checks' (the layout 1, the enumerations after it), or the Fortran routine's plus one. In row-major the
// reference turns the call into a column-major one, and its cblas_xerbla, seeing CBLAS's RowMajorStrg set,
// maps that call's positions back to the row-major call's (gemm: M 4 and N 5, lda 9 and ldb 11 trade
// places; symm: M and N; trmm and trsm: M 6 and N 7). The program's cblas_xerbla (netlib's CBLAS tests
// define their own, which maps the same way) or the CPU BLAS's is called exactly so: the position as the
// reference passes it, with RowMajorStrg set for the call. Without any, the message is the one the
// reference's would print.
void report_cblas_error(bool row, int info, const char *routine, const char *message, int value);

}  // namespace fastgemm_blas
