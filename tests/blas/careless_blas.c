/* SPDX-License-Identifier: Apache-2.0 */
/* A CPU BLAS that makes the reference's scaling-only calls carelessly, as some optimized BLAS do for some
   shapes: with alpha == 0 (or k == 0) it multiplies through, so that NaN in the operands the reference does
   not read, or in a C that beta == 0 does not read, reaches the output. Here it writes NaN there outright;
   every other call goes to the system's reference BLAS. Given to libfastgemm_blas.so as its CPU BLAS
   (FASTGEMM_BLAS_FALLBACK), the drop-in must still give the reference's results: it makes those calls itself. */
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>

static void *reference(const char *name) {
  static void *library = NULL;
  if (library == NULL) library = dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL);
  return library != NULL ? dlsym(library, name) : NULL;
}

/* Fills the m x n output with NaN. */
#define POISON(T, out, m, n, ld) \
  for (int j = 0; j < (n); ++j)  \
    for (int i = 0; i < (m); ++i) (out)[(size_t)j * (size_t)(ld) + (size_t)i] = (T)NAN;

#define GEMM(T, name)                                                                                                \
  void name(const char *ta, const char *tb, const int *m, const int *n, const int *k, const T *alpha, const T *a,    \
            const int *lda, const T *b, const int *ldb, const T *beta, T *c, const int *ldc, size_t l1, size_t l2) { \
    if (*alpha == 0 || *k == 0) {                                                                                    \
      POISON(T, c, *m, *n, *ldc)                                                                                     \
      return;                                                                                                        \
    }                                                                                                                \
    ((void (*)(const char *, const char *, const int *, const int *, const int *, const T *, const T *, const int *, \
               const T *, const int *, const T *, T *, const int *, size_t, size_t))reference(#name))(               \
        ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, l1, l2);                                               \
  }
#define SYMM(T, name)                                                                                                \
  void name(const char *side, const char *uplo, const int *m, const int *n, const T *alpha, const T *a,              \
            const int *lda, const T *b, const int *ldb, const T *beta, T *c, const int *ldc, size_t l1, size_t l2) { \
    if (*alpha == 0) {                                                                                               \
      POISON(T, c, *m, *n, *ldc)                                                                                     \
      return;                                                                                                        \
    }                                                                                                                \
    ((void (*)(const char *, const char *, const int *, const int *, const T *, const T *, const int *, const T *,   \
               const int *, const T *, T *, const int *, size_t, size_t))reference(#name))(                          \
        side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc, l1, l2);                                              \
  }
#define SYRK(T, name)                                                                                                  \
  void name(const char *uplo, const char *trans, const int *n, const int *k, const T *alpha, const T *a,               \
            const int *lda, const T *beta, T *c, const int *ldc, size_t l1, size_t l2) {                               \
    if (*alpha == 0 || *k == 0) {                                                                                      \
      POISON(T, c, *n, *n, *ldc)                                                                                       \
      return;                                                                                                          \
    }                                                                                                                  \
    ((void (*)(const char *, const char *, const int *, const int *, const T *, const T *, const int *, const T *,     \
               T *, const int *, size_t, size_t))reference(#name))(uplo, trans, n, k, alpha, a, lda, beta, c, ldc, l1, \
                                                                   l2);                                                \
  }
#define SYR2K(T, name)                                                                                               \
  void name(const char *uplo, const char *trans, const int *n, const int *k, const T *alpha, const T *a,             \
            const int *lda, const T *b, const int *ldb, const T *beta, T *c, const int *ldc, size_t l1, size_t l2) { \
    if (*alpha == 0 || *k == 0) {                                                                                    \
      POISON(T, c, *n, *n, *ldc)                                                                                     \
      return;                                                                                                        \
    }                                                                                                                \
    ((void (*)(const char *, const char *, const int *, const int *, const T *, const T *, const int *, const T *,   \
               const int *, const T *, T *, const int *, size_t, size_t))reference(#name))(                          \
        uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc, l1, l2);                                             \
  }
#define TRIANGULAR(T, name)                                                                                            \
  void name(const char *side, const char *uplo, const char *ta, const char *diag, const int *m, const int *n,          \
            const T *alpha, const T *a, const int *lda, T *b, const int *ldb, size_t l1, size_t l2, size_t l3,         \
            size_t l4) {                                                                                               \
    if (*alpha == 0) {                                                                                                 \
      POISON(T, b, *m, *n, *ldb)                                                                                       \
      return;                                                                                                          \
    }                                                                                                                  \
    ((void (*)(const char *, const char *, const char *, const char *, const int *, const int *, const T *, const T *, \
               const int *, T *, const int *, size_t, size_t, size_t, size_t))reference(#name))(                       \
        side, uplo, ta, diag, m, n, alpha, a, lda, b, ldb, l1, l2, l3, l4);                                            \
  }

GEMM(float, sgemm_)
GEMM(double, dgemm_)
SYMM(float, ssymm_)
SYMM(double, dsymm_)
SYRK(float, ssyrk_)
SYRK(double, dsyrk_)
SYR2K(float, ssyr2k_)
SYR2K(double, dsyr2k_)
TRIANGULAR(float, strmm_)
TRIANGULAR(double, dtrmm_)
TRIANGULAR(float, strsm_)
TRIANGULAR(double, dtrsm_)
