/* SPDX-License-Identifier: Apache-2.0 */
/* Times ScaLAPACK's P?GEMM, P?GETRF and P?POTRF on a P x Q grid of MPI ranks through whatever BLAS each rank has:
   the system BLAS, or libfastgemm_blas.so preloaded before it (with libfastgemm_pblas.so, PBLAS's block), so that
   the same unchanged program measures both. Order N, square blocks of NB, the matrices dealt from process (0, 0);
   elements set from their global indices (uniform in (-1, 1); symmetric with N added to the diagonal for P?POTRF),
   so that every grid computes the same problem. The best of REPEATS calls (the matrix set again before each
   factorization, outside the timing), each between two barriers; the flop counts are the usual ones (2N^3,
   2N^3/3, N^3/3). Then a check of the last call, in O(N^2): P?GEMM, |C x - A (B x)| / |A (B x)|; a
   factorization, the scaled residual |A x - b| / (eps N |A|_F |x|) of a solve with its factors, b = A x0.
   Rank 0 prints one line: routine, N, NB, grid, seconds, GFLOPS, the check and "ok" or "FAILED".

   cc -O2 pblas_timing.c -o pblas_timing -l:libscalapack-openmpi.so.2.2 -lm
   mpirun -np 2 -x LD_PRELOAD=/opt/fastgemm/lib/libfastgemm_blas.so:/opt/fastgemm/lib/libfastgemm_pblas.so \
          -x FASTGEMM_BLAS_MIN_FLOPS=0 ./pblas_timing sgemm 32768 256 2 1 3                                     */
#define _POSIX_C_SOURCE 199309L
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void Cblacs_pinfo(int *rank, int *ranks);
void Cblacs_get(int context, int what, int *value);
void Cblacs_gridinit(int *context, const char *order, int rows, int columns);
void Cblacs_gridinfo(int context, int *rows, int *columns, int *row, int *column);
void Cblacs_barrier(int context, const char *scope);
void Cblacs_gridexit(int context);
void Cblacs_exit(int keep_mpi);
void Cdgsum2d(int context, const char *scope, const char *top, int m, int n, double *a, int lda, int row_dest,
              int column_dest);
int numroc_(const int *n, const int *nb, const int *process, const int *source, const int *processes);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb, const int *row_source,
               const int *column_source, const int *context, const int *lld, int *info);
#define PGEMM(name)                                                                                                   \
  void name(const char *, const char *, const int *, const int *, const int *, const void *, const void *,            \
            const int *, const int *, const int *, const void *, const int *, const int *, const int *, const void *, \
            void *, const int *, const int *, const int *);
#define PGEMV(name)                                                                                                    \
  void name(const char *, const int *, const int *, const void *, const void *, const int *, const int *, const int *, \
            const void *, const int *, const int *, const int *, const int *, const void *, void *, const int *,       \
            const int *, const int *, const int *);
#define PGETRF(name) void name(const int *, const int *, void *, const int *, const int *, const int *, int *, int *);
#define PGETRS(name)                                                                                                  \
  void name(const char *, const int *, const int *, const void *, const int *, const int *, const int *, const int *, \
            void *, const int *, const int *, const int *, int *);
#define PPOTRF(name) void name(const char *, const int *, void *, const int *, const int *, const int *, int *);
#define PPOTRS(name)                                                                                             \
  void name(const char *, const int *, const int *, const void *, const int *, const int *, const int *, void *, \
            const int *, const int *, const int *, int *);
PGEMM(psgemm_)
PGEMM(pdgemm_)
PGEMV(psgemv_)
PGEMV(pdgemv_)
PGETRF(psgetrf_)
PGETRF(pdgetrf_)
PGETRS(psgetrs_)
PGETRS(pdgetrs_)
PPOTRF(pspotrf_)
PPOTRF(pdpotrf_)
PPOTRS(pspotrs_)
PPOTRS(pdpotrs_)

typedef struct {
  int context, rows, columns, row, column; /* the grid and this rank's place in it */
  int n, nb, double_precision;
  size_t element;
} Grid;

typedef struct {
  int desc[9];
  int local_rows, local_columns;
  void *data;
} Matrix;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Uniform in (-1, 1) from a global index pair: the same element on every grid. */
static double element(uint64_t i, uint64_t j, uint64_t seed) {
  uint64_t x = (i << 32) ^ j ^ (seed * 0x9E3779B97F4A7C15ull);
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return 2.0 * ((double)(x >> 11) / 9007199254740992.0) - 1.0 + 1.0 / 9007199254740992.0;
}

/* The global index of local index `local` of a process at `coordinate` of `count`, blocks of nb from 0. */
static int64_t global_index(int64_t local, int nb, int coordinate, int count) {
  return ((local / nb) * count + coordinate) * nb + local % nb;
}

static int make(const Grid *g, int columns, Matrix *m) {
  const int zero = 0, one_block = columns == 1 ? 1 : g->nb;
  m->local_rows = numroc_(&g->n, &g->nb, &g->row, &zero, &g->rows);
  m->local_columns = numroc_(&columns, &one_block, &g->column, &zero, &g->columns);
  int lld = m->local_rows > 1 ? m->local_rows : 1, info = 0;
  descinit_(m->desc, &g->n, &columns, &g->nb, &one_block, &zero, &zero, &g->context, &lld, &info);
  size_t count = (size_t)lld * (size_t)(m->local_columns > 0 ? m->local_columns : 1);
  m->data = malloc(count * g->element);
  return info == 0 && m->data != NULL;
}

/* Sets m's elements: `kind` 0 uniform, 1 symmetric with n on the diagonal. */
static void fill(const Grid *g, Matrix *m, uint64_t seed, int kind) {
  const int lld = m->desc[8];
  const int column_block = m->desc[5];
  for (int64_t lj = 0; lj < m->local_columns; ++lj) {
    const int64_t gj = global_index(lj, column_block, g->column, g->columns);
    for (int64_t li = 0; li < m->local_rows; ++li) {
      const int64_t gi = global_index(li, g->nb, g->row, g->rows);
      double v;
      if (kind == 1) {
        v = gi < gj ? element((uint64_t)gi, (uint64_t)gj, seed) : element((uint64_t)gj, (uint64_t)gi, seed);
        if (gi == gj) v += g->n;
      } else {
        v = element((uint64_t)gi, (uint64_t)gj, seed);
      }
      const size_t at = (size_t)lj * (size_t)lld + (size_t)li;
      if (g->double_precision)
        ((double *)m->data)[at] = v;
      else
        ((float *)m->data)[at] = (float)v;
    }
  }
}

/* The sum over the grid of the squares of m's elements (minus those of `minus`, when given). */
static double squares(const Grid *g, const Matrix *m, const Matrix *minus) {
  double sum = 0;
  const int lld = m->desc[8];
  for (int64_t lj = 0; lj < m->local_columns; ++lj)
    for (int64_t li = 0; li < m->local_rows; ++li) {
      const size_t at = (size_t)lj * (size_t)lld + (size_t)li;
      double v = g->double_precision ? ((double *)m->data)[at] : ((float *)m->data)[at];
      if (minus != NULL) v -= g->double_precision ? ((double *)minus->data)[at] : ((float *)minus->data)[at];
      sum += v * v;
    }
  Cdgsum2d(g->context, "All", " ", 1, 1, &sum, 1, -1, -1);
  return sum;
}

static void gemv(const Grid *g, const Matrix *a, const Matrix *x, Matrix *y) {
  const int one = 1;
  const double d_one = 1, d_zero = 0;
  const float s_one = 1, s_zero = 0;
  const void *alpha = g->double_precision ? (const void *)&d_one : (const void *)&s_one;
  const void *beta = g->double_precision ? (const void *)&d_zero : (const void *)&s_zero;
  (g->double_precision ? pdgemv_ : psgemv_)("N", &g->n, &g->n, alpha, a->data, &one, &one, a->desc, x->data, &one, &one,
                                            x->desc, &one, beta, y->data, &one, &one, y->desc, &one);
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s sgemm|dgemm|sgetrf|dgetrf|spotrf|dpotrf N NB P Q [REPEATS]\n", argv[0]);
    return 2;
  }
  const char *routine = argv[1];
  Grid g = {0};
  g.n = atoi(argv[2]);
  g.nb = atoi(argv[3]);
  g.rows = atoi(argv[4]);
  g.columns = atoi(argv[5]);
  const int repeats = argc > 6 ? atoi(argv[6]) : 1;
  g.double_precision = routine[0] == 'd';
  g.element = g.double_precision ? sizeof(double) : sizeof(float);
  const int is_gemm = strcmp(routine + 1, "gemm") == 0, is_getrf = strcmp(routine + 1, "getrf") == 0,
            is_potrf = strcmp(routine + 1, "potrf") == 0;
  if ((routine[0] != 's' && routine[0] != 'd') || !(is_gemm || is_getrf || is_potrf) || g.n < 1 || g.nb < 1 ||
      g.rows < 1 || g.columns < 1 || repeats < 1) {
    fprintf(stderr, "%s: bad arguments\n", argv[0]);
    return 2;
  }
  int rank = 0, ranks = 0;
  Cblacs_pinfo(&rank, &ranks);
  if (ranks != g.rows * g.columns) {
    if (rank == 0) fprintf(stderr, "%s: %d ranks for a %d x %d grid\n", argv[0], ranks, g.rows, g.columns);
    Cblacs_exit(0);
    return 2;
  }
  Cblacs_get(-1, 0, &g.context);
  Cblacs_gridinit(&g.context, "Row", g.rows, g.columns);
  Cblacs_gridinfo(g.context, &g.rows, &g.columns, &g.row, &g.column);

  Matrix a, b, c, x, y, z;
  int ok = make(&g, g.n, &a) && make(&g, 1, &x) && make(&g, 1, &y) && make(&g, 1, &z);
  if (is_gemm) ok = ok && make(&g, g.n, &b) && make(&g, g.n, &c);
  if (is_getrf || is_potrf) ok = ok && make(&g, g.n, &b); /* b holds A's copy for the check */
  int *pivots = malloc(((size_t)a.local_rows + (size_t)g.nb) * sizeof(int));
  if (!ok || pivots == NULL) {
    fprintf(stderr, "%s: rank %d: no memory\n", argv[0], rank);
    Cblacs_exit(0);
    return 1;
  }
  const int kind = is_potrf ? 1 : 0;
  fill(&g, &a, 1, kind);
  if (is_gemm) {
    fill(&g, &b, 2, 0);
    fill(&g, &c, 3, 0);
  }
  const int one = 1;
  const double d_one = 1, d_zero = 0;
  const float s_one = 1, s_zero = 0;
  const void *alpha = g.double_precision ? (const void *)&d_one : (const void *)&s_one;
  const void *beta = g.double_precision ? (const void *)&d_zero : (const void *)&s_zero;
  double best = 1e300;
  int info = 0;
  for (int r = 0; r < repeats; ++r) {
    if (!is_gemm && r > 0) fill(&g, &a, 1, kind);
    Cblacs_barrier(g.context, "All");
    const double start = now();
    if (is_gemm) {
      (g.double_precision ? pdgemm_ : psgemm_)("N", "N", &g.n, &g.n, &g.n, alpha, a.data, &one, &one, a.desc, b.data,
                                               &one, &one, b.desc, beta, c.data, &one, &one, c.desc);
    } else if (is_getrf) {
      (g.double_precision ? pdgetrf_ : psgetrf_)(&g.n, &g.n, a.data, &one, &one, a.desc, pivots, &info);
    } else {
      (g.double_precision ? pdpotrf_ : pspotrf_)("L", &g.n, a.data, &one, &one, a.desc, &info);
    }
    Cblacs_barrier(g.context, "All");
    const double seconds = now() - start;
    if (seconds < best) best = seconds;
  }

  double check = 0;
  int passed = info == 0;
  const double eps = g.double_precision ? DBL_EPSILON : FLT_EPSILON;
  fill(&g, &x, 4, 0);
  if (is_gemm) {
    gemv(&g, &c, &x, &y); /* y = C x */
    gemv(&g, &b, &x, &z); /* z = B x */
    gemv(&g, &a, &z, &x); /* x = A (B x) */
    check = sqrt(squares(&g, &y, &x) / squares(&g, &x, NULL));
    passed = passed && check < (g.double_precision ? 1e-10 : 1e-3);
  } else {
    fill(&g, &b, 1, kind); /* A again */
    gemv(&g, &b, &x, &y);  /* b = A x0 */
    memcpy(z.data, y.data, (size_t)y.local_rows * (size_t)y.local_columns * g.element);
    int solve_info = 0;
    if (is_getrf)
      (g.double_precision ? pdgetrs_ : psgetrs_)("N", &g.n, &one, a.data, &one, &one, a.desc, pivots, z.data, &one,
                                                 &one, z.desc, &solve_info);
    else
      (g.double_precision ? pdpotrs_ : pspotrs_)("L", &g.n, &one, a.data, &one, &one, a.desc, z.data, &one, &one,
                                                 z.desc, &solve_info);
    gemv(&g, &b, &z, &x); /* A x */
    const double residual = sqrt(squares(&g, &x, &y));
    check = residual / (eps * g.n * sqrt(squares(&g, &b, NULL)) * sqrt(squares(&g, &z, NULL)));
    passed = passed && solve_info == 0 && check < 16.0;
  }
  if (rank == 0) {
    const double n = g.n;
    const double flops = is_gemm ? 2 * n * n * n : is_getrf ? 2 * n * n * n / 3 : n * n * n / 3;
    printf("%-7s N=%d NB=%d grid=%dx%d seconds=%.3f GFLOPS=%.1f info=%d check=%.3g %s\n", routine, g.n, g.nb, g.rows,
           g.columns, best, flops / best * 1e-9, info, check, passed ? "ok" : "FAILED");
  }
  Cblacs_gridexit(g.context);
  Cblacs_exit(0);
  return passed ? 0 : 1;
}
