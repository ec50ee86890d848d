/* SPDX-License-Identifier: Apache-2.0 */
/* libfastgemm_lapack.so's QR panels (?geqr2_, ?larft_ in halves) against the reference LAPACK's, both opened here
   (RTLD_LOCAL) and given the same random matrices, in single and double precision:
   - ?geqr2_ on panels it takes (m >= n, 128 to 4096 columns; odd widths, LDA past M, reflectors with tau 0): tau, R
     and the Householder vectors within a relative tolerance of the reference's, Q R within a few units of roundoff
     of A (in double), the rows past M untouched, tau poisoned with NaN before the call;
   - ?larft_ (forward, columnwise) on the reference's reflectors, some tau set to 0: T's upper triangle within the
     tolerance of the reference's (poisoned with NaN before), its strictly lower part untouched;
   - ?larfb_ of the reference's reflectors on a random C (the rows past M a sentinel, the workspace NaN before), taken
     (from the left, forward, columnwise; H and its transpose; large enough to be split among threads) or not: the
     reference's bits, since it makes the same BLAS calls;
   - the calls it leaves to LAPACK (fewer than 128 columns, m < n, backward or rowwise T): the reference's bits.
   lapack_qr REFERENCE_LAPACK FASTGEMM_LAPACK: "ok", or each case that fails (exit status 1). */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*Geqr2)(const int *, const int *, void *, const int *, void *, void *, int *);
typedef void (*Larft)(const char *, const char *, const int *, const int *, const void *, const int *, const void *,
                      void *, const int *, size_t, size_t);
typedef void (*Larfb)(const char *, const char *, const char *, const char *, const int *, const int *, const int *,
                      const void *, const int *, const void *, const int *, void *, const int *, void *, const int *,
                      size_t, size_t, size_t, size_t);

static int failed = 0;
static unsigned long long state = 7;

static double uniform(void) { /* in [-1, 1) */
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(state >> 11) / 4503599627370496.0 - 1.0;
}

/* Element i of an array of `dbl` (double) or float, and setting it. */
static double get(const void *x, size_t i, int dbl) { return dbl ? ((const double *)x)[i] : ((const float *)x)[i]; }
static void set(void *x, size_t i, double value, int dbl) {
  if (dbl)
    ((double *)x)[i] = value;
  else
    ((float *)x)[i] = (float)value;
}

/* ||x - y||_F / ||y||_F over the elements for which keep(i, j) holds, of m x n arrays with leading dimension ld. */
static double relative(const void *x, const void *y, int m, int n, int ld, int dbl, int upper_only) {
  double difference = 0, norm = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      if (upper_only && i > j) continue;
      const size_t k = (size_t)i + (size_t)j * ld;
      const double a = get(x, k, dbl), b = get(y, k, dbl);
      difference += (a - b) * (a - b);
      norm += b * b;
    }
  return norm > 0 ? sqrt(difference / norm) : sqrt(difference);
}

/* ||A - Q R||_F / ||A||_F, Q from the reflectors (V below the diagonal of qr, tau), R on and above it; in double. */
static double backward(const void *a, const void *qr, const void *tau, int m, int n, int lda, int dbl) {
  double *x = calloc((size_t)m * n, sizeof(double)), *v = malloc(sizeof(double) * m);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i <= j; ++i) x[i + (size_t)j * m] = get(qr, (size_t)i + (size_t)j * lda, dbl);
  for (int r = n - 1; r >= 0; --r) { /* x = H_r x, H_r = I - tau v v^T, v = (0.., 1, qr(r+1:m, r)) */
    const double t = get(tau, r, dbl);
    v[r] = 1;
    for (int i = r + 1; i < m; ++i) v[i] = get(qr, (size_t)i + (size_t)r * lda, dbl);
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int i = r; i < m; ++i) s += v[i] * x[i + (size_t)j * m];
      s *= t;
      for (int i = r; i < m; ++i) x[i + (size_t)j * m] -= s * v[i];
    }
  }
  double difference = 0, norm = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const double e = get(a, (size_t)i + (size_t)j * lda, dbl);
      difference += (e - x[i + (size_t)j * m]) * (e - x[i + (size_t)j * m]);
      norm += e * e;
    }
  free(x), free(v);
  return sqrt(difference / norm);
}

/* ?geqr2_ of m x n (lda) by both; zero_columns: the first columns upper triangular, so that their tau are 0. */
static void geqr2_case(Geqr2 ref, Geqr2 own, int dbl, int m, int n, int lda, int zero_columns, int taken) {
  const size_t size = dbl ? 8 : 4, elements = (size_t)lda * n;
  void *a = malloc(elements * size), *b = malloc(elements * size), *original = malloc(elements * size);
  void *tau_a = malloc((size_t)n * size), *tau_b = malloc((size_t)n * size), *work = malloc((size_t)n * size);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < lda; ++i)
      set(original, (size_t)i + (size_t)j * lda,
          i >= m                        ? ldexp(1.0, 100)
          : (j < zero_columns && i > j) ? 0.0
                                        : uniform(),
          dbl);
  memcpy(a, original, elements * size);
  memcpy(b, original, elements * size);
  for (int j = 0; j < n; ++j) set(tau_a, j, NAN, dbl), set(tau_b, j, NAN, dbl);
  int info_a = 1, info_b = 1;
  ref(&m, &n, a, &lda, tau_a, work, &info_a);
  own(&m, &n, b, &lda, tau_b, work, &info_b);
  const char p = dbl ? 'd' : 's';
  if (!taken) {
    if (info_b != info_a || memcmp(a, b, elements * size) != 0 || memcmp(tau_a, tau_b, (size_t)n * size) != 0) {
      printf("%cgeqr2 %d x %d (lda %d): not the reference's bits\n", p, m, n, lda);
      failed = 1;
    }
  } else {
    const double tolerance = dbl ? 1e-12 : 2e-5;
    const double taus = relative(tau_b, tau_a, n, 1, n, dbl, 0), factors = relative(b, a, m, n, lda, dbl, 0);
    const double residual = backward(original, b, tau_b, m, n, lda, dbl) / (dbl ? 2.2e-16 : 1.2e-7);
    int zeros = 1, padding = 1;
    for (int j = 0; j < zero_columns; ++j) zeros = zeros && get(tau_b, j, dbl) == 0.0;
    for (int j = 0; j < n; ++j)
      for (int i = m; i < lda; ++i) padding = padding && get(b, (size_t)i + (size_t)j * lda, dbl) == ldexp(1.0, 100);
    if (info_b != 0 || !(taus <= tolerance) || !(factors <= tolerance) || !(residual <= 4.0 * sqrt((double)m)) ||
        !zeros || !padding) {
      printf(
          "%cgeqr2 %d x %d (lda %d): info %d, tau %.2e, R and V %.2e off the reference's, |A - QR| %.1f ulp, "
          "tau 0 kept %d, rows past m kept %d\n",
          p, m, n, lda, info_b, taus, factors, residual, zeros, padding);
      failed = 1;
    }
  }
  free(a), free(b), free(original), free(tau_a), free(tau_b), free(work);
}

/* ?larft_ of the k reflectors of the reference's QR of a random n x k matrix (zeroed: tau set to 0 at those). */
static void larft_case(Geqr2 ref_geqr2, Larft ref, Larft own, int dbl, const char *direct, const char *storev, int n,
                       int k, const int *zeroed, int taken) {
  const size_t size = dbl ? 8 : 4;
  const int ldv = n + 3, ldt = k + 2;
  const int columns = n > k ? n : k; /* rowwise reflectors are k x n */
  void *v = malloc((size_t)ldv * columns * size), *tau = malloc((size_t)k * size), *work = malloc((size_t)k * size);
  void *t_a = malloc((size_t)ldt * k * size), *t_b = malloc((size_t)ldt * k * size);
  for (size_t i = 0; i < (size_t)ldv * columns; ++i) set(v, i, uniform(), dbl);
  int info = 0;
  ref_geqr2(&n, &k, v, &ldv, tau, work, &info);
  for (; zeroed != NULL && *zeroed >= 0; ++zeroed) set(tau, *zeroed, 0.0, dbl);
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < ldt; ++i) set(t_a, (size_t)i + (size_t)j * ldt, i <= j ? NAN : 7.0, dbl);
  memcpy(t_b, t_a, (size_t)ldt * k * size);
  ref(direct, storev, &n, &k, v, &ldv, tau, t_a, &ldt, 1, 1);
  own(direct, storev, &n, &k, v, &ldv, tau, t_b, &ldt, 1, 1);
  const char p = dbl ? 'd' : 's';
  if (!taken) {
    if (memcmp(t_a, t_b, (size_t)ldt * k * size) != 0) {
      printf("%clarft %s%s %d x %d: not the reference's bits\n", p, direct, storev, n, k);
      failed = 1;
    }
  } else {
    int lower = 1;
    for (int j = 0; j < k; ++j)
      for (int i = j + 1; i < ldt; ++i) lower = lower && get(t_b, (size_t)i + (size_t)j * ldt, dbl) == 7.0;
    const double off = relative(t_b, t_a, k, k, ldt, dbl, 1);
    if (!(off <= (dbl ? 1e-12 : 1e-5)) || !lower) {
      printf("%clarft %s%s %d x %d: T %.2e off the reference's, lower part kept %d\n", p, direct, storev, n, k, off,
             lower);
      failed = 1;
    }
  }
  free(v), free(tau), free(work), free(t_a), free(t_b);
}

/* ?larfb_ of the k reflectors (V, T from the reference's QR of a random m x k matrix) on a random m x n C (ldc past
   m, the rows past it a sentinel), the workspace NaN. */
static void larfb_case(Geqr2 ref_geqr2, Larft ref_larft, Larfb ref, Larfb own, int dbl, const char *side,
                       const char *trans, const char *direct, int m, int n, int k) {
  const size_t size = dbl ? 8 : 4;
  const int rows = side[0] == 'L' || side[0] == 'l' ? m : n; /* V's rows: the order of H */
  const int ldv = rows + 1, ldt = k + 1, ldc = m + 2, ldwork = (n > m ? n : m) + 3;
  void *v = malloc((size_t)ldv * k * size), *tau = malloc((size_t)k * size), *t = malloc((size_t)ldt * k * size);
  void *c_a = malloc((size_t)ldc * n * size), *c_b = malloc((size_t)ldc * n * size);
  void *w_a = malloc((size_t)ldwork * k * size), *w_b = malloc((size_t)ldwork * k * size);
  for (size_t i = 0; i < (size_t)ldv * k; ++i) set(v, i, uniform(), dbl);
  int info = 0;
  ref_geqr2(&rows, &k, v, &ldv, tau, w_a, &info);
  ref_larft("F", "C", &rows, &k, v, &ldv, tau, t, &ldt, 1, 1);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ldc; ++i) set(c_a, (size_t)i + (size_t)j * ldc, i >= m ? ldexp(1.0, 100) : uniform(), dbl);
  memcpy(c_b, c_a, (size_t)ldc * n * size);
  for (size_t i = 0; i < (size_t)ldwork * k; ++i) set(w_a, i, NAN, dbl), set(w_b, i, NAN, dbl);
  ref(side, trans, direct, "C", &m, &n, &k, v, &ldv, t, &ldt, c_a, &ldc, w_a, &ldwork, 1, 1, 1, 1);
  own(side, trans, direct, "C", &m, &n, &k, v, &ldv, t, &ldt, c_b, &ldc, w_b, &ldwork, 1, 1, 1, 1);
  if (memcmp(c_a, c_b, (size_t)ldc * n * size) != 0) {
    printf("%clarfb %s%s%s %d x %d, %d reflectors: not the reference's bits\n", dbl ? 'd' : 's', side, trans, direct, m,
           n, k);
    failed = 1;
  }
  free(v), free(tau), free(t), free(c_a), free(c_b), free(w_a), free(w_b);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: lapack_qr REFERENCE_LAPACK FASTGEMM_LAPACK\n");
    return 2;
  }
  void *reference = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL), *own = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (reference == NULL || own == NULL) {
    printf("cannot open %s or %s: %s\n", argv[1], argv[2], dlerror());
    return 2;
  }
  for (int dbl = 0; dbl < 2; ++dbl) {
    Geqr2 ref_geqr2 = (Geqr2)dlsym(reference, dbl ? "dgeqr2_" : "sgeqr2_");
    Geqr2 own_geqr2 = (Geqr2)dlsym(own, dbl ? "dgeqr2_" : "sgeqr2_");
    Larft ref_larft = (Larft)dlsym(reference, dbl ? "dlarft_" : "slarft_");
    Larft own_larft = (Larft)dlsym(own, dbl ? "dlarft_" : "slarft_");
    Larfb ref_larfb = (Larfb)dlsym(reference, dbl ? "dlarfb_" : "slarfb_");
    Larfb own_larfb = (Larfb)dlsym(own, dbl ? "dlarfb_" : "slarfb_");
    if (ref_geqr2 == NULL || own_geqr2 == NULL || ref_larft == NULL || own_larft == NULL || ref_larfb == NULL ||
        own_larfb == NULL) {
      printf("?geqr2_, ?larft_ or ?larfb_ missing\n");
      return 2;
    }
    /* m, n, lda, upper triangular columns, taken */
    static const int cases[][5] = {{300, 128, 300, 0, 1},   {1000, 257, 1003, 0, 1}, {129, 129, 131, 0, 1},
                                   {2000, 300, 2000, 0, 1}, {700, 200, 701, 40, 1},  {150, 150, 150, 150, 1},
                                   {100, 40, 100, 0, 0},    {300, 127, 300, 0, 0},   {100, 200, 100, 0, 0},
                                   {0, 0, 1, 0, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
      geqr2_case(ref_geqr2, own_geqr2, dbl, cases[c][0], cases[c][1], cases[c][2], cases[c][3], cases[c][4]);
    static const int none[] = {-1}, some[] = {0, 5, 31, 32, 200, 299, -1};
    larft_case(ref_geqr2, ref_larft, own_larft, dbl, "F", "C", 500, 128, none, 1);
    larft_case(ref_geqr2, ref_larft, own_larft, dbl, "F", "C", 1000, 300, some, 1);
    larft_case(ref_geqr2, ref_larft, own_larft, dbl, "f", "c", 300, 300, some, 1);
    larft_case(ref_geqr2, ref_larft, own_larft, dbl, "F", "C", 500, 127, none, 0);
    larft_case(ref_geqr2, ref_larft, own_larft, dbl, "B", "C", 400, 200, none, 0);
    larft_case(ref_geqr2, ref_larft, own_larft, dbl, "F", "R", 400, 200, none, 0);
    larfb_case(ref_geqr2, ref_larft, ref_larfb, own_larfb, dbl, "L", "T", "F", 500, 300, 128);
    larfb_case(ref_geqr2, ref_larft, ref_larfb, own_larfb, dbl, "L", "T", "F", 200, 8200, 128);
    larfb_case(ref_geqr2, ref_larft, ref_larfb, own_larfb, dbl, "L", "N", "F", 2000, 70, 33);
    larfb_case(ref_geqr2, ref_larft, ref_larfb, own_larfb, dbl, "L", "N", "F", 1000, 257, 200);
    larfb_case(ref_geqr2, ref_larft, ref_larfb, own_larfb, dbl, "l", "c", "f", 130, 1, 130);
    larfb_case(ref_geqr2, ref_larft, ref_larfb, own_larfb, dbl, "L", "T", "F", 500, 300, 127);
    larfb_case(ref_geqr2, ref_larft, ref_larfb, own_larfb, dbl, "R", "N", "F", 300, 500, 200);
    larfb_case(ref_geqr2, ref_larft, ref_larfb, own_larfb, dbl, "L", "T", "F", 500, 0, 200);
  }
  if (!failed) printf("ok\n");
  return failed;
}
