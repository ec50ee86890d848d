/* SPDX-License-Identifier: Apache-2.0 */
/* dtrsm_ as a BLAS user calls it, on orders and line counts that cross the device solve's blocks of 32 lines and its
   panels of 4096 lines of B, for every side, triangle, transpose (N, T and C, upper and lower case) and diagonal:
   X is checked by its residual against the program's own long double sums, the other triangle of A (and a unit
   diagonal) holds NaN that must not be read, and B's rows past m hold a value that must stay. Then the first lines
   of B (columns for side L, rows for side R) are solved alone and compared bit for bit with the same lines of the
   whole solve: the count of differing elements goes to stderr, for the test to require none where the calls ran on
   the GPU (a CPU BLAS may round a line by its neighbours). It knows nothing of fastgemm; the test preloads
   libfastgemm_blas.so with every call sent to the GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dtrsm_(const char *, const char *, const char *, const char *, const int *, const int *, const double *,
            const double *, const int *, double *, const int *, size_t, size_t, size_t, size_t);

static double uniform(unsigned long long *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*state >> 11) / 4503599627370496.0 - 1.0; /* 53 random bits in [-1, 1) */
}

static const double kKeep = 12345.5; /* B's rows past m */

/* Element (i, l) of op(A) for the stored triangle `uplo` (upper-case letters), a unit diagonal as one. */
static double op_a(const double *a, int lda, char uplo, char trans, char diag, int i, int l) {
  if (i == l && diag == 'U') return 1.0;
  const int row = trans == 'N' ? i : l, col = trans == 'N' ? l : i;
  if (uplo == 'U' ? row > col : row < col) return 0.0;
  return a[row + (long)col * lda];
}

/* The worst of |op(A) X - alpha B| (side L) or |X op(A) - alpha B| (R) over the sum of the terms' magnitudes. */
static double residual(char side, char uplo, char trans, char diag, int m, int n, double alpha, const double *a,
                       int lda, const double *x, const double *b, int ldb) {
  const int order = side == 'L' ? m : n;
  double worst = 0.0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      long double sum = 0.0L, size = 0.0L;
      for (int l = 0; l < order; ++l) {
        const long double term = side == 'L'
                                     ? (long double)op_a(a, lda, uplo, trans, diag, i, l) * x[l + (long)j * ldb]
                                     : (long double)x[i + (long)l * ldb] * op_a(a, lda, uplo, trans, diag, l, j);
        sum += term;
        size += fabsl(term);
      }
      const long double want = (long double)alpha * b[i + (long)j * ldb];
      const double error = (double)(fabsl(sum - want) / (size + fabsl(want) + 1e-300L));
      if (!(error <= worst)) worst = isnan(error) ? INFINITY : error;
    }
  return worst;
}

int main(void) {
  static const int kShapes[][2] = {{1, 3}, {32, 7}, {33, 5}, {100, 9}, {257, 4}, {40, 4100}}; /* order, lines */
  static const char kTrans[] = {'N', 'T', 'C', 't'};
  unsigned long long state = 7;
  int calls = 0, failed = 0;
  long differ = 0, compared = 0;
  for (int shape = 0; shape < (int)(sizeof kShapes / sizeof kShapes[0]); ++shape)
    for (int s = 0; s < 2; ++s)
      for (int u = 0; u < 2; ++u)
        for (int t = 0; t < 2; ++t)
          for (int d = 0; d < 2; ++d) {
            const char side = s ? 'R' : 'L', uplo = u ? 'L' : 'U', diag = d ? 'U' : 'N';
            /* N or T, and in every other shape C or lower case t, which the routine reads as T. */
            const char trans_given = t ? kTrans[1 + (shape % 3)] : 'N', trans = t ? 'T' : 'N';
            const char uplo_given = shape % 2 ? (char)(uplo + 32) : uplo;
            const int order = kShapes[shape][0], lines = kShapes[shape][1];
            const int m = side == 'L' ? order : lines, n = side == 'L' ? lines : order;
            const int lda = order + 3, ldb = m + 2;
            const double alpha = 0.5 + 1.5 * (uniform(&state) + 1.0) / 2.0;
            double *a = malloc(sizeof(double) * (size_t)lda * order);
            double *b = malloc(sizeof(double) * (size_t)ldb * n), *x = malloc(sizeof(double) * (size_t)ldb * n);
            for (int j = 0; j < order; ++j)
              for (int i = 0; i < lda; ++i) {
                const int stored = i < order && (uplo == 'U' ? i <= j : i >= j) && !(i == j && diag == 'U');
                a[i + (long)j * lda] = !stored ? NAN : i == j ? 1.5 + uniform(&state) / 2.0 : uniform(&state) / order;
              }
            for (int j = 0; j < n; ++j)
              for (int i = 0; i < ldb; ++i) b[i + (long)j * ldb] = i < m ? uniform(&state) : kKeep;
            memcpy(x, b, sizeof(double) * (size_t)ldb * n);
            dtrsm_(&side, &uplo_given, &trans_given, &diag, &m, &n, &alpha, a, &lda, x, &ldb, 1, 1, 1, 1);
            ++calls;
            int kept = 1;
            for (int j = 0; j < n; ++j)
              for (int i = m; i < ldb; ++i) kept = kept && x[i + (long)j * ldb] == kKeep;
            const double worst = residual(side, uplo, trans, diag, m, n, alpha, a, lda, x, b, ldb);
            if (!kept || !(worst <= 1e-13)) {
              ++failed;
              printf("trsm_device: side %c uplo %c trans %c diag %c m %d n %d: residual %.3g%s\n", side, uplo_given,
                     trans_given, diag, m, n, worst, kept ? "" : ", rows past m written");
            }
            /* The first lines alone: a line's bits must not depend on how many others the call solves. */
            const int part = lines > 3 ? lines - 3 : 1;
            const int pm = side == 'L' ? m : part, pn = side == 'L' ? part : n;
            double *alone = malloc(sizeof(double) * (size_t)ldb * n);
            memcpy(alone, b, sizeof(double) * (size_t)ldb * n);
            dtrsm_(&side, &uplo_given, &trans_given, &diag, &pm, &pn, &alpha, a, &lda, alone, &ldb, 1, 1, 1, 1);
            ++calls;
            for (int j = 0; j < n; ++j)
              for (int i = 0; i < m; ++i) {
                const long at = i + (long)j * ldb;
                if (i < pm && j < pn) {
                  differ += memcmp(&alone[at], &x[at], sizeof(double)) != 0;
                  ++compared;
                } else if (alone[at] != b[at]) {
                  ++failed; /* a line past the call's written */
                  printf("trsm_device: side %c m %d n %d: the call of %d x %d wrote B(%d, %d)\n", side, m, n, pm, pn, i,
                         j);
                  i = m, j = n;
                }
              }
            free(a), free(b), free(x), free(alone);
          }
  fprintf(stderr, "trsm_device: line bits: %ld of %ld differ\n", differ, compared);
  printf("trsm_device: %d calls checked, %d failed\n", calls, failed);
  return failed != 0;
}
