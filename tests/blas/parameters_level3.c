/* SPDX-License-Identifier: Apache-2.0 */
/* One invalid call, chosen by the first argument, of a Level 3 routine besides sgemm (dgemm, and symm,
   syrk, syr2k, trmm and trsm in both precisions), as its Fortran routine or its CBLAS form in either
   layout; "count" prints how many there are. The tests run each against the reference BLAS alone, with
   libfastgemm_blas.so linked ahead of it, and preloaded, and compare the parameter each names and how each
   ends. Every argument is made bad in turn (the layout, each option, each size, each leading dimension,
   0 with sizes 0), and every leading dimension but the last is set between the sizes of a 3 x 5 x 4 call,
   for each combination of options, with the last one bad: the first bad argument named is then that
   leading dimension where it is too small for those options, else the last. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *, const double *,
            const int *, const double *, const int *, const double *, double *, const int *);
void ssymm_(const char *, const char *, const int *, const int *, const float *, const float *, const int *,
            const float *, const int *, const float *, float *, const int *);
void dsymm_(const char *, const char *, const int *, const int *, const double *, const double *, const int *,
            const double *, const int *, const double *, double *, const int *);
void ssyrk_(const char *, const char *, const int *, const int *, const float *, const float *, const int *,
            const float *, float *, const int *);
void dsyrk_(const char *, const char *, const int *, const int *, const double *, const double *, const int *,
            const double *, double *, const int *);
void ssyr2k_(const char *, const char *, const int *, const int *, const float *, const float *, const int *,
             const float *, const int *, const float *, float *, const int *);
void dsyr2k_(const char *, const char *, const int *, const int *, const double *, const double *, const int *,
             const double *, const int *, const double *, double *, const int *);
void strmm_(const char *, const char *, const char *, const char *, const int *, const int *, const float *,
            const float *, const int *, float *, const int *);
void dtrmm_(const char *, const char *, const char *, const char *, const int *, const int *, const double *,
            const double *, const int *, double *, const int *);
void strsm_(const char *, const char *, const char *, const char *, const int *, const int *, const float *,
            const float *, const int *, float *, const int *);
void dtrsm_(const char *, const char *, const char *, const char *, const int *, const int *, const double *,
            const double *, const int *, double *, const int *);

enum { GEMM, SYMM, SYRK, SYR2K, TRMM, TRSM, FAMILIES };
enum { FORTRAN, COLUMN, ROW };
static const char *const family_name[FAMILIES] = {"gemm", "symm", "syrk", "syr2k", "trmm", "trsm"};
/* The options each family takes (in its order), and which of m, n, k and lda, ldb, ldc. */
static const int option_count[FAMILIES] = {2, 2, 2, 2, 4, 4};
static const char *const sizes_used[FAMILIES] = {"mnk", "mn", "nk", "nk", "mn", "mn"};
static const char *const lds_used[FAMILIES] = {"abc", "abc", "ac", "abc", "ab", "ab"};

typedef struct {
  int family, dbl, api, bad_layout;
  int option[4]; /* 0 or 1: the two values; -1: invalid */
  int m, n, k, lda, ldb, ldc;
} call;

/* Each option's two values, as Fortran letters and as CBLAS's enumerations. */
static char option_letter(int family, int which, int value) {
  static const char letters[FAMILIES][4][2] = {
      {"NT", "NT"}, {"LR", "UL"}, {"UL", "NT"}, {"UL", "NT"}, {"LR", "UL", "NT", "NU"}, {"LR", "UL", "NT", "NU"}};
  return value < 0 ? 'X' : letters[family][which][value];
}
static int option_value(int family, int which, int value) {
  if (value < 0) return 5;
  switch (option_letter(family, which, value)) {
    case 'N': return family >= TRMM && which == 3 ? CblasNonUnit : CblasNoTrans;
    case 'T': return CblasTrans;
    case 'L': return (family == SYMM || family >= TRMM) && which == 0 ? CblasLeft : CblasLower;
    case 'R': return CblasRight;
    case 'U': return family >= TRMM && which == 3 ? CblasUnit : CblasUpper;
  }
  return 5;
}

static int *size_of(call *c, char name) { return name == 'm' ? &c->m : name == 'n' ? &c->n : &c->k; }
static int *ld_of(call *c, char name) { return name == 'a' ? &c->lda : name == 'b' ? &c->ldb : &c->ldc; }

static call good(int family, int dbl, int api) {
  call c = {family, dbl, api, 0, {0, 0, 0, 0}, 2, 2, 2, 2, 2, 2};
  return c;
}

static void add(int *count, int which, call *chosen, const call *c) {
  if (++*count == which) *chosen = *c;
}

/* Every case, in order; returns how many. Stores case WHICH (from 1) in *chosen. */
static int cases(int which, call *chosen) {
  int count = 0;
  for (int family = 0; family < FAMILIES; ++family)
    for (int dbl = family == GEMM ? 1 : 0; dbl < 2; ++dbl)
      for (int api = FORTRAN; api <= ROW; ++api) {
        const char *sizes = sizes_used[family], *lds = lds_used[family];
        const int lds_count = (int)strlen(lds);
        call c = good(family, dbl, api);
        if (api != FORTRAN) {
          c.bad_layout = 1;
          add(&count, which, chosen, &c);
        }
        for (int o = 0; o < option_count[family]; ++o) {
          c = good(family, dbl, api);
          c.option[o] = -1;
          add(&count, which, chosen, &c);
        }
        for (const char *s = sizes; *s; ++s) {
          c = good(family, dbl, api);
          *size_of(&c, *s) = -1;
          add(&count, which, chosen, &c);
        }
        for (const char *l = lds; *l; ++l) {
          c = good(family, dbl, api);
          *ld_of(&c, *l) = 1;
          add(&count, which, chosen, &c);
        }
        for (const char *l = lds; *l; ++l) {
          c = good(family, dbl, api);
          c.m = c.n = c.k = 0;
          c.lda = c.ldb = c.ldc = 1;
          *ld_of(&c, *l) = 0;
          add(&count, which, chosen, &c);
        }
        for (int combination = 0; combination < 1 << option_count[family]; ++combination)
          for (int l = 0; l < lds_count; ++l) {
            c = good(family, dbl, api);
            for (int o = 0; o < option_count[family]; ++o) c.option[o] = (combination >> o) & 1;
            c.m = 3, c.n = 5, c.k = 4;
            c.lda = c.ldb = c.ldc = 8;
            if (l + 1 < lds_count) {
              *ld_of(&c, lds[l]) = 4;
              *ld_of(&c, lds[lds_count - 1]) = 0;
            } else {
              *ld_of(&c, lds[l]) = 2;
            }
            add(&count, which, chosen, &c);
          }
      }
  return count;
}

static void run(const call *c) {
  static float fs[64];
  static double ds[64];
  const float fa = 1.0f, fb = 0.0f;
  const double da = 1.0, db = 0.0;
  char o[4];
  int v[4];
  for (int i = 0; i < 4; ++i) o[i] = option_letter(c->family, i < option_count[c->family] ? i : 0, c->option[i]);
  for (int i = 0; i < 4; ++i) v[i] = option_value(c->family, i < option_count[c->family] ? i : 0, c->option[i]);
  const CBLAS_LAYOUT layout = c->bad_layout ? (CBLAS_LAYOUT)7 : c->api == ROW ? CblasRowMajor : CblasColMajor;
  const int m = c->m, n = c->n, k = c->k, lda = c->lda, ldb = c->ldb, ldc = c->ldc;
  if (c->api == FORTRAN) {
    switch (c->family * 2 + c->dbl) {
      case GEMM * 2 + 1: dgemm_(&o[0], &o[1], &m, &n, &k, &da, ds, &lda, ds, &ldb, &db, ds, &ldc); break;
      case SYMM * 2: ssymm_(&o[0], &o[1], &m, &n, &fa, fs, &lda, fs, &ldb, &fb, fs, &ldc); break;
      case SYMM * 2 + 1: dsymm_(&o[0], &o[1], &m, &n, &da, ds, &lda, ds, &ldb, &db, ds, &ldc); break;
      case SYRK * 2: ssyrk_(&o[0], &o[1], &n, &k, &fa, fs, &lda, &fb, fs, &ldc); break;
      case SYRK * 2 + 1: dsyrk_(&o[0], &o[1], &n, &k, &da, ds, &lda, &db, ds, &ldc); break;
      case SYR2K * 2: ssyr2k_(&o[0], &o[1], &n, &k, &fa, fs, &lda, fs, &ldb, &fb, fs, &ldc); break;
      case SYR2K * 2 + 1: dsyr2k_(&o[0], &o[1], &n, &k, &da, ds, &lda, ds, &ldb, &db, ds, &ldc); break;
      case TRMM * 2: strmm_(&o[0], &o[1], &o[2], &o[3], &m, &n, &fa, fs, &lda, fs, &ldb); break;
      case TRMM * 2 + 1: dtrmm_(&o[0], &o[1], &o[2], &o[3], &m, &n, &da, ds, &lda, ds, &ldb); break;
      case TRSM * 2: strsm_(&o[0], &o[1], &o[2], &o[3], &m, &n, &fa, fs, &lda, fs, &ldb); break;
      case TRSM * 2 + 1: dtrsm_(&o[0], &o[1], &o[2], &o[3], &m, &n, &da, ds, &lda, ds, &ldb); break;
    }
    return;
  }
  switch (c->family * 2 + c->dbl) {
    case GEMM * 2 + 1: cblas_dgemm(layout, v[0], v[1], m, n, k, da, ds, lda, ds, ldb, db, ds, ldc); break;
    case SYMM * 2: cblas_ssymm(layout, v[0], v[1], m, n, fa, fs, lda, fs, ldb, fb, fs, ldc); break;
    case SYMM * 2 + 1: cblas_dsymm(layout, v[0], v[1], m, n, da, ds, lda, ds, ldb, db, ds, ldc); break;
    case SYRK * 2: cblas_ssyrk(layout, v[0], v[1], n, k, fa, fs, lda, fb, fs, ldc); break;
    case SYRK * 2 + 1: cblas_dsyrk(layout, v[0], v[1], n, k, da, ds, lda, db, ds, ldc); break;
    case SYR2K * 2: cblas_ssyr2k(layout, v[0], v[1], n, k, fa, fs, lda, fs, ldb, fb, fs, ldc); break;
    case SYR2K * 2 + 1: cblas_dsyr2k(layout, v[0], v[1], n, k, da, ds, lda, ds, ldb, db, ds, ldc); break;
    case TRMM * 2: cblas_strmm(layout, v[0], v[1], v[2], v[3], m, n, fa, fs, lda, fs, ldb); break;
    case TRMM * 2 + 1: cblas_dtrmm(layout, v[0], v[1], v[2], v[3], m, n, da, ds, lda, ds, ldb); break;
    case TRSM * 2: cblas_strsm(layout, v[0], v[1], v[2], v[3], m, n, fa, fs, lda, fs, ldb); break;
    case TRSM * 2 + 1: cblas_dtrsm(layout, v[0], v[1], v[2], v[3], m, n, da, ds, lda, ds, ldb); break;
  }
}

int main(int argc, char **argv) {
  call c;
  const int total = cases(0, &c);
  if (argc > 1 && strcmp(argv[1], "count") == 0) {
    printf("%d\n", total);
    return 0;
  }
  const int which = argc > 1 ? atoi(argv[1]) : 0;
  if (which < 1 || which > total) {
    fprintf(stderr, "parameters_level3: no case %d\n", which);
    return 2;
  }
  (void)cases(which, &c);
  static const char *const api_names[3] = {"", "cblas_", "cblas_"};
  printf("parameters_level3: case %d: %s%c%s%s%s, options %d %d %d %d, m=%d n=%d k=%d lda=%d ldb=%d ldc=%d\n", which,
         api_names[c.api], c.dbl ? 'd' : 's', family_name[c.family], c.api == FORTRAN ? "_" : "",
         c.api == ROW ? " row-major" : "", c.option[0], c.option[1], c.option[2], c.option[3], c.m, c.n, c.k, c.lda,
         c.ldb, c.ldc);
  fflush(stdout);
  run(&c);
  printf("parameters_level3: case %d returned\n", which);
  return 0;
}
