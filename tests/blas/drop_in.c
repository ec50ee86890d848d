/* SPDX-License-Identifier: Apache-2.0 */
/* An ordinary program of a BLAS user: cblas_sgemm on host arrays, checked against its own double loop.
   It knows nothing of fastgemm; the tests run it with libfastgemm_blas.so preloaded. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static float uniform(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)((*state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* Row-major C (m x n, ldc) := alpha * A^T (A stored k x m) * B (k x n) + beta * C; returns the worst
   error relative to the largest reference magnitude. */
static double run(int m, int n, int k, float alpha, float beta, unsigned seed) {
  const int lda = m + 3, ldb = n + 1, ldc = n + 2;
  float *a = malloc(sizeof(float) * (size_t)k * lda), *b = malloc(sizeof(float) * (size_t)k * ldb);
  float *c = malloc(sizeof(float) * (size_t)m * ldc);
  double *expected = malloc(sizeof(double) * (size_t)m * ldc);
  for (long i = 0; i < (long)k * lda; ++i) a[i] = uniform(&seed);
  for (long i = 0; i < (long)k * ldb; ++i) b[i] = uniform(&seed);
  for (long i = 0; i < (long)m * ldc; ++i) c[i] = beta == 0.0f ? NAN : uniform(&seed);
  double largest = 0.0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < ldc; ++j) {
      double value = c[(long)i * ldc + j];
      if (j < n) {
        double sum = 0.0;
        for (int l = 0; l < k; ++l) sum += (double)a[(long)l * lda + i] * b[(long)l * ldb + j];
        value = alpha * sum + (beta == 0.0f ? 0.0 : beta * value);
        if (fabs(value) > largest) largest = fabs(value);
      }
      expected[(long)i * ldc + j] = value;
    }
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  double worst = 0.0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < ldc; ++j) {
      const double got = c[(long)i * ldc + j], want = expected[(long)i * ldc + j];
      if (j >= n) {
        if (!(got == want || (isnan(got) && isnan(want)))) worst = INFINITY; /* outside C: untouched */
        continue;
      }
      const double error = isfinite(got) ? fabs(got - want) / largest : INFINITY;
      if (error > worst) worst = error;
    }
  free(a), free(b), free(c), free(expected);
  return worst;
}

int main(void) {
  /* one product the GPU takes by default (2mnk above 2 * 512^3, every dimension above 128), one the CPU keeps */
  const double large = run(700, 650, 600, 1.5f, 0.0f, 1u), small = run(40, 30, 20, -0.5f, 0.75f, 2u);
  printf("cblas_sgemm 700x650x600: max error %.3g; 40x30x20: max error %.3g\n", large, small);
  return large <= 1e-5 && small <= 1e-5 ? 0 : 1;
}
