/* SPDX-License-Identifier: Apache-2.0 */
/* One invalid call, chosen by the first argument, of cblas_sgemm or sgemm_: the tests run it against the
   reference BLAS alone, with libfastgemm_blas.so linked ahead of it, and preloaded, and compare the
   parameter each names and how each ends. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

void sgemm_(const char *, const char *, const int *, const int *, const int *, const float *, const float *,
            const int *, const float *, const int *, const float *, float *, const int *);

int main(int argc, char **argv) {
  static float a[16], b[16], c[16];
  const CBLAS_LAYOUT row = CblasRowMajor, col = CblasColMajor;
  const CBLAS_TRANSPOSE N = CblasNoTrans, T = CblasTrans, bad = (CBLAS_TRANSPOSE)5;
  const int which = argc > 1 ? atoi(argv[1]) : 0;
  switch (which) {
    case 1: cblas_sgemm((CBLAS_LAYOUT)7, N, N, 0, 0, 0, 1.0f, a, 1, b, 1, 0.0f, c, 1); break;
    case 2: cblas_sgemm(col, bad, N, 0, 0, 0, 1.0f, a, 1, b, 1, 0.0f, c, 1); break;
    case 3: cblas_sgemm(col, N, bad, 0, 0, 0, 1.0f, a, 1, b, 1, 0.0f, c, 1); break;
    case 4: cblas_sgemm(row, bad, N, 0, 0, 0, 1.0f, a, 1, b, 1, 0.0f, c, 1); break;
    case 5: cblas_sgemm(row, N, bad, 0, 0, 0, 1.0f, a, 1, b, 1, 0.0f, c, 1); break;
    case 6: cblas_sgemm(row, N, N, -1, 0, 0, 1.0f, a, 1, b, 1, 0.0f, c, 1); break;
    case 7: cblas_sgemm(row, N, N, 0, -1, 0, 1.0f, a, 1, b, 1, 0.0f, c, 1); break;
    case 8: cblas_sgemm(row, N, N, 0, 0, -1, 1.0f, a, 1, b, 1, 0.0f, c, 1); break;
    case 9: cblas_sgemm(row, N, N, 0, 0, 2, 1.0f, a, 1, b, 1, 0.0f, c, 2); break;  /* lda */
    case 10: cblas_sgemm(row, N, N, 0, 2, 0, 1.0f, a, 1, b, 1, 0.0f, c, 1); break; /* ldb */
    case 11: cblas_sgemm(row, N, N, 0, 2, 0, 1.0f, a, 1, b, 2, 0.0f, c, 1); break; /* ldc */
    case 12: cblas_sgemm(row, T, T, 2, 0, 0, 1.0f, a, 1, b, 1, 0.0f, c, 1); break; /* lda */
    case 13: cblas_sgemm(col, N, N, 2, 0, 0, 1.0f, a, 1, b, 1, 0.0f, c, 2); break; /* lda */
    case 14: cblas_sgemm(col, N, N, 0, 0, 2, 1.0f, a, 1, b, 1, 0.0f, c, 1); break; /* ldb */
    case 15: cblas_sgemm(col, N, N, 2, 0, 0, 1.0f, a, 2, b, 1, 0.0f, c, 1); break; /* ldc */
    case 16: {
      const int two = 2, zero = 0, one = 1;
      const float alpha = 1.0f, beta = 0.0f;
      sgemm_("N", "N", &two, &zero, &zero, &alpha, a, &one, b, &one, &beta, c, &two); /* LDA: 8 */
      break;
    }
    case 17: {
      const int zero = 0, one = 1;
      const float alpha = 1.0f, beta = 0.0f;
      sgemm_("X", "N", &zero, &zero, &zero, &alpha, a, &one, b, &one, &beta, c, &one); /* TRANSA: 1 */
      break;
    }
    default: fprintf(stderr, "parameters: no case %d\n", which); return 2;
  }
  printf("parameters: case %d returned\n", which);
  return 0;
}
