/* SPDX-License-Identifier: Apache-2.0 */
/* Times ?syrk_ and dsyr2k_ at order n and depth k through whatever BLAS the process has (preload the drop-in, or
   NVBLAS, to time them): C := C - A A^T (syr2k: - A B^T - B A^T), lower triangle, A and B n x k, pageable host
   arrays, best of 3 calls after a warm-up. LAPACK's updates are of this kind with k = NB, which is where the
   drop-in's halving of C pays. 64 sampled elements of the lower triangle of the last call are checked in long
   double against the sum of their terms' magnitudes (the last call starts from the C the earlier ones left).

     cc -O2 -std=c99 syrk_depth.c -o syrk_depth -lblas -lm
     LD_PRELOAD=/opt/fastgemm/lib/libfastgemm_blas.so ./syrk_depth 16384 256 dsyrk */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void dsyrk_(const char *, const char *, const int *, const int *, const double *, const double *, const int *,
            const double *, double *, const int *);
void ssyrk_(const char *, const char *, const int *, const int *, const float *, const float *, const int *,
            const float *, float *, const int *);
void dsyr2k_(const char *, const char *, const int *, const int *, const double *, const double *, const int *,
             const double *, const int *, const double *, double *, const int *);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double uniform(void) { return rand() / (double)RAND_MAX - 0.5; }

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[3], "dsyrk") && strcmp(argv[3], "ssyrk") && strcmp(argv[3], "dsyr2k"))) {
    fprintf(stderr, "usage: %s n k dsyrk|ssyrk|dsyr2k\n", argv[0]);
    return 2;
  }
  const int n = atoi(argv[1]), k = atoi(argv[2]), dbl = argv[3][0] == 'd', two = argv[3][4] == '2';
  if (n < 1 || k < 1) return 2;
  const size_t na = (size_t)n * k, nc = (size_t)n * n;
  double *A = malloc(na * 8), *B = malloc(na * 8), *C = malloc(nc * 8), *C0 = malloc(nc * 8);
  float *As = malloc(na * 4), *Cs = malloc(nc * 4);
  if (!A || !B || !C || !C0 || !As || !Cs) return 1;
  srand(7);
  for (size_t i = 0; i < na; ++i) {
    A[i] = uniform();
    B[i] = uniform();
    As[i] = (float)A[i];
    if (!dbl) A[i] = As[i];
  }
  for (size_t i = 0; i < nc; ++i) {
    Cs[i] = (float)uniform();
    C[i] = Cs[i];
  }
  const double minus = -1, one = 1;
  const float minus_s = -1, one_s = 1;
  double best = 1e30;
  for (int rep = 0; rep < 4; ++rep) {
    if (rep == 3) memcpy(C0, C, nc * 8);
    if (rep == 3 && !dbl)
      for (size_t i = 0; i < nc; ++i) C0[i] = Cs[i];
    const double start = now();
    if (dbl && two)
      dsyr2k_("L", "N", &n, &k, &minus, A, &n, B, &n, &one, C, &n);
    else if (dbl)
      dsyrk_("L", "N", &n, &k, &minus, A, &n, &one, C, &n);
    else
      ssyrk_("L", "N", &n, &k, &minus_s, As, &n, &one_s, Cs, &n);
    const double seconds = now() - start;
    if (rep > 0 && seconds < best) best = seconds;
  }
  double worst = 0;
  for (int probe = 0; probe < 64; ++probe) {
    size_t i = ((size_t)probe * 7919u) % (size_t)n, j = ((size_t)probe * 104729u) % (size_t)n;
    if (i < j) {
      const size_t swap = i;
      i = j;
      j = swap;
    }
    long double sum = C0[i + j * (size_t)n], scale = fabsl(sum);
    for (size_t l = 0; l < (size_t)k; ++l) {
      long double term = -(long double)A[i + l * n] * A[j + l * n];
      if (two) term = -(long double)A[i + l * n] * B[j + l * n] - (long double)B[i + l * n] * A[j + l * n];
      sum += term;
      scale += fabsl(term);
    }
    const double got = dbl ? C[i + j * (size_t)n] : Cs[i + j * (size_t)n];
    const double error = (double)(fabsl((long double)got - sum) / scale);
    if (!(error <= worst)) worst = error;
  }
  const double flops = (two ? 2.0 : 1.0) * n * (double)n * k;
  const double tolerance = dbl ? 1e-13 : 1e-5;
  printf("%s n=%d k=%d: %8.2f ms %6.2f TF, largest error %.2e%s\n", argv[3], n, k, best * 1e3, flops / best * 1e-12,
         worst, worst < tolerance ? "" : "  (over the tolerance)");
  return worst < tolerance ? 0 : 1;
}
