/* SPDX-License-Identifier: Apache-2.0 */
/* Times LAPACK drivers (?potrf_, ?getrf_, ?geqrf_, ?syevd_, s and d) on pageable host arrays through whatever LAPACK
   and BLAS the process has, so that one unchanged program compares the reference LAPACK over a preloaded drop-in
   BLAS (libfastgemm_blas.so, NVBLAS) with an optimized LAPACK (OpenBLAS's own, chosen by LD_LIBRARY_PATH). Square
   operands of order n, column-major, lda n, uniform in (-1, 1) and rounded to the routine's precision: potrf factors
   the lower triangle of a symmetric matrix with a diagonal of n + |x|, getrf and geqrf a general one, syevd finds all
   eigenvalues and vectors (jobz V, uplo L) of a symmetric one. Workspaces are queried (lwork -1) and allocated
   outside the timing, and A is restored from its copy before each call, outside it too. The best of
   LAPACK_TIMING_REPEATS calls (default 1) after one untimed call of order min(n, 2048), which lets a preloaded GPU
   library make its context before the timing. The checks, in long double, relative, each under 64 eps sqrt(n) (eps
   2^-23 or 2^-52), the worst printed: potrf (L L^T)(i, j) against A(i, j) and getrf (L U)(i, j) against the row of
   A that the pivots brought to i (pivots out of range fail), over the sums of the terms' magnitudes, at CHECKED
   elements; geqrf (R^T R)(i, j) against (A^T A)(i, j) (Q is orthogonal) over |A_i| |A_j| at CHECKED elements; syevd the
   sum of the eigenvalues against A's trace (over the sum of their magnitudes), the sum of their squares against
   |A|_F^2, and |A v - lambda v|_inf / (|A|_F |v|_inf) for PAIRS eigenpairs from the smallest to the largest. GFLOPS
   with LAWN 41's leading terms: potrf n^3/3, getrf 2n^3/3, geqrf 4n^3/3; syevd the conventional 10n^3/3 (the reduction
   to tridiagonal form, 4n^3/3, and the back-transformation of the vectors, 2n^3, leaving out the divide and conquer's
   own work, which deflation makes vary): a rate to compare libraries by, not a count of operations. With the usual
   32-bit LAPACK integers syevd's workspace (1 + 6n + 2n^2) limits it to n <= 32766.

   cc -O2 -std=c99 lapack_timing.c -o lapack_timing -llapack -lblas -lm
   LD_PRELOAD=/opt/fastgemm/lib/libfastgemm_blas.so ./lapack_timing 16384 dpotrf dgetrf
   LD_PRELOAD=libnvblas.so NVBLAS_CONFIG_FILE=nvblas.conf ./lapack_timing 16384 dpotrf dgetrf
   LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread LAPACK_TIMING_REPEATS=3 ./lapack_timing 8192 all */
#define _POSIX_C_SOURCE 199309L
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FORTRAN_POTRF(T, name) void name(const char *, const int *, T *, const int *, int *);
#define FORTRAN_GETRF(T, name) void name(const int *, const int *, T *, const int *, int *, int *);
#define FORTRAN_GEQRF(T, name) void name(const int *, const int *, T *, const int *, T *, T *, const int *, int *);
#define FORTRAN_SYEVD(T, name)                                                                                    \
  void name(const char *, const char *, const int *, T *, const int *, T *, T *, const int *, int *, const int *, \
            int *);
FORTRAN_POTRF(float, spotrf_)
FORTRAN_POTRF(double, dpotrf_)
FORTRAN_GETRF(float, sgetrf_)
FORTRAN_GETRF(double, dgetrf_)
FORTRAN_GEQRF(float, sgeqrf_)
FORTRAN_GEQRF(double, dgeqrf_)
FORTRAN_SYEVD(float, ssyevd_)
FORTRAN_SYEVD(double, dsyevd_)

enum { CHECKED = 48, PAIRS = 8, WARM_UP_ORDER = 2048 };
static const char *const kRoutines[] = {"potrf", "getrf", "geqrf", "syevd"};
enum { kRoutineCount = 4 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The operand as doubles (each float input is exactly its double), whichever precision runs. */
typedef struct {
  int n, dbl, routine, lwork, liwork;
  double *a;         /* column-major n x n */
  void *x;           /* A in the routine's precision, overwritten by its result */
  void *vector;      /* geqrf's tau, syevd's eigenvalues: n of the routine's precision */
  void *work;        /* geqrf's and syevd's workspace */
  int *ipiv, *iwork; /* getrf's pivots, syevd's integer workspace */
} Case;

static long double in(const Case *t, const void *array, size_t i) {
  return t->dbl ? ((const double *)array)[i] : (long double)((const float *)array)[i];
}

static double rounded(int dbl, double value) { return dbl ? value : (double)(float)value; }

/* The routine's info; lwork = -1 makes it a workspace query. */
static int call(Case *t) {
  const int n = t->n;
  int info = 0;
  if (t->dbl) {
    double *A = t->x, *v = t->vector, *work = t->work;
    switch (t->routine) {
      case 0: dpotrf_("L", &n, A, &n, &info); break;
      case 1: dgetrf_(&n, &n, A, &n, t->ipiv, &info); break;
      case 2: dgeqrf_(&n, &n, A, &n, v, work, &t->lwork, &info); break;
      default: dsyevd_("V", "L", &n, A, &n, v, work, &t->lwork, t->iwork, &t->liwork, &info); break;
    }
  } else {
    float *A = t->x, *v = t->vector, *work = t->work;
    switch (t->routine) {
      case 0: spotrf_("L", &n, A, &n, &info); break;
      case 1: sgetrf_(&n, &n, A, &n, t->ipiv, &info); break;
      case 2: sgeqrf_(&n, &n, A, &n, v, work, &t->lwork, &info); break;
      default: ssyevd_("V", "L", &n, A, &n, v, work, &t->lwork, t->iwork, &t->liwork, &info); break;
    }
  }
  return info;
}

static void copy_in(const Case *t) {
  const size_t count = (size_t)t->n * (size_t)t->n;
  for (size_t i = 0; i < count; ++i)
    if (t->dbl)
      ((double *)t->x)[i] = t->a[i];
    else
      ((float *)t->x)[i] = (float)t->a[i];
}

static void release(Case *t) { free(t->a), free(t->x), free(t->vector), free(t->work), free(t->ipiv), free(t->iwork); }

/* Makes the operand and the workspaces: 0, or 2 (the message on stderr) where memory or an int cannot hold them. */
static int prepare(Case *t, int n, int dbl, int routine) {
  const size_t count = (size_t)n * (size_t)n, size = dbl ? sizeof(double) : sizeof(float);
  const Case empty = {n, dbl, routine, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL};
  *t = empty;
  t->a = malloc(count * sizeof(double));
  t->x = malloc(count * size);
  t->vector = malloc((size_t)n * size);
  t->ipiv = malloc((size_t)n * sizeof(int));
  if (t->a == NULL || t->x == NULL || t->vector == NULL || t->ipiv == NULL) {
    fprintf(stderr, "lapack_timing: no memory for n = %d\n", n);
    return 2;
  }
  /* The top 32 bits of a 64-bit linear congruential generator, rounded to the routine's precision. Its period, 2^64,
     is far beyond any matrix: a generator whose bits repeat every 2^24 draws (the middle bits of a 32-bit one) makes
     column j + 2^23 / n equal to column j, a singular matrix from order 4096 on. */
  unsigned long long state = 12345u;
  for (size_t i = 0; i < count; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    t->a[i] = rounded(dbl, (double)(unsigned)(state >> 32) / 2147483648.0 - 1.0);
  }
  if (routine == 0 || routine == 3) /* symmetric: the upper triangle mirrors the lower */
    for (size_t j = 0; j < (size_t)n; ++j)
      for (size_t i = j + 1; i < (size_t)n; ++i) t->a[i * n + j] = t->a[j * n + i];
  if (routine == 0)
    for (size_t i = 0; i < (size_t)n; ++i) t->a[i * n + i] = rounded(dbl, n + fabs(t->a[i * n + i]));
  if (routine >= 2) { /* the workspace query, into locals */
    double dwork = 0.0;
    float swork = 0.0f;
    int iwork = 0;
    t->lwork = t->liwork = -1;
    t->work = dbl ? (void *)&dwork : (void *)&swork;
    t->iwork = &iwork;
    const int info = call(t);
    t->work = NULL, t->iwork = NULL;
    double lwork = dbl ? dwork : swork, liwork = iwork;
    if (routine == 3) { /* a float may hold the size rounded down: at least the documented minimum */
      lwork = fmax(lwork, 1.0 + 6.0 * n + 2.0 * (double)n * n);
      liwork = fmax(liwork, 3.0 + 5.0 * n);
    }
    if (info != 0 || lwork > INT_MAX || liwork > INT_MAX) {
      fprintf(stderr, "lapack_timing: no %c%s workspace for n = %d (info %d, lwork %.0f)\n", dbl ? 'd' : 's',
              kRoutines[routine], n, info, lwork);
      return 2;
    }
    t->lwork = lwork < 1.0 ? 1 : (int)lwork;
    t->liwork = liwork < 1.0 ? 1 : (int)liwork;
    t->work = malloc((size_t)t->lwork * size);
    t->iwork = malloc((size_t)t->liwork * sizeof(int));
    if (t->work == NULL || t->iwork == NULL) {
      fprintf(stderr, "lapack_timing: no memory for the workspace of n = %d\n", n);
      return 2;
    }
  }
  return 0;
}

/* The error of element (i, j) of L L^T (potrf, i >= j) or L U (getrf) relative to the sum of its terms' magnitudes,
   against A's element: getrf's row i is A's row that its interchanges brought there, found by undoing them. */
static double element_error(const Case *t, size_t i, size_t j) {
  const size_t n = (size_t)t->n;
  long double sum = 0.0L, scale = 0.0L;
  size_t row = i;
  if (t->routine == 0) {
    for (size_t k = 0; k <= j; ++k) {
      const long double term = in(t, t->x, k * n + i) * in(t, t->x, k * n + j);
      sum += term, scale += fabsl(term);
    }
  } else {
    for (size_t k = 0; k <= i && k <= j; ++k) {
      const long double term = (k == i ? 1.0L : in(t, t->x, k * n + i)) * in(t, t->x, j * n + k);
      sum += term, scale += fabsl(term);
    }
    for (size_t k = n; k-- > 0;) { /* the interchanges, last first: row k and row ipiv(k) */
      const size_t other = (size_t)t->ipiv[k] - 1;
      if (row == k)
        row = other;
      else if (row == other)
        row = k;
    }
  }
  const long double want = t->a[j * n + row];
  return (double)(fabsl(sum - want) / (scale == 0.0L ? 1.0L : scale));
}

/* getrf: every pivot a row at or below its own (1-based), as LAPACK defines them. */
static int pivots_valid(const Case *t) {
  for (int k = 0; k < t->n; ++k)
    if (t->ipiv[k] < k + 1 || t->ipiv[k] > t->n) return 0;
  return 1;
}

/* syevd: the sums of the eigenvalues and of their squares, and PAIRS residuals (A is symmetric: row i is column i). */
static double eigen_error(const Case *t) {
  const size_t n = (size_t)t->n;
  long double trace = 0.0L, frobenius = 0.0L, sum = 0.0L, squares = 0.0L, magnitudes = 0.0L;
  for (size_t i = 0; i < n * n; ++i) frobenius += (long double)t->a[i] * t->a[i];
  for (size_t i = 0; i < n; ++i) {
    const long double lambda = in(t, t->vector, i);
    trace += t->a[i * n + i];
    sum += lambda, squares += lambda * lambda, magnitudes += fabsl(lambda);
  }
  double worst = (double)(fabsl(sum - trace) / magnitudes);
  const double squares_error = (double)(fabsl(squares - frobenius) / frobenius);
  if (!(squares_error <= worst)) worst = squares_error;
  for (size_t pair = 0; pair < PAIRS; ++pair) {
    const size_t k = pair * (n - 1) / (PAIRS - 1);
    const long double lambda = in(t, t->vector, k);
    long double residual = 0.0L, largest = 0.0L;
    for (size_t i = 0; i < n; ++i) {
      long double r = -lambda * in(t, t->x, k * n + i);
      for (size_t l = 0; l < n; ++l) r += (long double)t->a[i * n + l] * in(t, t->x, k * n + l);
      residual = fmaxl(residual, fabsl(r));
      largest = fmaxl(largest, fabsl(in(t, t->x, k * n + i)));
    }
    const double error = (double)(residual / (sqrtl(frobenius) * largest));
    if (!(error <= worst)) worst = error;
  }
  return worst;
}

static double check(const Case *t) {
  const size_t n = (size_t)t->n;
  if (t->routine == 3) return eigen_error(t);
  double worst = 0.0;
  for (int probe = 0; probe < CHECKED; ++probe) {
    size_t i = ((size_t)probe * 7919u) % n, j = ((size_t)probe * 104729u) % n;
    double error;
    if (t->routine == 2) { /* geqrf: Q is orthogonal, so R^T R = A^T A; (i, j) over |A_i| |A_j| */
      long double r = 0.0L, a = 0.0L, a_i = 0.0L, a_j = 0.0L;
      for (size_t l = 0; l <= i && l <= j; ++l) r += in(t, t->x, i * n + l) * in(t, t->x, j * n + l);
      for (size_t l = 0; l < n; ++l) {
        a += (long double)t->a[i * n + l] * t->a[j * n + l];
        a_i += (long double)t->a[i * n + l] * t->a[i * n + l];
        a_j += (long double)t->a[j * n + l] * t->a[j * n + l];
      }
      error = (double)(fabsl(r - a) / sqrtl(a_i * a_j));
    } else if (t->routine == 1 && !pivots_valid(t)) {
      error = INFINITY;
    } else {
      if (t->routine == 0 && i < j) { /* potrf: the lower triangle is the result */
        const size_t swap = i;
        i = j;
        j = swap;
      }
      error = element_error(t, i, j);
    }
    if (!(error <= worst)) worst = error;
  }
  return worst;
}

/* LAWN 41's leading terms; syevd's as the header says. */
static double flops(int routine, double n) {
  switch (routine) {
    case 0: return n * n * n / 3.0;
    case 1: return 2.0 * n * n * n / 3.0;
    case 2: return 4.0 * n * n * n / 3.0;
    default: return 10.0 * n * n * n / 3.0;
  }
}

static int run(int n, int dbl, int routine, int repeats) {
  const char precision = dbl ? 'd' : 's';
  const int order = n < WARM_UP_ORDER ? n : WARM_UP_ORDER;
  Case t;
  int status = prepare(&t, order, dbl, routine), info = 0;
  if (status == 0) {
    copy_in(&t);
    info = call(&t);
  }
  release(&t);
  if (status != 0) return status;
  if (info != 0) {
    printf("%c%s n = %d: info %d in the warm-up of order %d (FAILED)\n", precision, kRoutines[routine], n, info, order);
    fflush(stdout);
    return 1;
  }
  status = prepare(&t, n, dbl, routine);
  if (status != 0) {
    release(&t);
    return status;
  }
  double best = INFINITY;
  for (int repeat = 0; repeat < repeats && info == 0; ++repeat) {
    copy_in(&t);
    const double start = now();
    info = call(&t);
    const double seconds = now() - start;
    if (seconds < best) best = seconds;
  }
  if (info != 0) {
    printf("%c%s n = %d: info %d (FAILED)\n", precision, kRoutines[routine], n, info);
    fflush(stdout);
    release(&t);
    return 1;
  }
  const double error = check(&t), tolerance = 64.0 * (dbl ? DBL_EPSILON : FLT_EPSILON) * sqrt((double)n);
  const int ok = error < tolerance;
  printf("%c%s n = %d: %.3f s, ", precision, kRoutines[routine], n, best);
  printf("%.1f GFLOPS, check %.1e (%s)\n", flops(routine, n) / best * 1e-9, error, ok ? "ok" : "FAILED");
  fflush(stdout);
  release(&t);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: lapack_timing N ROUTINE... (spotrf, dgetrf, sgeqrf, dsyevd, ..., or all)\n");
    return 2;
  }
  const int n = atoi(argv[1]);
  if (n <= 0) {
    fprintf(stderr, "lapack_timing: bad order %s\n", argv[1]);
    return 2;
  }
  const char *repeats_text = getenv("LAPACK_TIMING_REPEATS");
  const int repeats = repeats_text != NULL ? atoi(repeats_text) : 1;
  if (repeats <= 0) {
    fprintf(stderr, "lapack_timing: bad LAPACK_TIMING_REPEATS %s\n", repeats_text);
    return 2;
  }
  int status = 0;
  for (int argument = 2; argument < argc; ++argument) {
    const char *name = argv[argument];
    const int all = strcmp(name, "all") == 0;
    int found = all;
    for (int dbl = 0; dbl <= 1; ++dbl)
      for (int routine = 0; routine < kRoutineCount; ++routine) {
        const int named = (name[0] == (dbl ? 'd' : 's')) && strcmp(name + 1, kRoutines[routine]) == 0;
        if (!all && !named) continue;
        found = 1;
        const int result = run(n, dbl, routine, repeats);
        if (result > status) status = result;
      }
    if (!found) {
      fprintf(stderr, "lapack_timing: no routine %s\n", name);
      status = 2;
    }
  }
  return status;
}
