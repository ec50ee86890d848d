/* SPDX-License-Identifier: Apache-2.0 */
/* libfastgemm_lapack.so's ILAENV, asked the way LAPACK asks it.
   `lapack_block queries` (built with LINKED_TO_LAPACK, linked to the distribution's LAPACK): ILAENV's answer to each
   query below, one line each ("ISPEC NAME N1 N2 N3 N4 answer"); run with and without the library preloaded, the
   script compares.
   `lapack_block dlopen LIBRARY` (built without: no LAPACK loaded but this one): LAPACK opened with RTLD_LOCAL, as
   Python opens its modules, out of the preloaded library's RTLD_NEXT; DPOTRF and DSYEVD of order 300 through it,
   checked ("ok" or what failed), so that the preloaded ILAENV must find that LAPACK's own answers (its blocks,
   SMLSIZ, ...) to give right ones. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*Ilaenv)(const int *, const char *, const char *, const int *, const int *, const int *, const int *,
                      size_t, size_t);
typedef void (*Potrf)(const char *, const int *, double *, const int *, int *, size_t);
typedef void (*Syevd)(const char *, const char *, const int *, double *, const int *, double *, double *, const int *,
                      int *, const int *, int *, size_t, size_t);
#ifdef LINKED_TO_LAPACK
int ilaenv_(const int *, const char *, const char *, const int *, const int *, const int *, const int *, size_t,
            size_t);

static int queries(void) {
  static const struct {
    int ispec;
    const char *name, *opts;
    int n[4];
  } asked[] = {
      {1, "DGETRF", " ", {8192, 8192, -1, -1}},   {1, "DGETRF", " ", {8191, 8192, -1, -1}},
      {1, "SGETRF", " ", {65536, 8192, -1, -1}},  {1, "DPOTRF", "L", {8192, -1, -1, -1}},
      {1, "DPOTRF", "L", {0, -1, -1, -1}},        {1, "DGEQRF", " ", {100000, 8192, -1, -1}},
      {1, "DSYTRD", "L", {16384, -1, -1, -1}},    {1, "DGETF2", " ", {16384, 16384, -1, -1}},
      {1, "DGETRF", " ", {-1, -1, -1, -1}},       {1, "DPOTRF", "L", {524288, -1, -1, -1}},
      {1, "DPOTRF", "L", {524289, -1, -1, -1}},   {2, "DGETRF", " ", {16384, 16384, -1, -1}},
      {3, "DGETRF", " ", {16384, 16384, -1, -1}}, {3, "DSYTRD", "L", {16384, -1, -1, -1}},
      {6, "DGELSS", " ", {16384, 16384, -1, -1}}, {9, "DSYEVD", " ", {0, 0, 0, 0}},
      {10, "DSTEMR", " ", {0, 0, 0, 0}},          {1, "ZGETRF", " ", {16384, 16384, -1, -1}},
      {1, "DPOTRF", "L", {65536, -1, -1, -1}},    {1, "DPOTRF", "L", {65537, -1, -1, -1}},
  };
  for (size_t i = 0; i < sizeof asked / sizeof asked[0]; ++i)
    printf("%d %s %d %d %d %d %d\n", asked[i].ispec, asked[i].name, asked[i].n[0], asked[i].n[1], asked[i].n[2],
           asked[i].n[3],
           ilaenv_(&asked[i].ispec, asked[i].name, asked[i].opts, &asked[i].n[0], &asked[i].n[1], &asked[i].n[2],
                   &asked[i].n[3], strlen(asked[i].name), strlen(asked[i].opts)));
  return 0;
}
#endif

static int opened(const char *file) {
  void *lapack = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (lapack == NULL) {
    printf("cannot open %s: %s\n", file, dlerror());
    return 1;
  }
  Potrf potrf = (Potrf)dlsym(lapack, "dpotrf_");
  Syevd syevd = (Syevd)dlsym(lapack, "dsyevd_");
  if (potrf == NULL || syevd == NULL) {
    printf("%s has no dpotrf_ or dsyevd_\n", file);
    return 1;
  }
  enum { N = 300 };
  const int n = N;
  double *a = malloc(sizeof(double) * N * N), *x = malloc(sizeof(double) * N * N), w[N];
  unsigned long long state = 7;
  for (int j = 0; j < N; ++j)
    for (int i = j; i < N; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      a[j * N + i] = a[i * N + j] = (double)(unsigned)(state >> 32) / 2147483648.0 - 1.0;
    }
  int failed = 0, info = 0;
  /* DSYEVD: the eigenvalues' sum is the trace, the sum of their squares the squared Frobenius norm. */
  memcpy(x, a, sizeof(double) * N * N);
  int lwork = 1 + 6 * N + 2 * N * N, liwork = 3 + 5 * N;
  double *work = malloc(sizeof(double) * (size_t)lwork);
  int *iwork = malloc(sizeof(int) * (size_t)liwork);
  syevd("V", "L", &n, x, &n, w, work, &lwork, iwork, &liwork, &info, 1, 1);
  double trace = 0, frobenius = 0, sum = 0, squares = 0, magnitude = 0;
  for (int i = 0; i < N; ++i) trace += a[i * N + i], sum += w[i], squares += w[i] * w[i], magnitude += fabs(w[i]);
  for (int i = 0; i < N * N; ++i) frobenius += a[i] * a[i];
  if (info != 0 || fabs(sum - trace) > 1e-10 * magnitude || fabs(squares - frobenius) > 1e-10 * frobenius) {
    printf("dsyevd: info %d, eigenvalues' sum %.17g against the trace %.17g, squares %.17g against %.17g\n", info, sum,
           trace, squares, frobenius);
    failed = 1;
  }
  /* DPOTRF of A + N I: L L^T against it. */
  for (int i = 0; i < N; ++i) a[i * N + i] += N;
  memcpy(x, a, sizeof(double) * N * N);
  potrf("L", &n, x, &n, &info, 1);
  double worst = 0;
  for (int j = 0; j < N; j += 7)
    for (int i = j; i < N; i += 5) {
      double s = 0, scale = 0;
      for (int k = 0; k <= j; ++k) s += x[k * N + i] * x[k * N + j], scale += fabs(x[k * N + i] * x[k * N + j]);
      worst = fmax(worst, fabs(s - a[j * N + i]) / scale);
    }
  if (info != 0 || !(worst < 1e-13)) {
    printf("dpotrf: info %d, largest error of L L^T %.3g\n", info, worst);
    failed = 1;
  }
  if (!failed) printf("ok\n");
  free(a), free(x), free(work), free(iwork);
  return failed;
}

int main(int argc, char **argv) {
#ifdef LINKED_TO_LAPACK
  if (argc == 2 && strcmp(argv[1], "queries") == 0) return queries();
#endif
  if (argc == 3 && strcmp(argv[1], "dlopen") == 0) return opened(argv[2]);
  fprintf(stderr, "usage: lapack_block queries | lapack_block dlopen LIBRARY\n");
  return 2;
}
