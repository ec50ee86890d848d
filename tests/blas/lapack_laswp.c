/* SPDX-License-Identifier: Apache-2.0 */
/* libfastgemm_lapack.so's row interchanges (?laswp_) against the reference LAPACK's, bit for bit: both opened here
   (RTLD_LOCAL), each given the same matrix and pivots, for the four types, increments of +-1 and +-2, calls small
   enough to run on the calling thread and large enough to be split among threads, calls whose rows reach past LDA,
   and the calls that swap nothing.
   lapack_laswp REFERENCE_LAPACK FASTGEMM_LAPACK: "ok", or each case that differs (exit status 1). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*Laswp)(const int *, void *, const int *, const int *, const int *, const int *, const int *);

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: lapack_laswp REFERENCE_LAPACK FASTGEMM_LAPACK\n");
    return 2;
  }
  void *reference = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL), *own = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (reference == NULL || own == NULL) {
    printf("cannot open %s or %s: %s\n", argv[1], argv[2], dlerror());
    return 2;
  }
  static const char *const names[4] = {"slaswp_", "dlaswp_", "claswp_", "zlaswp_"};
  static const size_t sizes[4] = {4, 8, 8, 16};
  /* n, lda, k1, k2, incx, pivots' rows (0: lda): 5000 x 1024 and more are split among threads; the others are not,
     nor those whose rows reach past lda (columns then share elements; the memory is padded for them). */
  static const int cases[][6] = {
      {5000, 5100, 1, 1024, 1, 0},   {5000, 5100, 1, 1024, -1, 0}, {6000, 4100, 3, 900, 2, 0},
      {6000, 4100, 3, 900, -2, 0},   {300, 300, 1, 300, 1, 0},     {100000, 70, 1, 64, 1, 0},
      {7, 9, 2, 5, -1, 0},           {5000, 5000, 10, 9, 1, 0},    {0, 5, 1, 5, 1, 0},
      {5000, 5000, 1, 1024, 0, 0},   {129, 2048, 1, 2048, 1, 0},   {5000, 1000, 1, 1024, 1, 0},
      {5000, 2000, 1, 1024, 1, 2100}};
  enum { PAD = 8192 };
  int failed = 0;
  unsigned long long state = 11;
  for (int type = 0; type < 4; ++type) {
    Laswp ref = (Laswp)dlsym(reference, names[type]), mine = (Laswp)dlsym(own, names[type]);
    if (ref == NULL || mine == NULL) {
      printf("%s missing\n", names[type]);
      return 2;
    }
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
      const int n = cases[c][0], lda = cases[c][1], k1 = cases[c][2], k2 = cases[c][3], incx = cases[c][4];
      const int rows = cases[c][5] > 0 ? cases[c][5] : lda;
      const int length = k1 + (k2 > k1 ? k2 - k1 : 0) * (incx < 0 ? -incx : incx) + 1;
      int *ipiv = malloc(sizeof(int) * (size_t)length);
      for (int i = 0; i < length; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        ipiv[i] = 1 + (int)((state >> 33) % (unsigned long long)rows);
      }
      const size_t bytes = ((size_t)lda * (size_t)(n > 0 ? n : 1) + PAD) * sizes[type];
      unsigned char *a = malloc(bytes), *b = malloc(bytes);
      for (size_t i = 0; i < bytes; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        a[i] = b[i] = (unsigned char)(state >> 56);
      }
      ref(&n, a, &lda, &k1, &k2, ipiv, &incx);
      mine(&n, b, &lda, &k1, &k2, ipiv, &incx);
      if (memcmp(a, b, bytes) != 0) {
        printf("%s n=%d lda=%d k1=%d k2=%d incx=%d: not the reference's result\n", names[type], n, lda, k1, k2, incx);
        failed = 1;
      }
      free(a), free(b), free(ipiv);
    }
  }
  if (!failed) printf("ok\n");
  return failed;
}
