// SPDX-License-Identifier: Apache-2.0
// libfastgemm_blas: the reference BLAS's Level 3 in single and double precision (Fortran and CBLAS) over
// fastgemm, for programs that are not changed (LD_PRELOAD, or linked ahead of the system BLAS). This file
// has sgemm_ and cblas_sgemm: their large products run on the GPU through fg_sgemm_host (fg_sgemm when
// every operand is device memory); small ones, and every one when no GPU is usable, go to the system BLAS
// (cpu_blas.hpp says how it is found). The other routines (fortran.cpp, cblas.cpp) check their arguments
// as the reference does (checks.hpp) and run where their family's function decides (level3.hpp): the
// large ones on the GPU, in double precision through libfastgemm_blas_dgemm.so (blas/dgemm/) in FP64.
//
// Environment:
//   FASTGEMM_BLAS_MIN_FLOPS  products of at least this many flops (2 m n k) run on the GPU, in either
//                            precision; unset: the default rule of gpu.cpp
//   FASTGEMM_BLAS_DEVICES    the devices a product in host memory is spread over: "all", or ordinals
//                            separated by commas ("0,1"); unset: the calling thread's current device
//   FASTGEMM_BLAS_REPRODUCIBLE  unset (or anything but 0): FG_REPRODUCIBLE_SHAPE, so that an element of C does
//                            not depend on the shape of the product it sits in, as with the reference BLAS
//                            (LAPACK compares blocks computed apart; products the system BLAS computes
//                            have its arithmetic, so this holds across all sizes with
//                            FASTGEMM_BLAS_MIN_FLOPS=0); 0: the library's own setting
//                            (FASTGEMM_REPRODUCIBLE, else run), which lets AUTO use cuBLAS and split k,
//                            and FASTGEMM_MATH=fp32_emulated the emulation (the shape level runs FP32).
//                            Double precision: k is then never cut and every element the same sequence of
//                            FP64 mma steps whatever the shape (blas/dgemm/shape_reproducible.hpp); 0 uses
//                            cuBLAS's DGEMM with k in chunks summed in k order; either way C does not depend
//                            on the tiles' schedule or the number of devices (blas/dgemm/dgemm_host.cpp)
//   FASTGEMM_BLAS_FALLBACK   the BLAS library (a path, or a name the loader finds) for the CPU's products
//                            when the process holds no other sgemm_
//   FASTGEMM_LOG=1           once, which BLAS serves the CPU's products; then one line per call on stderr
//                            saying where it ran
// (FASTGEMM_HOST_TILE, FASTGEMM_MATH and FASTGEMM_REPRODUCIBLE are read by libfastgemm itself; a value that
// names no setting makes fg_create fail, and every single-precision call then runs on the CPU.
// FASTGEMM_HOST_TILE, FASTGEMM_HOST_STAGING and FASTGEMM_HOST_WORKERS_PER_DEVICE are read by the host
// engine in both libraries.)
#include <cstddef>
#include <cstdio>

#include "checks.hpp"
#include "common.hpp"
#include "cpu_blas.hpp"
#include "gpu.hpp"
#include "level3.hpp"

#define FASTGEMM_BLAS_EXPORT extern "C" __attribute__((visibility("default")))

using namespace fastgemm_blas;

namespace {

// The CPU's column-major SGEMM, of arguments already checked: the system BLAS's sgemm_, else its
// cblas_sgemm, else the own loop (cpu_gemm, level3.hpp).
void cpu_sgemm(char transa, char transb, int m, int n, int k, float alpha, const float *A, int lda, const float *B,
               int ldb, float beta, float *C, int ldc) {
  cpu_gemm<float>(trans_letter(transa), trans_letter(transb), m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void log_cpu_call(const char *caller, int m, int n, int k) {
  if (settings().log)
    std::fprintf(stderr, "fastgemm_blas: %s m=%d n=%d k=%d on the CPU (%s)\n", caller, m, n, k, cpu_blas().name);
}

}  // namespace

FASTGEMM_BLAS_EXPORT void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                                 const float *alpha, const float *A, const int *lda, const float *B, const int *ldb,
                                 const float *beta, float *C, const int *ldc, size_t, size_t) {
  const int info = gemm_argument_error(*transa, *transb, *m, *n, *k, *lda, *ldb, *ldc);
  if (info != 0) {
    report_fortran_error("SGEMM ", info);
    return;
  }
  if (t_in_cpu_blas) {  // the CPU BLAS's own cblas_sgemm computing through sgemm_
    cpu_sgemm(*transa, *transb, *m, *n, *k, *alpha, A, *lda, B, *ldb, *beta, C, *ldc);
    return;
  }
  if (*m == 0 || *n == 0 || ((*alpha == 0.0f || *k == 0) && *beta == 1.0f)) return;
  const bool a_trans = trans_letter(*transa) == 'T', b_trans = trans_letter(*transb) == 'T';
  if (*k > 0 && *alpha != 0.0f && wants_gpu(*m, *n, *k) &&
      run_on_gpu("sgemm_", col_major, a_trans ? trans : no_trans, b_trans ? trans : no_trans, *m, *n, *k, *alpha, A,
                 *lda, B, *ldb, *beta, C, *ldc))
    return;
  log_cpu_call("sgemm_", *m, *n, *k);
  cpu_sgemm(*transa, *transb, *m, *n, *k, *alpha, A, *lda, B, *ldb, *beta, C, *ldc);
}

FASTGEMM_BLAS_EXPORT void cblas_sgemm(int layout, int transa, int transb, int m, int n, int k, float alpha,
                                      const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc) {
  const auto valid_trans = [](int op) { return op == no_trans || op == trans || op == conj_trans; };
  const bool row = layout == row_major;
  // The reference's checks and positions, its quirk included: in row-major an invalid TransB is reported
  // as parameter 2, the position TransB takes in the column-major call it becomes.
  if (layout != row_major && layout != col_major) {
    report_cblas_error(false, 1, "cblas_sgemm", "Illegal layout setting, %d\n", layout);
    return;
  }
  if (!valid_trans(transa)) {
    report_cblas_error(row, 2, "cblas_sgemm", "Illegal TransA setting, %d\n", transa);
    return;
  }
  if (!valid_trans(transb)) {
    report_cblas_error(row, row ? 2 : 3, "cblas_sgemm", "Illegal TransB setting, %d\n", transb);
    return;
  }
  const char fortran_transa = (row ? transb : transa) == no_trans ? 'N' : 'T';
  const char fortran_transb = (row ? transa : transb) == no_trans ? 'N' : 'T';
  const int fm = row ? n : m, fn = row ? m : n;
  const float *const fa = row ? B : A, *const fb = row ? A : B;
  const int flda = row ? ldb : lda, fldb = row ? lda : ldb;
  const int info = gemm_argument_error(fortran_transa, fortran_transb, fm, fn, k, flda, fldb, ldc);
  if (info != 0) {
    report_cblas_error(row, info + 1, "cblas_sgemm", "", 0);
    return;
  }
  if (m == 0 || n == 0 || ((alpha == 0.0f || k == 0) && beta == 1.0f)) return;
  if (k > 0 && alpha != 0.0f && wants_gpu(m, n, k) &&
      run_on_gpu("cblas_sgemm", layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
    return;
  log_cpu_call("cblas_sgemm", m, n, k);
  const CpuBlas &blas = cpu_blas();
  if (blas.cblas_sgemm != nullptr) {
    InCpuBlas inside;
    blas.cblas_sgemm(layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  cpu_sgemm(fortran_transa, fortran_transb, fm, fn, k, alpha, fa, flda, fb, fldb, beta, C, ldc);
}
