/* SPDX-License-Identifier: Apache-2.0 */
/* device_level3.c's checks in one precision, included once per precision with REAL (float or double), NAME(x)
   (x with the precision's suffix), PREFIX ("s" or "d"), TRSM, TRMM, SYMM, SYRK and SYR2K (the Fortran routines), SEED
   and TOLERANCE (the largest error allowed, times the square root of the order) defined; and MODEL_TRSM, MODEL_TRMM,
   MODEL_SYMM, MODEL_SYRK and MODEL_SYR2K, a CPU model of the device's sequence, where there is one (counted in
   model_differ and model_compared). */

/* Whether element (i, l) of op(A) lies outside the stored triangle `uplo` (upper-case letters). */
static int NAME(outside)(char uplo, char trans, int i, int l) {
  const int row = trans == 'N' ? i : l, col = trans == 'N' ? l : i;
  return uplo == 'U' ? row > col : row < col;
}

/* Element (i, l) of op(A) for the stored triangle `uplo`, a unit diagonal as one. */
static REAL NAME(op_a)(const REAL *a, int lda, char uplo, char trans, char diag, int i, int l) {
  if (i == l && diag == 'U') return 1.0;
  if (NAME(outside)(uplo, trans, i, l)) return 0.0;
  return trans == 'N' ? a[i + (long)l * lda] : a[l + (long)i * lda];
}

/* The worst of |op(A) X - alpha B| (side L) or |X op(A) - alpha B| (R) over the sum of the terms' magnitudes. */
static double NAME(residual)(char side, char uplo, char trans, char diag, int m, int n, REAL alpha, const REAL *a,
                             int lda, const REAL *x, const REAL *b, int ldb) {
  const int order = side == 'L' ? m : n;
  double worst = 0.0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      long double sum = 0.0L, size = 0.0L;
      for (int l = 0; l < order; ++l) {
        const long double term = side == 'L'
                                     ? (long double)NAME(op_a)(a, lda, uplo, trans, diag, i, l) * x[l + (long)j * ldb]
                                     : (long double)x[i + (long)l * ldb] * NAME(op_a)(a, lda, uplo, trans, diag, l, j);
        sum += term;
        size += fabsl(term);
      }
      const long double want = (long double)alpha * b[i + (long)j * ldb];
      const double error = (double)(fabsl(sum - want) / (size + fabsl(want) + 1e-300L));
      if (!(error <= worst)) worst = isnan(error) ? INFINITY : error;
    }
  return worst;
}

/* Element (i, l) of the symmetric A whose triangle `uplo` is stored. */
static REAL NAME(sym_a)(const REAL *a, int lda, char uplo, int i, int l) {
  const int stored = uplo == 'U' ? i <= l : i >= l;
  return stored ? a[i + (long)l * lda] : a[l + (long)i * lda];
}

/* The worst of |got - (alpha op(A) B + beta C)| (side L; B op(A) for R; A symmetric for symm, op(A) triangular for
   trmm, beta 0) over the sum of the terms' magnitudes. trmm's sums have no term of the other triangle (as the
   reference BLAS's loops): an element of B that is infinite makes infinite only the elements whose terms take it,
   which must be that infinity, and leaves the others finite. */
static double NAME(product_error)(int symm, char side, char uplo, char trans, char diag, int m, int n, REAL alpha,
                                  const REAL *a, int lda, const REAL *b, int ldb, REAL beta, const REAL *c,
                                  const REAL *got, int ldc) {
  const int order = side == 'L' ? m : n;
  double worst = 0.0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      long double sum = 0.0L, size = 0.0L;
      for (int l = 0; l < order; ++l) {
        if (!symm && (side == 'L' ? NAME(outside)(uplo, trans, i, l) : NAME(outside)(uplo, trans, l, j))) continue;
        const REAL ail = symm ? NAME(sym_a)(a, lda, uplo, i, l) : NAME(op_a)(a, lda, uplo, trans, diag, i, l);
        const REAL alj = symm ? NAME(sym_a)(a, lda, uplo, l, j) : NAME(op_a)(a, lda, uplo, trans, diag, l, j);
        const long double term =
            side == 'L' ? (long double)ail * b[l + (long)j * ldb] : (long double)b[i + (long)l * ldb] * alj;
        sum += term;
        size += fabsl(term);
      }
      long double want = (long double)alpha * sum;
      size *= fabs(alpha);
      if (beta != 0.0) {
        want += (long double)beta * c[i + (long)j * ldc];
        size += fabsl((long double)beta * c[i + (long)j * ldc]);
      }
      const REAL value = got[i + (long)j * ldc];
      const double error =
          isinf(want) ? (value == want ? 0.0 : INFINITY) : (double)(fabsl(value - want) / (size + 1e-300L));
      if (!(error <= worst)) worst = isnan(error) ? INFINITY : error;
    }
  return worst;
}

/* A call of `routine` (0 trsm, 1 trmm, 2 symm) on `out` (B for trsm and trmm, C for symm). */
static void NAME(call)(int routine, char side, char uplo, char trans, char diag, int m, int n, REAL alpha,
                       const REAL *a, int lda, const REAL *b, int ldb, REAL beta, REAL *out, int ldo) {
  if (routine == 0) TRSM(&side, &uplo, &trans, &diag, &m, &n, &alpha, a, &lda, out, &ldo, 1, 1, 1, 1);
  if (routine == 1) TRMM(&side, &uplo, &trans, &diag, &m, &n, &alpha, a, &lda, out, &ldo, 1, 1, 1, 1);
  if (routine == 2) SYMM(&side, &uplo, &m, &n, &alpha, a, &lda, b, &ldb, &beta, out, &ldo, 1, 1);
}

/* Element (i, l) of X = A (trans N) or A^T (T). */
static REAL NAME(x_at)(const REAL *a, int lda, char trans, int i, int l) {
  return trans == 'N' ? a[i + (long)l * lda] : a[l + (long)i * lda];
}

/* The worst of |got - (alpha X X^T + beta C)| (syr2k: alpha (X Y^T + Y X^T) + beta C) over C's triangle `uplo`,
   relative to the sum of the terms' magnitudes; *kept cleared where an element off the triangle, or a row past n,
   is not as given. */
static double NAME(rank_k_error)(int two, char uplo, char trans, int n, int k, REAL alpha, const REAL *a, int lda,
                                 const REAL *b, int ldb, REAL beta, const REAL *c, const REAL *got, int ldc,
                                 int *kept) {
  double worst = 0.0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ldc; ++i) {
      const long at = i + (long)j * ldc;
      if (i >= n || (uplo == 'U' ? i > j : i < j)) {
        if (memcmp(&got[at], &c[at], sizeof(REAL)) != 0) *kept = 0;
        continue;
      }
      long double sum = 0.0L, size = 0.0L;
      for (int l = 0; l < k; ++l) {
        const long double first = two ? (long double)NAME(x_at)(a, lda, trans, i, l) * NAME(x_at)(b, ldb, trans, j, l)
                                      : (long double)NAME(x_at)(a, lda, trans, i, l) * NAME(x_at)(a, lda, trans, j, l);
        const long double second =
            two ? (long double)NAME(x_at)(b, ldb, trans, i, l) * NAME(x_at)(a, lda, trans, j, l) : 0.0L;
        sum += first + second;
        size += fabsl(first) + fabsl(second);
      }
      long double want = (long double)alpha * sum;
      size *= fabs(alpha);
      if (beta != 0.0) {
        want += (long double)beta * c[at];
        size += fabsl((long double)beta * c[at]);
      }
      const double error = (double)(fabsl(got[at] - want) / (size + 1e-300L));
      if (!(error <= worst)) worst = isnan(error) ? INFINITY : error;
    }
  return worst;
}

/* syrk (`two` 0) or syr2k on C. */
static void NAME(call_rank_k)(int two, char uplo, char trans, int n, int k, REAL alpha, const REAL *a, int lda,
                              const REAL *b, int ldb, REAL beta, REAL *c, int ldc) {
  if (two)
    SYR2K(&uplo, &trans, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
  else
    SYRK(&uplo, &trans, &n, &k, &alpha, a, &lda, &beta, c, &ldc, 1, 1);
}

/* syrk and syr2k in this precision, every option, orders across the panels of C (4096 columns); counts as run. */
static void NAME(run_rank_k)(unsigned long long *state, int small_only, int *calls_out, int *failed_out,
                             long *differ_out, long *compared_out) {
  static const int kRankShapes[][2] = {{1, 3}, {32, 7}, {33, 5}, {100, 9}, {257, 4}, {40, 4100}, {4100, 3}}; /* n, k */
  static const char kTrans[] = {'N', 'T', 'C', 't'};
  static const char *const kNames[] = {PREFIX "syrk", PREFIX "syr2k"};
  for (int two = 0; two < 2; ++two)
    for (int shape = 0; shape < (int)(sizeof kRankShapes / sizeof kRankShapes[0]); ++shape)
      for (int s = 0; s < 2; ++s)
        for (int u = 0; u < 2; ++u)
          for (int t = 0; t < 2; ++t)
            for (int d = 0; d < 2; ++d) {
              /* s: beta 0 (C's triangle NaN, unread) or not; d: alpha's sign. */
              const int n = kRankShapes[shape][0], k = kRankShapes[shape][1];
              if (small_only && (n > 100 || k > 100)) continue;
              const char uplo = u ? 'L' : 'U', trans_given = t ? kTrans[1 + (shape % 3)] : 'N';
              const char trans = trans_given == 'N' ? 'N' : 'T';
              const char uplo_given = shape % 2 ? (char)(uplo + 32) : uplo;
              const int rows = trans == 'N' ? n : k, cols = trans == 'N' ? k : n;
              const int lda = rows + 3, ldb = rows + 1, ldc = n + 2;
              const REAL alpha = (d ? -1.0 : 1.0) * (0.5 + (uniform(state) + 1.0) / 2.0);
              const REAL beta = s ? uniform(state) : 0.0;
              REAL *a = malloc(sizeof(REAL) * (size_t)lda * cols), *b = malloc(sizeof(REAL) * (size_t)ldb * cols);
              REAL *c = malloc(sizeof(REAL) * (size_t)ldc * n), *out = malloc(sizeof(REAL) * (size_t)ldc * n);
              REAL *alone = malloc(sizeof(REAL) * (size_t)ldc * n);
              for (long e = 0; e < (long)lda * cols; ++e) a[e] = uniform(state);
              for (long e = 0; e < (long)ldb * cols; ++e) b[e] = uniform(state);
              for (int j = 0; j < n; ++j)
                for (int i = 0; i < ldc; ++i)
                  c[i + (long)j * ldc] = i >= n || (uplo == 'U' ? i > j : i < j) ? kKeep
                                         : beta != 0.0                           ? uniform(state)
                                                                                 : NAN;
              memcpy(out, c, sizeof(REAL) * (size_t)ldc * n);
              NAME(call_rank_k)(two, uplo_given, trans_given, n, k, alpha, a, lda, b, ldb, beta, out, ldc);
              ++*calls_out;
              int kept = 1;
              const double worst =
                  NAME(rank_k_error)(two, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, out, ldc, &kept);
              if (!kept || !(worst <= TOLERANCE * sqrt((double)k))) {
                ++*failed_out;
                printf("device_level3: %s uplo %c trans %c n %d k %d beta %g: error %.3g%s\n", kNames[two], uplo_given,
                       trans_given, n, k, beta, worst, kept ? "" : ", an element off the triangle written");
              }
#ifdef MODEL_SYRK
              {
                REAL *model = malloc(sizeof(REAL) * (size_t)ldc * n);
                memcpy(model, c, sizeof(REAL) * (size_t)ldc * n);
                if (two)
                  MODEL_SYR2K(&uplo_given, &trans_given, &n, &k, &alpha, a, &lda, b, &ldb, &beta, model, &ldc);
                else
                  MODEL_SYRK(&uplo_given, &trans_given, &n, &k, &alpha, a, &lda, &beta, model, &ldc);
                for (long e = 0; e < (long)ldc * n; ++e) {
                  model_differ += memcmp(&model[e], &out[e], sizeof(REAL)) != 0;
                  ++model_compared;
                }
                free(model);
              }
#endif
              /* A smaller order alone: C's leading block must come out bit for bit the same, the rest as given. */
              const int part = n > 3 ? n - 3 : 1;
              memcpy(alone, c, sizeof(REAL) * (size_t)ldc * n);
              NAME(call_rank_k)(two, uplo_given, trans_given, part, k, alpha, a, lda, b, ldb, beta, alone, ldc);
              ++*calls_out;
              for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i) {
                  const long at = i + (long)j * ldc;
                  if (i < part && j < part) {
                    *differ_out += memcmp(&alone[at], &out[at], sizeof(REAL)) != 0;
                    ++*compared_out;
                  } else if (memcmp(&alone[at], &c[at], sizeof(REAL)) != 0) {
                    ++*failed_out;
                    printf("device_level3: %s n %d: the call of order %d wrote (%d, %d)\n", kNames[two], n, part, i, j);
                    i = n, j = n;
                  }
                }
              free(a), free(b), free(c), free(out), free(alone);
            }
}

/* Every case of the three routines in this precision; counts into *calls, *failed, *differ and *compared. */
static void NAME(run)(int *calls_out, int *failed_out, long *differ_out, long *compared_out) {
  /* order, lines: {40, 4100} and {36, 8300} across the panels of B, the latter across the smaller first and last
     ones; {2100, 5} past the order from which A and the first panel go to the device in pieces as the work reads them
     (pieces of 131 lines, cut at 2048, 1024, ... 128) */
  static const int kShapes[][2] = {{1, 3}, {32, 7}, {33, 5}, {100, 9}, {257, 4}, {40, 4100}, {36, 8300}, {2100, 5}};
  static const char kTrans[] = {'N', 'T', 'C', 't'};
  static const char *const kNames[] = {PREFIX "trsm", PREFIX "trmm", PREFIX "symm"};
  unsigned long long state = SEED;
  /* DEVICE_LEVEL3_SMALL set: the shapes of at most 100 lines a side only (for a run under a memory checker). */
  const int small_only = getenv("DEVICE_LEVEL3_SMALL") != NULL;
  int calls = 0, failed = 0;
  long differ = 0, compared = 0;
  for (int routine = 0; routine < 3; ++routine)
    for (int shape = 0; shape < (int)(sizeof kShapes / sizeof kShapes[0]); ++shape)
      for (int s = 0; s < 2; ++s)
        for (int u = 0; u < 2; ++u)
          for (int t = 0; t < 2; ++t)
            for (int d = 0; d < 2; ++d) {
              /* symm has no transpose or diagonal: t picks beta 0 (C NaN, unread) or not, d the other triangle's
                 content (NaN or values that must not be read). */
              const char side = s ? 'R' : 'L', uplo = u ? 'L' : 'U', diag = routine < 2 && d ? 'U' : 'N';
              /* N or T, and in every other shape C or lower case t, which the routine reads as T. */
              const char trans_given = routine < 2 && t ? kTrans[1 + (shape % 3)] : 'N';
              const char trans = trans_given == 'N' ? 'N' : 'T';
              const char uplo_given = shape % 2 ? (char)(uplo + 32) : uplo;
              const int order = kShapes[shape][0], lines = kShapes[shape][1];
              if (small_only && (order > 100 || lines > 100)) continue;
              const int m = side == 'L' ? order : lines, n = side == 'L' ? lines : order;
              const int lda = order + 3, ldb = m + 2, ldc = m + 1;
              const REAL alpha = 0.5 + 1.5 * (uniform(&state) + 1.0) / 2.0;
              const REAL beta = routine == 2 && t ? uniform(&state) : 0.0;
              const int ldo = routine == 2 ? ldc : ldb;
              REAL *a = malloc(sizeof(REAL) * (size_t)lda * order);
              REAL *b = malloc(sizeof(REAL) * (size_t)ldb * n), *c = malloc(sizeof(REAL) * (size_t)ldc * n);
              REAL *out = malloc(sizeof(REAL) * (size_t)ldo * n), *alone = malloc(sizeof(REAL) * (size_t)ldo * n);
              for (int j = 0; j < order; ++j)
                for (int i = 0; i < lda; ++i) {
                  const int stored = i < order && (uplo == 'U' ? i <= j : i >= j) && !(i == j && diag == 'U');
                  a[i + (long)j * lda] = !stored && !(routine == 2 && d && i < order) ? NAN
                                         : i == j                                     ? 1.5 + uniform(&state) / 2.0
                                                                                      : uniform(&state) / order;
                }
              for (int j = 0; j < n; ++j) {
                for (int i = 0; i < ldb; ++i) b[i + (long)j * ldb] = i < m ? uniform(&state) : kKeep;
                for (int i = 0; i < ldc; ++i)
                  c[i + (long)j * ldc] = i >= m ? kKeep : beta != 0.0 ? uniform(&state) : NAN;
              }
              /* trmm: an infinity in the first line of B, at its middle element (past the first block of 32 where
                 the order allows); the elements of that line it does not reach must stay finite. */
              if (routine == 1 && order > 1) {
                const int k = order / 2, sign = (shape + s + u) % 2 ? 1 : -1;
                b[side == 'L' ? k : (long)k * ldb] = sign * (REAL)INFINITY;
              }
              const REAL *given = routine == 2 ? c : b;
              memcpy(out, given, sizeof(REAL) * (size_t)ldo * n);
              NAME(call)(routine, side, uplo_given, trans_given, diag, m, n, alpha, a, lda, b, ldb, beta, out, ldo);
              ++calls;
              int kept = 1;
              for (int j = 0; j < n; ++j)
                for (int i = m; i < ldo; ++i) kept = kept && out[i + (long)j * ldo] == kKeep;
              const double worst = routine == 0
                                       ? NAME(residual)(side, uplo, trans, diag, m, n, alpha, a, lda, out, b, ldb)
                                       : NAME(product_error)(routine == 2, side, uplo, trans, diag, m, n, alpha, a, lda,
                                                             b, ldb, beta, c, out, ldo);
              if (!kept || !(worst <= TOLERANCE * sqrt((double)order))) {
                ++failed;
                printf("device_level3: %s side %c uplo %c trans %c diag %c m %d n %d beta %g: error %.3g%s\n",
                       kNames[routine], side, uplo_given, trans_given, diag, m, n, beta, worst,
                       kept ? "" : ", rows past m written");
              }
#ifdef MODEL_TRSM
              /* The same call by the CPU model of the device's sequence (sequence_model.c): with the products at
                 the drop-in's default FG_REPRODUCIBLE_SHAPE, the GPU's bits must be the model's. */
              {
                REAL *model = malloc(sizeof(REAL) * (size_t)ldo * n);
                memcpy(model, given, sizeof(REAL) * (size_t)ldo * n);
                if (routine == 0)
                  MODEL_TRSM(&side, &uplo_given, &trans_given, &diag, &m, &n, &alpha, a, &lda, model, &ldo);
                if (routine == 1)
                  MODEL_TRMM(&side, &uplo_given, &trans_given, &diag, &m, &n, &alpha, a, &lda, model, &ldo);
                if (routine == 2) MODEL_SYMM(&side, &uplo_given, &m, &n, &alpha, a, &lda, b, &ldb, &beta, model, &ldo);
                for (int j = 0; j < n; ++j)
                  for (int i = 0; i < m; ++i) {
                    model_differ += memcmp(&model[i + (long)j * ldo], &out[i + (long)j * ldo], sizeof(REAL)) != 0;
                    ++model_compared;
                  }
                free(model);
              }
#endif
              /* The first lines alone: a line's bits must not depend on how many others the call computes. */
              const int part = lines > 3 ? lines - 3 : 1;
              const int pm = side == 'L' ? m : part, pn = side == 'L' ? part : n;
              memcpy(alone, given, sizeof(REAL) * (size_t)ldo * n);
              NAME(call)(routine, side, uplo_given, trans_given, diag, pm, pn, alpha, a, lda, b, ldb, beta, alone, ldo);
              ++calls;
              for (int j = 0; j < n; ++j)
                for (int i = 0; i < m; ++i) {
                  const long at = i + (long)j * ldo;
                  if (i < pm && j < pn) {
                    differ += memcmp(&alone[at], &out[at], sizeof(REAL)) != 0;
                    ++compared;
                  } else if (memcmp(&alone[at], &given[at], sizeof(REAL)) != 0) {
                    ++failed; /* a line past the call's written */
                    printf("device_level3: %s side %c m %d n %d: the call of %d x %d wrote (%d, %d)\n", kNames[routine],
                           side, m, n, pm, pn, i, j);
                    i = m, j = n;
                  }
                }
              free(a), free(b), free(c), free(out), free(alone);
            }
  *calls_out += calls;
  *failed_out += failed;
  *differ_out += differ;
  *compared_out += compared;
  NAME(run_rank_k)(&state, small_only, calls_out, failed_out, differ_out, compared_out);
}
