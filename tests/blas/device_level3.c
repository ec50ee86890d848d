/* SPDX-License-Identifier: Apache-2.0 */
/* ?trsm_, ?trmm_, ?symm_, ?syrk_ and ?syr2k_ (s and d) as a BLAS user calls them, on orders and line counts that cross
   the device solve's blocks of 32 lines, the panels of B (4096 lines, smaller at the ends of more than 8192) and the
   order (2048) from which trsm and trmm send A and B's first panel in pieces as the work reads them, for
   every side, triangle, transpose (N, T and C, upper and lower case) and diagonal: trsm's X is checked by its residual,
   trmm's and symm's results against the program's own sums, all in long double; the other triangle of A (and a unit
   diagonal) holds NaN that must not be read, symm's C holds NaN where beta is 0, and the rows past m of the output
   hold a value that must stay. Then the first lines of the output (columns for side L, rows for side R) are
   computed alone and compared bit for bit with the same lines of the whole call: the count of differing elements
   goes to stderr, for the test to require none where the calls ran on the GPU (a CPU BLAS may round a line by its
   neighbours). So does the count of single-precision elements that differ from a CPU model of the device's sequence
   (sequence_model.c), which must be none on the GPU too. It knows nothing of fastgemm; the test preloads
   libfastgemm_blas.so with every call sent to the GPU. DEVICE_LEVEL3_SMALL set keeps to the shapes of at most 100
   lines a side (1280 calls), for a run under a memory checker. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strsm_(const char *, const char *, const char *, const char *, const int *, const int *, const float *,
            const float *, const int *, float *, const int *, size_t, size_t, size_t, size_t);
void strmm_(const char *, const char *, const char *, const char *, const int *, const int *, const float *,
            const float *, const int *, float *, const int *, size_t, size_t, size_t, size_t);
void ssymm_(const char *, const char *, const int *, const int *, const float *, const float *, const int *,
            const float *, const int *, const float *, float *, const int *, size_t, size_t);
void dtrsm_(const char *, const char *, const char *, const char *, const int *, const int *, const double *,
            const double *, const int *, double *, const int *, size_t, size_t, size_t, size_t);
void dtrmm_(const char *, const char *, const char *, const char *, const int *, const int *, const double *,
            const double *, const int *, double *, const int *, size_t, size_t, size_t, size_t);
void dsymm_(const char *, const char *, const int *, const int *, const double *, const double *, const int *,
            const double *, const int *, const double *, double *, const int *, size_t, size_t);
void ssyrk_(const char *, const char *, const int *, const int *, const float *, const float *, const int *,
            const float *, float *, const int *, size_t, size_t);
void dsyrk_(const char *, const char *, const int *, const int *, const double *, const double *, const int *,
            const double *, double *, const int *, size_t, size_t);
void ssyr2k_(const char *, const char *, const int *, const int *, const float *, const float *, const int *,
             const float *, const int *, const float *, float *, const int *, size_t, size_t);
void dsyr2k_(const char *, const char *, const int *, const int *, const double *, const double *, const int *,
             const double *, const int *, const double *, double *, const int *, size_t, size_t);

static double uniform(unsigned long long *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*state >> 11) / 4503599627370496.0 - 1.0; /* 53 random bits in [-1, 1) */
}

static const double kKeep = 12345.5; /* the output's rows past m */

/* The single-precision routines as the drop-in computes them on the device at FG_REPRODUCIBLE_SHAPE, on the CPU
   (sequence_model.c, shape_sequence_sgemm.c's routines renamed). */
void sequence_strsm(const char *, const char *, const char *, const char *, const int *, const int *, const float *,
                    const float *, const int *, float *, const int *);
void sequence_strmm(const char *, const char *, const char *, const char *, const int *, const int *, const float *,
                    const float *, const int *, float *, const int *);
void sequence_ssymm(const char *, const char *, const int *, const int *, const float *, const float *, const int *,
                    const float *, const int *, const float *, float *, const int *);
void sequence_ssyrk(const char *, const char *, const int *, const int *, const float *, const float *, const int *,
                    const float *, float *, const int *);
void sequence_ssyr2k(const char *, const char *, const int *, const int *, const float *, const float *, const int *,
                     const float *, const int *, const float *, float *, const int *);
static long model_differ, model_compared;

#define REAL double
#define NAME(x) x##_d
#define PREFIX "d"
#define TRSM dtrsm_
#define TRMM dtrmm_
#define SYMM dsymm_
#define SYRK dsyrk_
#define SYR2K dsyr2k_
#define SEED 7
#define TOLERANCE 1e-14
#include "device_level3_body.h"
#undef REAL
#undef NAME
#undef PREFIX
#undef TRSM
#undef TRMM
#undef SYMM
#undef SYRK
#undef SYR2K
#undef SEED
#undef TOLERANCE

#define REAL float
#define NAME(x) x##_s
#define PREFIX "s"
#define TRSM strsm_
#define TRMM strmm_
#define SYMM ssymm_
#define SYRK ssyrk_
#define SYR2K ssyr2k_
#define SEED 11
#define TOLERANCE 1e-5
#define MODEL_TRSM sequence_strsm
#define MODEL_TRMM sequence_strmm
#define MODEL_SYMM sequence_ssymm
#define MODEL_SYRK sequence_ssyrk
#define MODEL_SYR2K sequence_ssyr2k
#include "device_level3_body.h"

int main(void) {
  int calls = 0, failed = 0;
  long differ = 0, compared = 0;
  run_d(&calls, &failed, &differ, &compared);
  run_s(&calls, &failed, &differ, &compared);
  fprintf(stderr, "device_level3: line bits: %ld of %ld differ\n", differ, compared);
  fprintf(stderr, "device_level3: sequence bits: %ld of %ld differ\n", model_differ, model_compared);
  printf("device_level3: %d calls checked, %d failed\n", calls, failed);
  return failed != 0;
}
