/* SPDX-License-Identifier: Apache-2.0 */
/* A BLAS user's program with several threads: each calls sgemm_, dgemm_, ssyrk_, dsyrk_, strsm_, dtrsm_, dsymm_ and
   strmm_ in turn, at the same time as the others, on operands of its own (orders 65 to 200, leading dimensions
   past them), and checks every element against its own sums in long double, relative to the sum of the terms'
   magnitudes (trsm: the residual A X - alpha B). It knows nothing of fastgemm; the tests run it with
   libfastgemm_blas.so preloaded, on the CPU and with every call on the GPU. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

void sgemm_(const char *, const char *, const int *, const int *, const int *, const float *, const float *,
            const int *, const float *, const int *, const float *, float *, const int *);
void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *, const double *,
            const int *, const double *, const int *, const double *, double *, const int *);
void ssyrk_(const char *, const char *, const int *, const int *, const float *, const float *, const int *,
            const float *, float *, const int *);
void dsyrk_(const char *, const char *, const int *, const int *, const double *, const double *, const int *,
            const double *, double *, const int *);
void dsymm_(const char *, const char *, const int *, const int *, const double *, const double *, const int *,
            const double *, const int *, const double *, double *, const int *);
void strmm_(const char *, const char *, const char *, const char *, const int *, const int *, const float *,
            const float *, const int *, float *, const int *);
void strsm_(const char *, const char *, const char *, const char *, const int *, const int *, const float *,
            const float *, const int *, float *, const int *);
void dtrsm_(const char *, const char *, const char *, const char *, const int *, const int *, const double *,
            const double *, const int *, double *, const int *);

enum { THREADS = 4, ROUNDS = 8, ROUTINES = 8 };
static const char *const kNames[ROUTINES] = {"sgemm", "dgemm", "ssyrk", "dsyrk", "strsm", "dtrsm", "dsymm", "strmm"};

typedef struct {
  int index, checked, failed;
  double worst[2]; /* single, double */
} Worker;

static double uniform(unsigned long long *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*state >> 11) / 4503599627370496.0 - 1.0;
}

/* One call of routine r of order n (k = n where it has one), its operands A, B (and C) made here; returns the worst
   relative error of its output, or infinity where the output is not finite. Operands are held as double and, in
   single precision, rounded to float first, so that the reference sums what the routine was given. */
static double one_call(int r, int n, unsigned long long *seed) {
  const int single = kNames[r][0] == 's', ld = n + 3;
  const size_t count = (size_t)ld * (size_t)n;
  double *a = malloc(count * sizeof(double)), *b = malloc(count * sizeof(double)), *c = malloc(count * sizeof(double));
  float *af = malloc(count * sizeof(float)), *bf = malloc(count * sizeof(float)), *cf = malloc(count * sizeof(float));
  if (!a || !b || !c || !af || !bf || !cf) return INFINITY;
  for (size_t i = 0; i < count; ++i) {
    a[i] = uniform(seed), b[i] = uniform(seed), c[i] = uniform(seed);
    if (single) a[i] = (float)a[i], b[i] = (float)b[i], c[i] = (float)c[i];
  }
  if (r == 4 || r == 5) /* trsm: a well-conditioned lower triangle */
    for (int i = 0; i < n; ++i) a[i + (size_t)i * ld] = n + fabs(a[i + (size_t)i * ld]);
  for (size_t i = 0; i < count; ++i) af[i] = (float)a[i], bf[i] = (float)b[i], cf[i] = (float)c[i];
  const double alpha = 0.75, beta = r == 2 || r == 3 ? 0.5 : 0.0;
  const float alphaf = (float)alpha, betaf = (float)beta;
  /* The output of the double-precision routines: a copy of C, or of B for trsm, which they overwrite; a, b and c
     keep the inputs for the reference. */
  const int in_b = r == 4 || r == 5 || r == 7;
  double *result = malloc(count * sizeof(double));
  if (result == NULL) return INFINITY;
  for (size_t i = 0; i < count; ++i) result[i] = in_b ? b[i] : c[i];
  switch (r) {
    case 0: sgemm_("N", "T", &n, &n, &n, &alphaf, af, &ld, bf, &ld, &betaf, cf, &ld); break;
    case 1: dgemm_("N", "T", &n, &n, &n, &alpha, a, &ld, b, &ld, &beta, result, &ld); break;
    case 2: ssyrk_("L", "N", &n, &n, &alphaf, af, &ld, &betaf, cf, &ld); break;
    case 3: dsyrk_("L", "N", &n, &n, &alpha, a, &ld, &beta, result, &ld); break;
    case 4: strsm_("L", "L", "N", "N", &n, &n, &alphaf, af, &ld, bf, &ld); break;
    case 5: dtrsm_("L", "L", "N", "N", &n, &n, &alpha, a, &ld, result, &ld); break;
    case 6: dsymm_("L", "L", &n, &n, &alpha, a, &ld, b, &ld, &beta, result, &ld); break;
    default: strmm_("L", "L", "N", "N", &n, &n, &alphaf, af, &ld, bf, &ld); break;
  }
  if (single)
    for (size_t i = 0; i < count; ++i) result[i] = in_b ? bf[i] : cf[i];
  double worst = 0.0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      if ((r == 2 || r == 3) && i < j) continue; /* syrk writes the lower triangle */
      long double sum = 0.0L, scale = 0.0L;
      for (int l = 0; l < n; ++l) {
        long double term;
        const double lower = l <= i ? a[i + (size_t)l * ld] : 0.0; /* the lower triangle's (i, l) */
        switch (r) {
          case 0:
          case 1: term = (long double)a[i + (size_t)l * ld] * b[j + (size_t)l * ld]; break;
          case 2:
          case 3: term = (long double)a[i + (size_t)l * ld] * a[j + (size_t)l * ld]; break;
          case 4:
          case 5: term = (long double)lower * result[l + (size_t)j * ld]; break; /* (A X)(i, j) */
          case 6:
            term = (long double)(l <= i ? a[i + (size_t)l * ld] : a[l + (size_t)i * ld]) * b[l + (size_t)j * ld];
            break;
          default: term = (long double)lower * b[l + (size_t)j * ld]; break;
        }
        sum += term;
        scale += fabsl(term);
      }
      double error;
      const double got = result[i + (size_t)j * ld];
      if (r == 4 || r == 5) { /* A X against alpha B */
        const long double want = (long double)alpha * b[i + (size_t)j * ld];
        error = (double)(fabsl(sum - want) / (scale + fabsl(want)));
      } else {
        const long double want = (long double)alpha * sum + (long double)beta * c[i + (size_t)j * ld];
        const long double size = fabsl((long double)alpha) * scale + fabsl((long double)beta * c[i + (size_t)j * ld]);
        error = isfinite(got) ? (double)(fabsl((long double)got - want) / (size > 0 ? size : 1.0L)) : INFINITY;
      }
      if (!(error <= worst)) worst = error;
    }
  free(a), free(b), free(c), free(af), free(bf), free(cf), free(result);
  return worst;
}

static void *work(void *argument) {
  Worker *w = argument;
  unsigned long long seed = 1000003ull * (unsigned long long)(w->index + 1);
  for (int round = 0; round < ROUNDS; ++round) {
    const int r = (w->index + round) % ROUTINES, single = kNames[r][0] == 's';
    const int n = 65 + (int)((uniform(&seed) + 1.0) * 67.0);
    const double error = one_call(r, n, &seed), tolerance = single ? 1e-5 : 1e-13;
    ++w->checked;
    if (error > w->worst[!single]) w->worst[!single] = error;
    if (!(error <= tolerance)) {
      ++w->failed;
      printf("FAILED: thread %d %s_ n=%d: error %.3g\n", w->index, kNames[r], n, error);
    }
  }
  return NULL;
}

int main(void) {
  pthread_t threads[THREADS];
  Worker workers[THREADS] = {{0}};
  for (int t = 0; t < THREADS; ++t) {
    workers[t].index = t;
    if (pthread_create(&threads[t], NULL, work, &workers[t]) != 0) {
      printf("threads: could not start thread %d\n", t);
      return 1;
    }
  }
  int checked = 0, failed = 0;
  double worst[2] = {0.0, 0.0};
  for (int t = 0; t < THREADS; ++t) {
    pthread_join(threads[t], NULL);
    checked += workers[t].checked, failed += workers[t].failed;
    for (int p = 0; p < 2; ++p)
      if (workers[t].worst[p] > worst[p]) worst[p] = workers[t].worst[p];
  }
  printf("threads: %d calls checked on %d threads, %d failed; worst error %.3g in single precision, %.3g in double\n",
         checked, THREADS, failed, worst[0], worst[1]);
  return failed == 0 ? 0 : 1;
}
