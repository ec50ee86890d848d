/* SPDX-License-Identifier: Apache-2.0 */
/* The Level 3 routines libfastgemm_blas.so defines besides sgemm: dgemm, and symm, syrk, syr2k, trmm and
   trsm in single and double precision, each as its Fortran routine and as its CBLAS form in both layouts,
   called on random operands and compared with a reference computed here in long double. The program is
   linked to libfastgemm_blas.so alone (no -lblas): every call is the drop-in's.
   What a routine overwrites without reading is NaN before the call (C when beta = 0; B of trmm and trsm
   when alpha = 0), and so is what it must not read (A and B when alpha = 0, the other triangle of A, a unit
   diagonal, the padding of every input); what it must not write has to keep its value (the other triangle
   of C for syrk and syr2k, the padding of the output). Leading dimensions are the smallest allowed, or 2
   more. Sizes include 0, and alpha = 0 with beta = 0 and 1. */
#include <cblas.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *, const double *,
            const int *, const double *, const int *, const double *, double *, const int *, size_t, size_t);
void ssymm_(const char *, const char *, const int *, const int *, const float *, const float *, const int *,
            const float *, const int *, const float *, float *, const int *, size_t, size_t);
void dsymm_(const char *, const char *, const int *, const int *, const double *, const double *, const int *,
            const double *, const int *, const double *, double *, const int *, size_t, size_t);
void ssyrk_(const char *, const char *, const int *, const int *, const float *, const float *, const int *,
            const float *, float *, const int *, size_t, size_t);
void dsyrk_(const char *, const char *, const int *, const int *, const double *, const double *, const int *,
            const double *, double *, const int *, size_t, size_t);
void ssyr2k_(const char *, const char *, const int *, const int *, const float *, const float *, const int *,
             const float *, const int *, const float *, float *, const int *, size_t, size_t);
void dsyr2k_(const char *, const char *, const int *, const int *, const double *, const double *, const int *,
             const double *, const int *, const double *, double *, const int *, size_t, size_t);
void strmm_(const char *, const char *, const char *, const char *, const int *, const int *, const float *,
            const float *, const int *, float *, const int *, size_t, size_t, size_t, size_t);
void dtrmm_(const char *, const char *, const char *, const char *, const int *, const int *, const double *,
            const double *, const int *, double *, const int *, size_t, size_t, size_t, size_t);
void strsm_(const char *, const char *, const char *, const char *, const int *, const int *, const float *,
            const float *, const int *, float *, const int *, size_t, size_t, size_t, size_t);
void dtrsm_(const char *, const char *, const char *, const char *, const int *, const int *, const double *,
            const double *, const int *, double *, const int *, size_t, size_t, size_t, size_t);

enum { FORTRAN, COLUMN, ROW }; /* the entry point: the Fortran routine, the CBLAS form in each layout */
static const char *const api_name[3] = {"Fortran", "CBLAS column-major", "CBLAS row-major"};

/* A rows x cols matrix as the call stores it (row-major for ROW), with every stored element, padding
   included, in x. */
typedef struct {
  int rows, cols, ld, row_major;
  long size;
  double *x;
} matrix;

static unsigned state = 12345u;
static long calls = 0;
static int failures = 0;
static double worst[2] = {0.0, 0.0}; /* single, double */

/* Multiples of 2^-15 in [-1, 1): exact in single precision, so both precisions see the same operands. */
static double uniform(void) {
  state = state * 1664525u + 1013904223u;
  return (double)((state >> 8) & 0xffff) / 32768.0 - 1.0;
}

static long at(const matrix *a, int i, int j) { return a->row_major ? (long)i * a->ld + j : i + (long)j * a->ld; }
static double get(const matrix *a, int i, int j) { return a->x[at(a, i, j)]; }
static void set(matrix *a, int i, int j, double value) { a->x[at(a, i, j)] = value; }

/* PAD more than the smallest leading dimension; every stored element FILL. */
static matrix make(int rows, int cols, int row_major, int pad, double fill) {
  matrix a = {rows, cols, 0, row_major, 0, NULL};
  const int inner = row_major ? cols : rows, outer = row_major ? rows : cols;
  a.ld = (inner > 1 ? inner : 1) + pad;
  a.size = (long)a.ld * (outer > 0 ? outer : 1);
  a.x = malloc(sizeof(double) * (size_t)a.size);
  for (long e = 0; e < a.size; ++e) a.x[e] = fill;
  return a;
}

static void randomize(matrix *a) {
  for (int i = 0; i < a->rows; ++i)
    for (int j = 0; j < a->cols; ++j) set(a, i, j, uniform());
}

static matrix copy(const matrix *a) {
  matrix b = *a;
  b.x = malloc(sizeof(double) * (size_t)a->size);
  memcpy(b.x, a->x, sizeof(double) * (size_t)a->size);
  return b;
}

static void *typed(const matrix *a, int dbl) {
  void *p = malloc((dbl ? sizeof(double) : sizeof(float)) * (size_t)a->size);
  for (long e = 0; e < a->size; ++e)
    if (dbl)
      ((double *)p)[e] = a->x[e];
    else
      ((float *)p)[e] = (float)a->x[e];
  return p;
}

static void untyped(matrix *a, void *p, int dbl) {
  for (long e = 0; e < a->size; ++e) a->x[e] = dbl ? ((double *)p)[e] : ((float *)p)[e];
  free(p);
}

/* A Fortran letter, in lower case every other call: LSAME takes either. */
static char letter(char value) { return (calls & 1) ? (char)tolower((unsigned char)value) : value; }
static const char trans_letters[3] = {'N', 'T', 'C'};
static const CBLAS_TRANSPOSE trans_values[3] = {CblasNoTrans, CblasTrans, CblasConjTrans};
static CBLAS_LAYOUT layout_of(int api) { return api == ROW ? CblasRowMajor : CblasColMajor; }

/* GOT after the call against WANT (the values before it, with the reference's result written where
   REGION is set): within the precision's tolerance there, relative to the largest |WANT| in it; unchanged
   everywhere else. */
static void check(const char *routine, int api, const char *options, const matrix *got, const matrix *want,
                  const char *region, int dbl) {
  double largest = 0.0, error = 0.0;
  long changed = 0;
  for (long e = 0; e < want->size; ++e)
    if (region[e] && fabs(want->x[e]) > largest) largest = fabs(want->x[e]);
  for (long e = 0; e < want->size; ++e) {
    const double g = got->x[e], w = want->x[e];
    if (region[e]) {
      const double d = isfinite(g) ? fabs(g - w) / (largest > 0.0 ? largest : 1.0) : INFINITY;
      if (d > error) error = d;
    } else if (!(g == w || (isnan(g) && isnan(w)))) {
      ++changed;
    }
  }
  ++calls;
  if (error > worst[dbl]) worst[dbl] = error;
  if (error <= (dbl ? 1e-12 : 1e-4) && changed == 0) return;
  if (++failures <= 20)
    printf("FAILED: %s (%s) %s: error %.3g, %ld elements outside the result changed\n", routine, api_name[api], options,
           error, changed);
}

/* op(A)(i, l) for op(A) of A or of its transpose. */
static double op(const matrix *a, int transposed, int i, int l) { return transposed ? get(a, l, i) : get(a, i, l); }

static void gemm_case(int api, int ta, int tb, int m, int n, int k, double alpha, double beta, int pad) {
  const int row = api == ROW;
  matrix A = make(ta ? k : m, ta ? m : k, row, pad, NAN), B = make(tb ? n : k, tb ? k : n, row, pad, NAN);
  matrix C = make(m, n, row, pad, 4242.0);
  if (alpha != 0.0) randomize(&A), randomize(&B);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) set(&C, i, j, beta == 0.0 ? NAN : uniform());
  matrix want = copy(&C);
  char *region = calloc((size_t)C.size, 1);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      long double sum = 0.0L;
      for (int l = 0; l < k && alpha != 0.0; ++l) sum += (long double)op(&A, ta, i, l) * op(&B, tb, l, j);
      set(&want, i, j, (double)(alpha * sum + (beta == 0.0 ? 0.0L : (long double)beta * get(&C, i, j))));
      region[at(&C, i, j)] = 1;
    }
  void *a = typed(&A, 1), *b = typed(&B, 1), *c = typed(&C, 1);
  if (api == FORTRAN) {
    const char fa = letter(trans_letters[ta]), fb = letter(trans_letters[tb]);
    dgemm_(&fa, &fb, &m, &n, &k, &alpha, a, &A.ld, b, &B.ld, &beta, c, &C.ld, 1, 1);
  } else {
    cblas_dgemm(layout_of(api), trans_values[ta], trans_values[tb], m, n, k, alpha, a, A.ld, b, B.ld, beta, c, C.ld);
  }
  untyped(&C, c, 1);
  free(a), free(b);
  char options[96];
  snprintf(options, sizeof options, "%c%c m=%d n=%d k=%d alpha=%g beta=%g", trans_letters[ta], trans_letters[tb], m, n,
           k, alpha, beta);
  check("dgemm", api, options, &C, &want, region, 1);
  free(A.x), free(B.x), free(C.x), free(want.x), free(region);
}

/* A square triangular (or symmetric, stored in one triangle) matrix of size N: the triangle UPPER holds
   random values, the other NaN, the diagonal NaN when UNIT. WELL_CONDITIONED (for trsm, sizes up to 32):
   off the diagonal values of at most 1/32, on it magnitudes between 1 and 2. */
static matrix triangle(int n, int row, int pad, int upper, int unit, int well_conditioned) {
  matrix a = make(n, n, row, pad, NAN);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j) {
        if (!unit)
          set(&a, i, i, well_conditioned ? (uniform() < 0.0 ? -1.0 : 1.0) * (1.5 + uniform() / 2.0) : uniform());
      } else if (upper ? i < j : i > j) {
        set(&a, i, j, well_conditioned ? uniform() / 32.0 : uniform());
      }
    }
  return a;
}

/* Element (i, l) of the symmetric A stored in its triangle UPPER; of the triangular op(A), 0 outside. */
static double symmetric(const matrix *a, int upper, int i, int l) {
  return (upper ? i <= l : i >= l) ? get(a, i, l) : get(a, l, i);
}
static double triangular(const matrix *a, int upper, int transposed, int unit, int i, int l) {
  const int r = transposed ? l : i, c = transposed ? i : l;
  if (r == c) return unit ? 1.0 : get(a, r, r);
  return (upper ? r < c : r > c) ? get(a, r, c) : 0.0;
}

static void symm_case(int dbl, int api, int right, int upper, int m, int n, double alpha, double beta, int pad) {
  const int row = api == ROW, ka = right ? n : m;
  matrix A = alpha != 0.0 ? triangle(ka, row, pad, upper, 0, 0) : make(ka, ka, row, pad, NAN);
  matrix B = make(m, n, row, pad, NAN), C = make(m, n, row, pad, 4242.0);
  if (alpha != 0.0) randomize(&B);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) set(&C, i, j, beta == 0.0 ? NAN : uniform());
  matrix want = copy(&C);
  char *region = calloc((size_t)C.size, 1);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      long double sum = 0.0L;
      for (int l = 0; l < ka && alpha != 0.0; ++l)
        sum += right ? (long double)get(&B, i, l) * symmetric(&A, upper, l, j)
                     : (long double)symmetric(&A, upper, i, l) * get(&B, l, j);
      set(&want, i, j, (double)(alpha * sum + (beta == 0.0 ? 0.0L : (long double)beta * get(&C, i, j))));
      region[at(&C, i, j)] = 1;
    }
  void *a = typed(&A, dbl), *b = typed(&B, dbl), *c = typed(&C, dbl);
  const float fa = (float)alpha, fb = (float)beta;
  if (api == FORTRAN) {
    const char s = letter(right ? 'R' : 'L'), u = letter(upper ? 'U' : 'L');
    if (dbl)
      dsymm_(&s, &u, &m, &n, &alpha, a, &A.ld, b, &B.ld, &beta, c, &C.ld, 1, 1);
    else
      ssymm_(&s, &u, &m, &n, &fa, a, &A.ld, b, &B.ld, &fb, c, &C.ld, 1, 1);
  } else {
    const CBLAS_SIDE s = right ? CblasRight : CblasLeft;
    const CBLAS_UPLO u = upper ? CblasUpper : CblasLower;
    if (dbl)
      cblas_dsymm(layout_of(api), s, u, m, n, alpha, a, A.ld, b, B.ld, beta, c, C.ld);
    else
      cblas_ssymm(layout_of(api), s, u, m, n, fa, a, A.ld, b, B.ld, fb, c, C.ld);
  }
  untyped(&C, c, dbl);
  free(a), free(b);
  char options[96];
  snprintf(options, sizeof options, "side=%c uplo=%c m=%d n=%d alpha=%g beta=%g", right ? 'R' : 'L', upper ? 'U' : 'L',
           m, n, alpha, beta);
  check(dbl ? "dsymm" : "ssymm", api, options, &C, &want, region, dbl);
  free(A.x), free(B.x), free(C.x), free(want.x), free(region);
}

/* syrk (TWO == 0) and syr2k: the triangle UPPER of C; the other keeps its random values. */
static void rank_case(int two, int dbl, int api, int upper, int t, int n, int k, double alpha, double beta, int pad) {
  const int row = api == ROW, transposed = t != 0;
  matrix A = make(transposed ? k : n, transposed ? n : k, row, pad, NAN);
  matrix B = make(transposed ? k : n, transposed ? n : k, row, pad, NAN), C = make(n, n, row, pad, 4242.0);
  if (alpha != 0.0) randomize(&A), randomize(&B);
  matrix want;
  char *region = calloc((size_t)C.size, 1);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const int inside = upper ? i <= j : i >= j;
      set(&C, i, j, inside && beta == 0.0 ? NAN : uniform());
      region[at(&C, i, j)] = (char)inside;
    }
  want = copy(&C);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (!region[at(&C, i, j)]) continue;
      long double sum = 0.0L;
      for (int l = 0; l < k && alpha != 0.0; ++l)
        sum += two ? (long double)op(&A, transposed, i, l) * op(&B, transposed, j, l) +
                         (long double)op(&B, transposed, i, l) * op(&A, transposed, j, l)
                   : (long double)op(&A, transposed, i, l) * op(&A, transposed, j, l);
      set(&want, i, j, (double)(alpha * sum + (beta == 0.0 ? 0.0L : (long double)beta * get(&C, i, j))));
    }
  void *a = typed(&A, dbl), *b = typed(&B, dbl), *c = typed(&C, dbl);
  const float fa = (float)alpha, fb = (float)beta;
  if (api == FORTRAN) {
    const char u = letter(upper ? 'U' : 'L'), tr = letter(trans_letters[t]);
    if (two && dbl) dsyr2k_(&u, &tr, &n, &k, &alpha, a, &A.ld, b, &B.ld, &beta, c, &C.ld, 1, 1);
    if (two && !dbl) ssyr2k_(&u, &tr, &n, &k, &fa, a, &A.ld, b, &B.ld, &fb, c, &C.ld, 1, 1);
    if (!two && dbl) dsyrk_(&u, &tr, &n, &k, &alpha, a, &A.ld, &beta, c, &C.ld, 1, 1);
    if (!two && !dbl) ssyrk_(&u, &tr, &n, &k, &fa, a, &A.ld, &fb, c, &C.ld, 1, 1);
  } else {
    const CBLAS_UPLO u = upper ? CblasUpper : CblasLower;
    if (two && dbl) cblas_dsyr2k(layout_of(api), u, trans_values[t], n, k, alpha, a, A.ld, b, B.ld, beta, c, C.ld);
    if (two && !dbl) cblas_ssyr2k(layout_of(api), u, trans_values[t], n, k, fa, a, A.ld, b, B.ld, fb, c, C.ld);
    if (!two && dbl) cblas_dsyrk(layout_of(api), u, trans_values[t], n, k, alpha, a, A.ld, beta, c, C.ld);
    if (!two && !dbl) cblas_ssyrk(layout_of(api), u, trans_values[t], n, k, fa, a, A.ld, fb, c, C.ld);
  }
  untyped(&C, c, dbl);
  free(a), free(b);
  char options[96];
  snprintf(options, sizeof options, "uplo=%c trans=%c n=%d k=%d alpha=%g beta=%g", upper ? 'U' : 'L', trans_letters[t],
           n, k, alpha, beta);
  check(two ? (dbl ? "dsyr2k" : "ssyr2k") : (dbl ? "dsyrk" : "ssyrk"), api, options, &C, &want, region, dbl);
  free(A.x), free(B.x), free(C.x), free(want.x), free(region);
}

/* trmm (SOLVE == 0) and trsm. The reference solves by substitution, in the order that finds each element
   of X from those found before it. */
static void triangular_case(int solve, int dbl, int api, int right, int upper, int t, int unit, int m, int n,
                            double alpha, int pad) {
  const int row = api == ROW, ka = right ? n : m, transposed = t != 0;
  matrix A = alpha != 0.0 ? triangle(ka, row, pad, upper, unit, solve) : make(ka, ka, row, pad, NAN);
  matrix B = make(m, n, row, pad, 4242.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) set(&B, i, j, alpha == 0.0 ? NAN : uniform());
  matrix want = copy(&B);
  char *region = calloc((size_t)B.size, 1);
  const int op_upper = upper != transposed; /* whether op(A) is upper triangular */
  long double *x = calloc((size_t)(m > 0 ? m : 1) * (size_t)(n > 0 ? n : 1), sizeof(long double));
  for (int step_j = 0; step_j < n; ++step_j)
    for (int step_i = 0; step_i < m; ++step_i) {
      /* the order of substitution: op(A) X = B from the bottom up when upper; X op(A) from the left */
      const int i = solve && !right && op_upper ? m - 1 - step_i : step_i;
      const int j = solve && right && !op_upper ? n - 1 - step_j : step_j;
      long double value = 0.0L;
      if (alpha != 0.0 && !solve) {
        for (int l = 0; l < ka; ++l)
          value += right ? (long double)get(&B, i, l) * triangular(&A, upper, transposed, unit, l, j)
                         : (long double)triangular(&A, upper, transposed, unit, i, l) * get(&B, l, j);
        value *= alpha;
      } else if (alpha != 0.0) {
        value = (long double)alpha * get(&B, i, j);
        for (int l = 0; l < ka; ++l) {
          const int known = right ? (op_upper ? l < j : l > j) : (op_upper ? l > i : l < i);
          if (known)
            value -= right ? x[i + (long)l * m] * triangular(&A, upper, transposed, unit, l, j)
                           : triangular(&A, upper, transposed, unit, i, l) * x[l + (long)j * m];
        }
        value /= right ? triangular(&A, upper, transposed, unit, j, j) : triangular(&A, upper, transposed, unit, i, i);
      }
      x[i + (long)j * m] = value;
      set(&want, i, j, (double)value);
      region[at(&B, i, j)] = 1;
    }
  free(x);
  void *a = typed(&A, dbl), *b = typed(&B, dbl);
  const float fa = (float)alpha;
  if (api == FORTRAN) {
    const char s = letter(right ? 'R' : 'L'), u = letter(upper ? 'U' : 'L'), tr = letter(trans_letters[t]);
    const char d = letter(unit ? 'U' : 'N');
    if (solve && dbl) dtrsm_(&s, &u, &tr, &d, &m, &n, &alpha, a, &A.ld, b, &B.ld, 1, 1, 1, 1);
    if (solve && !dbl) strsm_(&s, &u, &tr, &d, &m, &n, &fa, a, &A.ld, b, &B.ld, 1, 1, 1, 1);
    if (!solve && dbl) dtrmm_(&s, &u, &tr, &d, &m, &n, &alpha, a, &A.ld, b, &B.ld, 1, 1, 1, 1);
    if (!solve && !dbl) strmm_(&s, &u, &tr, &d, &m, &n, &fa, a, &A.ld, b, &B.ld, 1, 1, 1, 1);
  } else {
    const CBLAS_SIDE s = right ? CblasRight : CblasLeft;
    const CBLAS_UPLO u = upper ? CblasUpper : CblasLower;
    const CBLAS_DIAG d = unit ? CblasUnit : CblasNonUnit;
    const CBLAS_LAYOUT layout = layout_of(api);
    if (solve && dbl) cblas_dtrsm(layout, s, u, trans_values[t], d, m, n, alpha, a, A.ld, b, B.ld);
    if (solve && !dbl) cblas_strsm(layout, s, u, trans_values[t], d, m, n, fa, a, A.ld, b, B.ld);
    if (!solve && dbl) cblas_dtrmm(layout, s, u, trans_values[t], d, m, n, alpha, a, A.ld, b, B.ld);
    if (!solve && !dbl) cblas_strmm(layout, s, u, trans_values[t], d, m, n, fa, a, A.ld, b, B.ld);
  }
  untyped(&B, b, dbl);
  free(a);
  char options[96];
  snprintf(options, sizeof options, "side=%c uplo=%c transa=%c diag=%c m=%d n=%d alpha=%g", right ? 'R' : 'L',
           upper ? 'U' : 'L', trans_letters[t], unit ? 'U' : 'N', m, n, alpha);
  check(solve ? (dbl ? "dtrsm" : "strsm") : (dbl ? "dtrmm" : "strmm"), api, options, &B, &want, region, dbl);
  free(A.x), free(B.x), free(want.x), free(region);
}

int main(void) {
  /* alpha and beta: beta = 0 (C NaN), both, alpha = 0 (A and B NaN) with beta = 1 (the quick return) and 0 */
  static const double ab[5][2] = {{1.5, 0.0}, {-0.5, 0.75}, {0.7, 1.0}, {0.0, 1.0}, {0.0, 0.0}};
  static const int sizes[6][3] = {{0, 3, 2}, {3, 0, 2}, {4, 3, 0}, {1, 1, 1}, {7, 5, 3}, {17, 13, 9}};
  for (int api = 0; api < 3; ++api)
    for (int s = 0; s < 6; ++s)
      for (int c = 0; c < 5; ++c) {
        const int m = sizes[s][0], n = sizes[s][1], k = sizes[s][2], pad = (s + c) % 2 ? 2 : 0;
        const double alpha = ab[c][0], beta = ab[c][1];
        for (int ta = 0; ta < 3; ++ta)
          for (int tb = 0; tb < 3; ++tb) gemm_case(api, ta, tb, m, n, k, alpha, beta, pad);
        for (int dbl = 0; dbl < 2; ++dbl)
          for (int upper = 0; upper < 2; ++upper) {
            for (int right = 0; right < 2; ++right) symm_case(dbl, api, right, upper, m, n, alpha, beta, pad);
            for (int t = 0; t < 3; ++t)
              for (int two = 0; two < 2; ++two) rank_case(two, dbl, api, upper, t, n, k, alpha, beta, pad);
            for (int right = 0; right < 2; ++right)
              for (int t = 0; t < 3; ++t)
                for (int unit = 0; unit < 2; ++unit)
                  for (int solve = 0; solve < 2; ++solve)
                    if (c != 3) /* trmm and trsm take no beta */
                      triangular_case(solve, dbl, api, right, upper, t, unit, m, n, alpha, pad);
          }
      }
  printf("level3: %ld calls checked, %d failed; worst error %.3g in single precision, %.3g in double\n", calls,
         failures, worst[0], worst[1]);
  return failures == 0 ? 0 : 1;
}
