/* SPDX-License-Identifier: Apache-2.0 */
/* A profile of a program's Level 3 BLAS calls: preloaded FIRST (before libfastgemm_blas.so or any BLAS), it
   times every ?gemm_, ?symm_, ?syrk_, ?syr2k_, ?trmm_ and ?trsm_ call (s and d) and hands it on unchanged to the
   next definition, then at exit prints on stderr, per routine: calls, seconds inside, GFLOPS while inside, the
   mean order of the output (m x n elements) and the rate at which the output would cross a link both ways
   (8 m n bytes per call for s, 16 for d) if the call did nothing else; and the process's whole time beside the
   time in these calls. Each line starts with the MPI rank (OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID).

   cc -O2 -shared -fPIC blas_profile.c -o libblas_profile.so -ldl
   mpirun -np 2 -x LD_PRELOAD=./libblas_profile.so:/opt/fastgemm/lib/libfastgemm_blas.so ./app             */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { GEMM, SYMM, SYRK, SYR2K, TRMM, TRSM, FAMILIES };
static const char *const kNames[2][FAMILIES] = {{"sgemm_", "ssymm_", "ssyrk_", "ssyr2k_", "strmm_", "strsm_"},
                                                {"dgemm_", "dsymm_", "dsyrk_", "dsyr2k_", "dtrmm_", "dtrsm_"}};

typedef struct {
  _Atomic long long calls, nanoseconds;
  _Atomic double flops, elements;
} Tally;
static Tally g_tally[2][FAMILIES];
static double g_start;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void add(_Atomic double *sum, double value) {
  double seen = atomic_load(sum);
  while (!atomic_compare_exchange_weak(sum, &seen, seen + value)) {
  }
}

static void *next(int precision, int family) {
  static void *found[2][FAMILIES];
  if (found[precision][family] == NULL) found[precision][family] = dlsym(RTLD_NEXT, kNames[precision][family]);
  if (found[precision][family] == NULL) {
    fprintf(stderr, "blas_profile: no %s after this library\n", kNames[precision][family]);
    abort();
  }
  return found[precision][family];
}

static void record(int precision, int family, double seconds, double flops, double elements) {
  Tally *t = &g_tally[precision][family];
  atomic_fetch_add(&t->calls, 1);
  atomic_fetch_add(&t->nanoseconds, (long long)(seconds * 1e9));
  add(&t->flops, flops);
  add(&t->elements, elements);
}

typedef void (*Call13)(void *, void *, void *, void *, void *, void *, void *, void *, void *, void *, void *, void *,
                       void *, size_t, size_t, size_t, size_t);

/* Every routine's arguments are pointers (then the hidden lengths of its character arguments): the wrapper
   takes 13 and the lengths, and hands them all on. */
#define WRAP(name, precision, family, flops_expr, elements_expr)                                                 \
  void name(void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, \
            void *a11, void *a12, void *a13, size_t l1, size_t l2, size_t l3, size_t l4) {                       \
    const double start = now();                                                                                  \
    ((Call13)next(precision, family))(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, l1, l2, l3, l4);   \
    record(precision, family, now() - start, (flops_expr), (elements_expr));                                     \
  }
#define I(p) ((double)*(const int *)(p))
#define SIDE_ORDER(side, m, n) ((*(const char *)(side) == 'L' || *(const char *)(side) == 'l') ? I(m) : I(n))
/* gemm(ta, tb, m, n, k, ...); symm(side, uplo, m, n, ...); syrk(uplo, trans, n, k, ...); syr2k the same;
   trmm and trsm(side, uplo, transa, diag, m, n, ...). */
WRAP(sgemm_, 0, GEMM, 2 * I(a3) * I(a4) * I(a5), I(a3) * I(a4))
WRAP(dgemm_, 1, GEMM, 2 * I(a3) * I(a4) * I(a5), I(a3) * I(a4))
WRAP(ssymm_, 0, SYMM, 2 * I(a3) * I(a4) * SIDE_ORDER(a1, a3, a4), I(a3) * I(a4))
WRAP(dsymm_, 1, SYMM, 2 * I(a3) * I(a4) * SIDE_ORDER(a1, a3, a4), I(a3) * I(a4))
WRAP(ssyrk_, 0, SYRK, I(a3) * I(a3) * I(a4), I(a3) * I(a3))
WRAP(dsyrk_, 1, SYRK, I(a3) * I(a3) * I(a4), I(a3) * I(a3))
WRAP(ssyr2k_, 0, SYR2K, 2 * I(a3) * I(a3) * I(a4), I(a3) * I(a3))
WRAP(dsyr2k_, 1, SYR2K, 2 * I(a3) * I(a3) * I(a4), I(a3) * I(a3))
WRAP(strmm_, 0, TRMM, I(a5) * I(a6) * SIDE_ORDER(a1, a5, a6), I(a5) * I(a6))
WRAP(dtrmm_, 1, TRMM, I(a5) * I(a6) * SIDE_ORDER(a1, a5, a6), I(a5) * I(a6))
WRAP(strsm_, 0, TRSM, I(a5) * I(a6) * SIDE_ORDER(a1, a5, a6), I(a5) * I(a6))
WRAP(dtrsm_, 1, TRSM, I(a5) * I(a6) * SIDE_ORDER(a1, a5, a6), I(a5) * I(a6))

__attribute__((constructor)) static void begin(void) { g_start = now(); }

__attribute__((destructor)) static void report(void) {
  const char *rank = getenv("OMPI_COMM_WORLD_RANK");
  if (rank == NULL) rank = getenv("PMI_RANK");
  if (rank == NULL) rank = getenv("SLURM_PROCID");
  if (rank == NULL) rank = "-";
  double inside = 0;
  for (int p = 0; p < 2; ++p)
    for (int f = 0; f < FAMILIES; ++f) {
      const Tally *t = &g_tally[p][f];
      const long long calls = atomic_load(&t->calls);
      if (calls == 0) continue;
      const double seconds = 1e-9 * (double)atomic_load(&t->nanoseconds);
      const double elements = atomic_load(&t->elements);
      inside += seconds;
      fprintf(stderr,
              "blas_profile: rank %s: %-7s %7lld calls %9.3f s %9.1f GFLOPS, output %8.0f elements a call, "
              "%7.1f GB/s if it crossed both ways\n",
              rank, kNames[p][f], calls, seconds, atomic_load(&t->flops) / (seconds > 0 ? seconds : 1) * 1e-9,
              elements / (double)calls, elements * (p ? 16.0 : 8.0) / (seconds > 0 ? seconds : 1) * 1e-9);
    }
  fprintf(stderr, "blas_profile: rank %s: %.3f s in these calls of %.3f s\n", rank, inside, now() - g_start);
}
