/* SPDX-License-Identifier: Apache-2.0 */
/* An SGEMM for the CPU that computes every element by the sequence FG_REPRODUCIBLE_SHAPE documents
   (include/fastgemm/fastgemm.h): acc = 0, acc = fma(op(A)[i][l], op(B)[l][j], acc) for l = 0 .. k-1, a sum
   of -0 taken as +0, then C = alpha * acc when beta == 0, else fma(beta, C, alpha * acc); k == 0 or
   alpha == 0 give beta * C, or 0 when beta == 0. With it STRSM, STRMM, SSYMM, SSYRK and SSYR2K as the drop-in computes
   them on the device (blas/dgemm/device_level3.hpp), their products that sequence: symm one product over A's mirror;
   trsm and trmm each line of B on its own, the triangle halved at 32 times the smallest power of two that
   covers half of it (from line 0), blocks of at most 32 lines solved by substitution or multiplied in the
   order the device's leaves take; SSYRK and SSYR2K each element of C's triangle one product of the sequence (two
   for syr2k, the second added with beta 1). Preloaded into LAPACK's test programs, it shows on a machine without a GPU
   what those sequences do to their verdicts, and exercises the harness that judges the GPU's run
   (run_lapack_tests.cmake), whose outputs must be the same character for character. With FASTGEMM_LOG set it
   writes one line a call in the drop-in's form, which the harness counts. Arguments are assumed valid:
   LAPACK's tests call it only so. Built with SEQUENCE_SGEMM_ONLY it defines sgemm_ alone. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SEQUENCE_QUIET defined: no log (the model linked into a program of its own, under other names). */
static void log_call(const char *routine, int m, int n, int k) {
#ifdef SEQUENCE_QUIET
  (void)routine, (void)m, (void)n, (void)k;
  return;
#endif
  if (getenv("FASTGEMM_LOG") != NULL)
    fprintf(stderr, "fastgemm: %s %dx%dx%d on the GPU (shape_sequence) -> FG_STATUS_SUCCESS\n", routine, m, n, k);
}

/* The sequence's last steps for one element, from its sum. */
static void store(float *element, float acc, float alpha, float beta) {
  if (acc == 0.0f) acc = 0.0f;
  const float product = alpha * acc;
  *element = beta == 0.0f ? product : fmaf(beta, *element, product);
}

void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
            const float *a, const int *lda, const float *b, const int *ldb, const float *beta, float *c,
            const int *ldc) {
  const int a_transposed = toupper((unsigned char)*transa) != 'N';
  const int b_transposed = toupper((unsigned char)*transb) != 'N';
  for (int j = 0; j < *n; ++j)
    for (int i = 0; i < *m; ++i) {
      float *element = &c[i + (long)j * *ldc];
      if (*k == 0 || *alpha == 0.0f) {
        *element = *beta == 0.0f ? 0.0f : *beta * *element;
        continue;
      }
      float acc = 0.0f;
      for (int l = 0; l < *k; ++l) {
        const float x = a_transposed ? a[l + (long)i * *lda] : a[i + (long)l * *lda];
        const float y = b_transposed ? b[j + (long)l * *ldb] : b[l + (long)j * *ldb];
        acc = fmaf(x, y, acc);
      }
      store(element, acc, *alpha, *beta);
    }
  log_call("sgemm_", *m, *n, *k);
}

#ifndef SEQUENCE_SGEMM_ONLY /* defined: SGEMM alone, a CPU BLAS with no other routine */
void ssymm_(const char *side_, const char *uplo_, const int *m, const int *n, const float *alpha, const float *a,
            const int *lda, const float *b, const int *ldb, const float *beta, float *c, const int *ldc) {
  const int left = toupper((unsigned char)*side_) == 'L', upper = toupper((unsigned char)*uplo_) == 'U';
  const int order = left ? *m : *n;
  /* A(i, l) of the symmetric matrix, from its stored triangle. */
#define SYM(i, l) ((upper ? (i) <= (l) : (i) >= (l)) ? a[(i) + (long)(l) * *lda] : a[(l) + (long)(i) * *lda])
  for (int j = 0; j < *n; ++j)
    for (int i = 0; i < *m; ++i) {
      float *element = &c[i + (long)j * *ldc];
      if (*alpha == 0.0f) {
        *element = *beta == 0.0f ? 0.0f : *beta * *element;
        continue;
      }
      float acc = 0.0f;
      for (int l = 0; l < order; ++l)
        acc = left ? fmaf(SYM(i, l), b[l + (long)j * *ldb], acc) : fmaf(b[i + (long)l * *ldb], SYM(l, j), acc);
      store(element, acc, *alpha, *beta);
    }
#undef SYM
  log_call("ssymm_", *m, *n, order);
}

/* The triangle as each line of B meets it: trsm solves M x = alpha b, trmm computes alpha M x, for every line x
   of B (a column for side L, a row for side R, element i at x[i * along]); M = op(A) for side L, op(A)^T for
   side R, lower (`forward`) or upper. */
typedef struct {
  const float *a;
  int lda, direct, forward, unit;
  float alpha;
} Triangle;

static Triangle triangle(char side, char uplo, char transa, char diag, const float *a, int lda, float alpha) {
  const int left = toupper((unsigned char)side) == 'L', trans = toupper((unsigned char)transa) != 'N';
  const int lower = (toupper((unsigned char)uplo) == 'L') != trans;
  Triangle t = {a, lda, left == !trans, left ? lower : !lower, toupper((unsigned char)diag) == 'U', alpha};
  return t;
}

static float element(const Triangle *t, int i, int l) {
  if (i == l && t->unit) return 1.0f;
  return t->direct ? t->a[i + (long)l * t->lda] : t->a[l + (long)i * t->lda];
}

static int halving_cut(int size) {
  int cut = 32;
  while (cut < size - cut) cut *= 2;
  return cut;
}

/* out[target + i] = fma(beta, out[target + i], alpha * sum), the sum over the lines `source` of M(target + i, l)
   x[l] in the order of l: one product of the sequence. */
static void update(const Triangle *t, const float *x, float *out, long along, int target, int target_size, int source,
                   int source_size, float alpha, float beta) {
  for (int i = target; i < target + target_size; ++i) {
    float acc = 0.0f;
    for (int l = source; l < source + source_size; ++l) acc = fmaf(element(t, i, l), x[l * along], acc);
    store(&out[i * along], acc, alpha, beta);
  }
}

/* The lines [first, first + size) of x solved in place, alpha not yet applied where `scaled` is 0. */
static void solve_lines(const Triangle *t, float *x, long along, int first, int size, int scaled) {
  const float scale = scaled ? 1.0f : t->alpha;
  if (size <= 32) {
    float v[32];
    for (int i = 0; i < size; ++i) v[i] = scale * x[(first + i) * along];
    for (int step = 0; step < size; ++step) {
      const int i = t->forward ? step : size - 1 - step;
      float value = v[i];
      if (t->forward)
        for (int l = 0; l < i; ++l) value = fmaf(-element(t, first + i, first + l), v[l], value);
      else
        for (int l = size - 1; l > i; --l) value = fmaf(-element(t, first + i, first + l), v[l], value);
      v[i] = t->unit ? value : value / element(t, first + i, first + i);
    }
    for (int i = 0; i < size; ++i) x[(first + i) * along] = v[i];
    return;
  }
  const int cut = halving_cut(size), head = first, tail = first + cut, tail_size = size - cut;
  if (t->forward) {
    solve_lines(t, x, along, head, cut, scaled);
    update(t, x, x, along, tail, tail_size, head, cut, -1.0f, scale);
    solve_lines(t, x, along, tail, tail_size, 1);
  } else {
    solve_lines(t, x, along, tail, tail_size, scaled);
    update(t, x, x, along, head, cut, tail, tail_size, -1.0f, scale);
    solve_lines(t, x, along, head, cut, 1);
  }
}

/* The lines [first, first + size) of out = alpha M x. */
static void multiply_lines(const Triangle *t, const float *x, float *out, long along, int first, int size) {
  if (size <= 32) {
    for (int i = 0; i < size; ++i) {
      float value = 0.0f;
      for (int l = 0; l < size; ++l)
        if (t->forward ? l <= i : l >= i) value = fmaf(element(t, first + i, first + l), x[(first + l) * along], value);
      out[(first + i) * along] = t->alpha * value;
    }
    return;
  }
  const int cut = halving_cut(size), head = first, tail = first + cut, tail_size = size - cut;
  multiply_lines(t, x, out, along, head, cut);
  multiply_lines(t, x, out, along, tail, tail_size);
  if (t->forward)
    update(t, x, out, along, tail, tail_size, head, cut, t->alpha, 1.0f);
  else
    update(t, x, out, along, head, cut, tail, tail_size, t->alpha, 1.0f);
}

/* trsm (`solve`) or trmm over every line of B; alpha == 0 makes B zero. */
static void triangular(int solve, const char *side, const char *uplo, const char *transa, const char *diag,
                       const int *m, const int *n, const float *alpha, const float *a, const int *lda, float *b,
                       const int *ldb) {
  const int left = toupper((unsigned char)*side) == 'L';
  const int order = left ? *m : *n, lines = left ? *n : *m;
  if (*m == 0 || *n == 0) return;
  if (*alpha == 0.0f) {
    for (int j = 0; j < *n; ++j)
      for (int i = 0; i < *m; ++i) b[i + (long)j * *ldb] = 0.0f;
    return;
  }
  const Triangle t = triangle(*side, *uplo, *transa, *diag, a, *lda, *alpha);
  const long along = left ? 1 : *ldb;
  float *in = solve ? NULL : malloc(sizeof(float) * (size_t)order);
  float *out = solve ? NULL : malloc(sizeof(float) * (size_t)order);
  if (!solve && (in == NULL || out == NULL)) abort();
  for (int line = 0; line < lines; ++line) {
    float *x = left ? b + (long)line * *ldb : b + line;
    if (solve) {
      solve_lines(&t, x, along, 0, order, 0);
      continue;
    }
    for (int i = 0; i < order; ++i) in[i] = x[i * along];
    multiply_lines(&t, in, out, 1, 0, order);
    for (int i = 0; i < order; ++i) x[i * along] = out[i];
  }
  free(in);
  free(out);
}

/* SSYRK and SSYR2K as the device computes them: each element of C's triangle one product of the sequence over all
   of k (syr2k: alpha X Y^T + beta C, then alpha Y X^T added with beta 1), the other triangle untouched. */
static void rank_k(const char *uplo, const char *trans, const int *n, const int *k, const float *alpha, const float *a,
                   const int *lda, const float *b, const int *ldb, const float *beta, float *c, const int *ldc) {
  const int upper = toupper((unsigned char)*uplo) == 'U', transposed = toupper((unsigned char)*trans) != 'N';
#define LINE(m, ld, i, l) (transposed ? (m)[(l) + (long)(i) * (ld)] : (m)[(i) + (long)(l) * (ld)])
  for (int j = 0; j < *n; ++j)
    for (int i = upper ? 0 : j; i < (upper ? j + 1 : *n); ++i) {
      float *element = &c[i + (long)j * *ldc];
      if (*k == 0 || *alpha == 0.0f) {
        *element = *beta == 0.0f ? 0.0f : *beta * *element;
        continue;
      }
      float acc = 0.0f;
      for (int l = 0; l < *k; ++l) acc = fmaf(LINE(a, *lda, i, l), LINE(b, *ldb, j, l), acc);
      store(element, acc, *alpha, *beta);
      if (b == a) continue;
      acc = 0.0f;
      for (int l = 0; l < *k; ++l) acc = fmaf(LINE(b, *ldb, i, l), LINE(a, *lda, j, l), acc);
      store(element, acc, *alpha, 1.0f);
    }
#undef LINE
}

void ssyrk_(const char *uplo, const char *trans, const int *n, const int *k, const float *alpha, const float *a,
            const int *lda, const float *beta, float *c, const int *ldc) {
  rank_k(uplo, trans, n, k, alpha, a, lda, a, lda, beta, c, ldc);
  log_call("ssyrk_", *n, *n, *k);
}

void ssyr2k_(const char *uplo, const char *trans, const int *n, const int *k, const float *alpha, const float *a,
             const int *lda, const float *b, const int *ldb, const float *beta, float *c, const int *ldc) {
  rank_k(uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  log_call("ssyr2k_", *n, *n, *k);
}

void strsm_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m, const int *n,
            const float *alpha, const float *a, const int *lda, float *b, const int *ldb) {
  triangular(1, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb);
  log_call("strsm_", *m, *n, toupper((unsigned char)*side) == 'L' ? *m : *n);
}

void strmm_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m, const int *n,
            const float *alpha, const float *a, const int *lda, float *b, const int *ldb) {
  triangular(0, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb);
  log_call("strmm_", *m, *n, toupper((unsigned char)*side) == 'L' ? *m : *n);
}
#endif
