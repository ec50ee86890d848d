/* SPDX-License-Identifier: Apache-2.0 */
/* A CPU BLAS whose CBLAS forms compute through the Fortran names, as the reference's CBLAS does, and that
   has no Fortran routine of its own: cblas_dsymm and cblas_strsm (and an sgemm_, so that the drop-in takes
   it as FASTGEMM_BLAS_FALLBACK). Its calls of dsymm_ and strsm_ reach the drop-in's, which must compute
   them itself (its own loops) rather than come back here forever. At exit it says how many calls came
   back, and whether any came back twice. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

void dsymm_(const char *, const char *, const int *, const int *, const double *, const double *, const int *,
            const double *, const int *, const double *, double *, const int *, size_t, size_t);
void strsm_(const char *, const char *, const char *, const char *, const int *, const int *, const float *,
            const float *, const int *, float *, const int *, size_t, size_t, size_t, size_t);

static int depth = 0, deepest = 0;
static long dsymm_calls = 0, strsm_calls = 0;

static void report(void) {
  printf("callback_blas: %ld calls of cblas_dsymm and %ld of cblas_strsm came back through the Fortran names, %s\n",
         dsymm_calls, strsm_calls, deepest > 1 ? "some of them more than once" : "each once");
}

__attribute__((constructor)) static void start(void) { atexit(report); }

/* Not expected: the program that loads it makes no SGEMM call. */
void sgemm_(void) { abort(); }

void cblas_dsymm(int layout, int side, int uplo, int m, int n, double alpha, const double *a, int lda, const double *b,
                 int ldb, double beta, double *c, int ldc) {
  const char s = side == 141 ? 'L' : 'R', u = uplo == 121 ? 'U' : 'L';
  if (layout != 102 || ++depth > 1) {
    deepest = depth > deepest ? depth : deepest;
    --depth;
    return;
  }
  ++dsymm_calls;
  dsymm_(&s, &u, &m, &n, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
  --depth;
}

void cblas_strsm(int layout, int side, int uplo, int transa, int diag, int m, int n, float alpha, const float *a,
                 int lda, float *b, int ldb) {
  const char s = side == 141 ? 'L' : 'R', u = uplo == 121 ? 'U' : 'L', t = transa == 111 ? 'N' : 'T';
  const char d = diag == 132 ? 'U' : 'N';
  if (layout != 102 || ++depth > 1) {
    deepest = depth > deepest ? depth : deepest;
    --depth;
    return;
  }
  ++strsm_calls;
  strsm_(&s, &u, &t, &d, &m, &n, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1);
  --depth;
}
