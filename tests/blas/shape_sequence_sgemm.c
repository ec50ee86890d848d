/* SPDX-License-Identifier: Apache-2.0 */
/* An SGEMM for the CPU that computes every element by the sequence FG_REPRODUCIBLE_SHAPE documents
   (include/fastgemm/fastgemm.h): acc = 0, acc = fma(op(A)[i][l], op(B)[l][j], acc) for l = 0 .. k-1, a sum
   of -0 taken as +0, then C = alpha * acc when beta == 0, else fma(beta, C, alpha * acc); k == 0 or
   alpha == 0 give beta * C, or 0 when beta == 0. Preloaded into LAPACK's test programs, it shows on a
   machine without a GPU what that sequence does to their verdicts, and exercises the harness that judges
   the GPU's run (run_lapack_tests.cmake). With FASTGEMM_LOG set it writes one line a call in the drop-in's
   form, which the harness counts. Arguments are assumed valid: LAPACK's tests call it only so. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
            const float *a, const int *lda, const float *b, const int *ldb, const float *beta, float *c,
            const int *ldc) {
  const int a_transposed = toupper((unsigned char)*transa) != 'N';
  const int b_transposed = toupper((unsigned char)*transb) != 'N';
  for (int j = 0; j < *n; ++j)
    for (int i = 0; i < *m; ++i) {
      float *element = &c[i + (long)j * *ldc];
      if (*k == 0 || *alpha == 0.0f) {
        *element = *beta == 0.0f ? 0.0f : *beta * *element;
        continue;
      }
      float acc = 0.0f;
      for (int l = 0; l < *k; ++l) {
        const float x = a_transposed ? a[l + (long)i * *lda] : a[i + (long)l * *lda];
        const float y = b_transposed ? b[j + (long)l * *ldb] : b[l + (long)j * *ldb];
        acc = fmaf(x, y, acc);
      }
      if (acc == 0.0f) acc = 0.0f;
      const float product = *alpha * acc;
      *element = *beta == 0.0f ? product : fmaf(*beta, *element, product);
    }
  if (getenv("FASTGEMM_LOG") != NULL)
    fprintf(stderr, "fastgemm: sgemm_ %dx%dx%d on the GPU (shape_sequence) -> FG_STATUS_SUCCESS\n", *m, *n, *k);
}
