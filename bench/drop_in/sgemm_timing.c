/* SPDX-License-Identifier: Apache-2.0 */
/* Times sgemm_ on pageable host arrays through whatever BLAS the process has: the system BLAS, or one
   preloaded before it (libfastgemm_blas.so, NVBLAS), so that drop-in libraries are compared on the same
   unchanged program. Square products, alpha 1, beta 0, inputs uniform in (-1, 1); the best of 3 calls (or of
   TIMING_REPEATS, 1 to 1000) after one warm-up, and a check of a few elements of C against a double dot product.

   cc -O2 sgemm_timing.c -o sgemm_timing -lblas
   LD_PRELOAD=/opt/fastgemm/lib/libfastgemm_blas.so ./sgemm_timing 4096 8192 16384
   NVBLAS_CONFIG_FILE=nvblas.conf LD_PRELOAD=libnvblas.so ./sgemm_timing 4096 8192 16384

   Built with -DDOUBLE_PRECISION it times dgemm_ the same way, on the same inputs:
   cc -O2 -DDOUBLE_PRECISION sgemm_timing.c -o dgemm_timing -lblas                                              */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef DOUBLE_PRECISION
typedef double real;
#define GEMM dgemm_
#define NAME "dgemm_timing"
#define TOLERANCE 1e-12
#else
typedef float real;
#define GEMM sgemm_
#define NAME "sgemm_timing"
#define TOLERANCE 1e-5
#endif

void GEMM(const char *transa, const char *transb, const int *m, const int *n, const int *k, const real *alpha,
          const real *a, const int *lda, const real *b, const int *ldb, const real *beta, real *c, const int *ldc);

enum { CHECKED = 64 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  int status = 0, repeats = 3;
  const char *repeats_text = getenv("TIMING_REPEATS");
  if (repeats_text != NULL && *repeats_text != '\0') {
    char *end = NULL;
    const long value = strtol(repeats_text, &end, 10);
    repeats = *end == '\0' && value >= 1 && value <= 1000 ? (int)value : 0;
    if (repeats == 0) {
      fprintf(stderr, NAME ": TIMING_REPEATS must be 1 to 1000, not %s\n", repeats_text);
      return 2;
    }
  }
  for (int argument = 1; argument < argc; ++argument) {
    const int n = atoi(argv[argument]);
    const size_t count = (size_t)n * (size_t)n;
    real *a = malloc(count * sizeof(real)), *b = malloc(count * sizeof(real)), *c = malloc(count * sizeof(real));
    if (n <= 0 || a == NULL || b == NULL || c == NULL) {
      fprintf(stderr, NAME ": cannot run n = %s\n", argv[argument]);
      return 2;
    }
    unsigned state = 12345u;
    for (size_t i = 0; i < count; ++i) {
      state = state * 1664525u + 1013904223u;
      a[i] = (real)((state >> 8) & 0xffff) / 32768 - 1;
      state = state * 1664525u + 1013904223u;
      b[i] = (real)((state >> 8) & 0xffff) / 32768 - 1;
    }
    const real alpha = 1, beta = 0;
    double best = INFINITY;
    for (int repeat = 0; repeat <= repeats; ++repeat) {
      const double start = now();
      GEMM("N", "N", &n, &n, &n, &alpha, a, &n, b, &n, &beta, c, &n);
      const double seconds = now() - start;
      if (repeat > 0 && seconds < best) best = seconds;
    }
    double worst = 0.0;
    for (int probe = 0; probe < CHECKED; ++probe) {
      const size_t i = ((size_t)probe * 7919u) % (size_t)n, j = ((size_t)probe * 104729u) % (size_t)n;
      double sum = 0.0, scale = 0.0;
      for (size_t l = 0; l < (size_t)n; ++l) {
        sum += (double)a[l * n + i] * b[j * n + l];
        scale += fabs((double)a[l * n + i] * b[j * n + l]);
      }
      const double error = fabs(c[j * n + i] - sum) / scale;
      if (!(error <= worst)) worst = error;
    }
    printf("n = %5d: %8.3f ms, %7.2f TFLOPS, largest error %.2e\n", n, best * 1e3,
           2.0 * n * (double)n * n / best * 1e-12, worst);
    if (!(worst < TOLERANCE)) status = 1;
    free(a), free(b), free(c);
  }
  return status;
}
