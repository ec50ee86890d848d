/* SPDX-License-Identifier: Apache-2.0 */
/* An ordinary program of a BLAS user in double precision: cblas_dgemm, cblas_dsyrk and cblas_dtrsm on host arrays,
   checked against its own long double loops, with what each routine must not write watched. It knows nothing of
   fastgemm; the tests run it with libfastgemm_blas.so preloaded. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double uniform(unsigned long long *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*state >> 11) / 4503599627370496.0 - 1.0; /* 53 random bits in [-1, 1) */
}

static double *random_array(long count, unsigned long long *state) {
  double *x = malloc(sizeof(double) * (size_t)count);
  for (long i = 0; i < count; ++i) x[i] = uniform(state);
  return x;
}

/* The worst of |got - want| / scale over `count` elements where `checked` says so, and infinity where an element
   that must stay as it was changed. */
static double compare(const double *got, const double *want, const char *checked, long count, double scale) {
  double worst = 0.0;
  for (long i = 0; i < count; ++i) {
    const double error = checked[i] ? (isfinite(got[i]) ? fabs(got[i] - want[i]) / scale : INFINITY)
                                    : (got[i] == want[i] || (isnan(got[i]) && isnan(want[i])) ? 0.0 : INFINITY);
    if (error > worst) worst = error;
  }
  return worst;
}

/* Row-major C (m x n, ldc) := alpha A^T (A stored k x m) B (k x n) + beta C. */
static double gemm(int m, int n, int k, double alpha, double beta, unsigned long long seed) {
  const int lda = m + 3, ldb = n + 1, ldc = n + 2;
  double *a = random_array((long)k * lda, &seed), *b = random_array((long)k * ldb, &seed);
  double *c = random_array((long)m * ldc, &seed), *want = malloc(sizeof(double) * (size_t)m * ldc);
  char *checked = calloc((size_t)m * ldc, 1);
  if (beta == 0.0)
    for (long i = 0; i < (long)m * ldc; ++i) c[i] = NAN; /* never read */
  double largest = 0.0;
  for (long i = 0; i < (long)m * ldc; ++i) want[i] = c[i];
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      long double sum = 0.0L;
      for (int l = 0; l < k; ++l) sum += (long double)a[(long)l * lda + i] * b[(long)l * ldb + j];
      const long i_j = (long)i * ldc + j;
      want[i_j] = (double)(alpha * sum + (beta == 0.0 ? 0.0L : (long double)beta * c[i_j]));
      checked[i_j] = 1;
      if (fabs(want[i_j]) > largest) largest = fabs(want[i_j]);
    }
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  const double worst = compare(c, want, checked, (long)m * ldc, largest);
  free(a), free(b), free(c), free(want), free(checked);
  return worst;
}

/* Column-major C (n x n, lower triangle) := alpha A A^T (A n x k) + beta C; the upper triangle holds NaN, untouched. */
static double syrk(int n, int k, double alpha, double beta, unsigned long long seed) {
  const int lda = n + 1, ldc = n + 5;
  double *a = random_array((long)k * lda, &seed), *c = random_array((long)n * ldc, &seed);
  double *want = malloc(sizeof(double) * (size_t)n * ldc);
  char *checked = calloc((size_t)n * ldc, 1);
  double largest = 0.0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ldc; ++i) {
      const long i_j = (long)j * ldc + i;
      if (i < j) c[i_j] = NAN;
      want[i_j] = c[i_j];
      if (i < j || i >= n) continue;
      long double sum = 0.0L;
      for (int l = 0; l < k; ++l) sum += (long double)a[(long)l * lda + i] * a[(long)l * lda + j];
      want[i_j] = (double)(alpha * sum + (long double)beta * c[i_j]);
      checked[i_j] = 1;
      if (fabs(want[i_j]) > largest) largest = fabs(want[i_j]);
    }
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, k, alpha, a, lda, beta, c, ldc);
  const double worst = compare(c, want, checked, (long)n * ldc, largest);
  free(a), free(c), free(want), free(checked);
  return worst;
}

/* Column-major X (m x n) from A X = B, A lower triangular (m x m, a dominant diagonal): B is made from a known X. */
static double trsm(int m, int n, unsigned long long seed) {
  const int lda = m + 2, ldb = m + 1;
  double *a = random_array((long)m * lda, &seed), *x = random_array((long)n * ldb, &seed);
  double *b = malloc(sizeof(double) * (size_t)n * ldb);
  char *checked = calloc((size_t)n * ldb, 1);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < lda; ++i)
      a[(long)j * lda + i] = i == j ? 2.0 + a[(long)j * lda + i] / 2 : a[(long)j * lda + i] / m;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ldb; ++i) {
      const long i_j = (long)j * ldb + i;
      if (i >= m) {
        b[i_j] = x[i_j];
        continue;
      }
      long double sum = 0.0L;
      for (int l = 0; l <= i; ++l) sum += (long double)a[(long)l * lda + i] * x[(long)j * ldb + l];
      b[i_j] = (double)sum;
      checked[i_j] = 1;
    }
  cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, m, n, 1.0, a, lda, b, ldb);
  const double worst = compare(b, x, checked, (long)n * ldb, 1.0);
  free(a), free(x), free(b), free(checked);
  return worst;
}

int main(void) {
  /* Sizes the GPU takes by default (2mnk above 2 * 512^3, every dimension above 128; dtrsm by blocks of 1024 lines,
     so two here), and one product the CPU keeps. */
  const double large = gemm(700, 650, 600, 1.5, 0.0, 1u), large_beta = gemm(650, 700, 600, -0.5, 0.75, 2u);
  const double small = gemm(40, 30, 20, -0.5, 0.75, 3u), rank_k = syrk(700, 600, 0.5, -1.25, 4u);
  const double solve = trsm(1100, 300, 5u);
  printf(
      "cblas_dgemm 700x650x600: max error %.3g; with beta: %.3g; 40x30x20: %.3g; cblas_dsyrk 700x600: %.3g; "
      "cblas_dtrsm 1100x300: %.3g\n",
      large, large_beta, small, rank_k, solve);
  return large <= 1e-13 && large_beta <= 1e-13 && small <= 1e-13 && rank_k <= 1e-13 && solve <= 1e-12 ? 0 : 1;
}
