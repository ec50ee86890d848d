/* SPDX-License-Identifier: Apache-2.0 */
/* Times the Level 3 routines (?gemm_, ?symm_, ?syrk_, ?syr2k_, ?trmm_, ?trsm_, s and d) on pageable host arrays
   through whatever BLAS the process has: the system BLAS, or one preloaded before it (libfastgemm_blas.so, NVBLAS),
   so that drop-in libraries are compared on the same unchanged program. Square operands of order n, column-major,
   no transposes, side L, lower triangle, non-unit diagonal, alpha 1 (beta 0 where there is one); inputs uniform in
   (-1, 1), the triangular matrix of trsm made well conditioned (a diagonal of n + |x|). The best of REPEATS calls
   after one warm-up (trmm and trsm overwrite B: it is restored before each call, outside the timing), and a check
   of CHECKED elements of the result against sums in long double over the same inputs, relative to the sum of the
   terms' magnitudes (trsm: the residual of its first column). The flop counts are the reference's.

   cc -O2 level3_timing.c -o level3_timing -lblas -lm
   LD_PRELOAD=/opt/fastgemm/lib/libfastgemm_blas.so ./level3_timing 8192 dgemm dsyrk strsm
   ./level3_timing 4096 all                                                                               */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FORTRAN_GEMM(T, name)                                                                                     \
  void name(const char *, const char *, const int *, const int *, const int *, const T *, const T *, const int *, \
            const T *, const int *, const T *, T *, const int *);
#define FORTRAN_SYMM(T, name)                                                                                   \
  void name(const char *, const char *, const int *, const int *, const T *, const T *, const int *, const T *, \
            const int *, const T *, T *, const int *);
#define FORTRAN_SYRK(T, name)                                                                                        \
  void name(const char *, const char *, const int *, const int *, const T *, const T *, const int *, const T *, T *, \
            const int *);
#define FORTRAN_SYR2K(T, name)                                                                                  \
  void name(const char *, const char *, const int *, const int *, const T *, const T *, const int *, const T *, \
            const int *, const T *, T *, const int *);
#define FORTRAN_TRIANGULAR(T, name)                                                                                 \
  void name(const char *, const char *, const char *, const char *, const int *, const int *, const T *, const T *, \
            const int *, T *, const int *);
FORTRAN_GEMM(float, sgemm_)
FORTRAN_GEMM(double, dgemm_)
FORTRAN_SYMM(float, ssymm_)
FORTRAN_SYMM(double, dsymm_)
FORTRAN_SYRK(float, ssyrk_)
FORTRAN_SYRK(double, dsyrk_)
FORTRAN_SYR2K(float, ssyr2k_)
FORTRAN_SYR2K(double, dsyr2k_)
FORTRAN_TRIANGULAR(float, strmm_)
FORTRAN_TRIANGULAR(double, dtrmm_)
FORTRAN_TRIANGULAR(float, strsm_)
FORTRAN_TRIANGULAR(double, dtrsm_)

enum { REPEATS = 3, CHECKED = 48 };
static const char *const kRoutines[] = {"gemm", "symm", "syrk", "syr2k", "trmm", "trsm"};
enum { kRoutineCount = 6 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The operands as doubles (each float input is exactly its double), whichever precision runs. */
typedef struct {
  int n, dbl, routine;
  double *a, *b, *c; /* column-major n x n */
  void *x, *y, *z;   /* the routine's A, B, C in its precision */
} Case;

static double in(const Case *t, const void *array, size_t i) {
  return t->dbl ? ((const double *)array)[i] : (double)((const float *)array)[i];
}

/* A's element (i, l) as the routine reads it: symm and trmm/trsm the lower triangle (trsm's diagonal as made). */
static long double a_at(const Case *t, size_t i, size_t l) {
  const size_t n = (size_t)t->n;
  switch (t->routine) {
    case 1: return i >= l ? t->a[l * n + i] : t->a[i * n + l];
    case 4:
    case 5: return i >= l ? t->a[l * n + i] : 0.0L;
    default: return t->a[l * n + i];
  }
}

/* The error of element (i, j) of the result relative to the sum of its terms' magnitudes. */
static double element_error(const Case *t, size_t i, size_t j) {
  const size_t n = (size_t)t->n;
  long double sum = 0.0L, scale = 0.0L;
  if (t->routine == 5) { /* trsm: residual of row i of A X = B for X's column j */
    for (size_t l = 0; l <= i; ++l) {
      const long double term = a_at(t, i, l) * (long double)in(t, t->y, j * n + l);
      sum += term;
      scale += fabsl(term);
    }
    return (double)(fabsl(sum - (long double)t->b[j * n + i]) / (scale + fabsl((long double)t->b[j * n + i])));
  }
  for (size_t l = 0; l < n; ++l) {
    long double term;
    if (t->routine == 2) /* syrk: A A^T */
      term = (long double)t->a[l * n + i] * t->a[l * n + j];
    else if (t->routine == 3) /* syr2k: A B^T + B A^T */
      term = (long double)t->a[l * n + i] * t->b[l * n + j] + (long double)t->b[l * n + i] * t->a[l * n + j];
    else
      term = a_at(t, i, l) * (long double)t->b[j * n + l];
    sum += term;
    scale += fabsl(term);
  }
  const double got = in(t, t->routine >= 4 ? t->y : t->z, j * n + i);
  return scale == 0.0L ? fabs(got) : (double)(fabsl((long double)got - sum) / scale);
}

static void call(const Case *t) {
  const int n = t->n;
  const char *N = "N", *L = "L", *Lo = "L";
  if (t->dbl) {
    const double one = 1.0, zero = 0.0;
    const double *A = t->x, *B = t->y;
    double *C = t->z, *Bw = t->y;
    switch (t->routine) {
      case 0: dgemm_(N, N, &n, &n, &n, &one, A, &n, B, &n, &zero, C, &n); break;
      case 1: dsymm_(L, Lo, &n, &n, &one, A, &n, B, &n, &zero, C, &n); break;
      case 2: dsyrk_(Lo, N, &n, &n, &one, A, &n, &zero, C, &n); break;
      case 3: dsyr2k_(Lo, N, &n, &n, &one, A, &n, B, &n, &zero, C, &n); break;
      case 4: dtrmm_(L, Lo, N, N, &n, &n, &one, A, &n, Bw, &n); break;
      default: dtrsm_(L, Lo, N, N, &n, &n, &one, A, &n, Bw, &n); break;
    }
  } else {
    const float one = 1.0f, zero = 0.0f;
    const float *A = t->x, *B = t->y;
    float *C = t->z, *Bw = t->y;
    switch (t->routine) {
      case 0: sgemm_(N, N, &n, &n, &n, &one, A, &n, B, &n, &zero, C, &n); break;
      case 1: ssymm_(L, Lo, &n, &n, &one, A, &n, B, &n, &zero, C, &n); break;
      case 2: ssyrk_(Lo, N, &n, &n, &one, A, &n, &zero, C, &n); break;
      case 3: ssyr2k_(Lo, N, &n, &n, &one, A, &n, B, &n, &zero, C, &n); break;
      case 4: strmm_(L, Lo, N, N, &n, &n, &one, A, &n, Bw, &n); break;
      default: strsm_(L, Lo, N, N, &n, &n, &one, A, &n, Bw, &n); break;
    }
  }
}

static void copy_in(const Case *t, void *to, const double *from, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (t->dbl)
      ((double *)to)[i] = from[i];
    else
      ((float *)to)[i] = (float)from[i];
}

/* The reference's flop count for order n (multiply-adds as two). */
static double flops(int routine, double n) {
  switch (routine) {
    case 0:
    case 1: return 2.0 * n * n * n;
    case 2: return n * n * (n + 1.0);
    case 3: return 2.0 * n * n * n;
    default: return n * n * n;
  }
}

static int run(int n, int dbl, int routine) {
  const size_t count = (size_t)n * (size_t)n, size = dbl ? sizeof(double) : sizeof(float);
  Case t = {n,
            dbl,
            routine,
            malloc(count * sizeof(double)),
            malloc(count * sizeof(double)),
            NULL,
            malloc(count * size),
            malloc(count * size),
            malloc(count * size)};
  if (t.a == NULL || t.b == NULL || t.x == NULL || t.y == NULL || t.z == NULL) {
    fprintf(stderr, "level3_timing: no memory for n = %d\n", n);
    return 2;
  }
  /* The top 32 bits of a 64-bit linear congruential generator (period 2^64), rounded to the routine's precision; the
     middle bits of a 32-bit one repeat every 2^24 draws, which from order 4096 on repeats the operands' columns. */
  unsigned long long state = 12345u;
  for (size_t i = 0; i < 2 * count; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double value = (double)(unsigned)(state >> 32) / 2147483648.0 - 1.0;
    (i < count ? t.a : t.b)[i % count] = dbl ? value : (double)(float)value;
  }
  if (routine == 5)
    for (size_t i = 0; i < (size_t)n; ++i) t.a[i * n + i] = n + fabs(t.a[i * n + i]);
  copy_in(&t, t.x, t.a, count);
  double best = INFINITY;
  for (int repeat = 0; repeat <= REPEATS; ++repeat) {
    if (routine >= 4)
      copy_in(&t, t.y, t.b, count);
    else if (repeat == 0)
      copy_in(&t, t.y, t.b, count);
    const double start = now();
    call(&t);
    const double seconds = now() - start;
    if (repeat > 0 && seconds < best) best = seconds;
  }
  double worst = 0.0;
  for (int probe = 0; probe < CHECKED; ++probe) {
    size_t i = ((size_t)probe * 7919u) % (size_t)n, j = ((size_t)probe * 104729u) % (size_t)n;
    if (routine == 2 || routine == 3) { /* the lower triangle is the result */
      if (i < j) {
        const size_t swap = i;
        i = j;
        j = swap;
      }
    }
    const double error = element_error(&t, i, j);
    if (!(error <= worst)) worst = error;
  }
  const double tolerance = dbl ? 1e-13 : 1e-5;
  printf("%c%-5s n = %5d: %9.3f ms, %7.2f TFLOPS, largest error %.2e%s\n", dbl ? 'd' : 's', kRoutines[routine], n,
         best * 1e3, flops(routine, n) / best * 1e-12, worst, worst < tolerance ? "" : "  (over the tolerance)");
  fflush(stdout);
  free(t.a), free(t.b), free(t.x), free(t.y), free(t.z);
  return worst < tolerance ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: level3_timing N ROUTINE... (sgemm, dtrsm, ..., or all)\n");
    return 2;
  }
  const int n = atoi(argv[1]);
  if (n <= 0) {
    fprintf(stderr, "level3_timing: bad order %s\n", argv[1]);
    return 2;
  }
  int status = 0;
  for (int argument = 2; argument < argc; ++argument) {
    const char *name = argv[argument];
    for (int dbl = 0; dbl <= 1; ++dbl)
      for (int routine = 0; routine < kRoutineCount; ++routine) {
        const int all = strcmp(name, "all") == 0;
        const int named = (name[0] == (dbl ? 'd' : 's')) && strcmp(name + 1, kRoutines[routine]) == 0;
        if (!all && !named) continue;
        const int result = run(n, dbl, routine);
        if (result > status) status = result;
      }
  }
  return status;
}
