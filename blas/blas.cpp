// SPDX-License-Identifier: Apache-2.0
// libfastgemm_blas: the reference BLAS's sgemm_ and CBLAS's cblas_sgemm over fastgemm, for programs that
// are not changed (LD_PRELOAD, or linked ahead of the system BLAS). Large products run on the GPU through
// fg_sgemm_host (fg_sgemm when every operand is device memory); small ones, and every one when no GPU is
// usable, go to the system BLAS (cpu_blas.hpp says how it is found).
//
// Environment:
//   FASTGEMM_BLAS_MIN_FLOPS  products of at least this many flops (2 m n k) run on the GPU; unset: the
//                            default rule of gpu.cpp
//   FASTGEMM_BLAS_DEVICES    the devices fg_sgemm_host spreads a product over: "all", or ordinals
//                            separated by commas ("0,1"); unset: the calling thread's current device
//   FASTGEMM_BLAS_REPRODUCIBLE  unset (or anything but 0): FG_REPRODUCIBLE_SHAPE, so that an element of C does
//                            not depend on the shape of the product it sits in, as with the reference BLAS
//                            (LAPACK compares blocks computed apart; products the system BLAS computes
//                            have its arithmetic, so this holds across all sizes with
//                            FASTGEMM_BLAS_MIN_FLOPS=0); 0: the library's own setting
//                            (FASTGEMM_REPRODUCIBLE, else run), which lets AUTO use cuBLAS and split k,
//                            and FASTGEMM_MATH=fp32_emulated the emulation (the shape level runs FP32)
//   FASTGEMM_BLAS_FALLBACK   the BLAS library (a path, or a name the loader finds) for the CPU's products
//                            when the process holds no other sgemm_
//   FASTGEMM_LOG=1           once, which BLAS serves the CPU's products; then one line per call on stderr
//                            saying where it ran
// (FASTGEMM_HOST_TILE, FASTGEMM_MATH and FASTGEMM_REPRODUCIBLE are read by the library itself; a value that
// names no setting makes fg_create fail, and every call then runs on the CPU.)
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "common.hpp"
#include "cpu_blas.hpp"
#include "gpu.hpp"

#define FASTGEMM_BLAS_EXPORT extern "C" __attribute__((visibility("default")))

using namespace fastgemm_blas;

namespace {

using FortranXerbla = void (*)(const char *, const int *, size_t);
using CblasXerbla = void (*)(int, const char *, const char *, ...);

// Set while this thread is inside the CPU BLAS: the reference cblas_sgemm computes through sgemm_, which
// the loader resolves to this library's; that inner call goes straight to the CPU BLAS, unlogged, so that
// each call the program makes is one line of the log.
thread_local bool t_in_cpu_blas = false;

class InCpuBlas {
 public:
  InCpuBlas() { t_in_cpu_blas = true; }
  ~InCpuBlas() { t_in_cpu_blas = false; }
};

bool fortran_trans(char value, bool *transposed) {
  switch (value) {
    case 'N':
    case 'n': *transposed = false; return true;
    case 'T':
    case 't':
    case 'C':
    case 'c': *transposed = true; return true;
  }
  return false;
}

// The reference SGEMM's checks, in its order; 0 when the arguments are good, else the position of the
// first bad one.
int sgemm_argument_error(char transa, char transb, int m, int n, int k, int lda, int ldb, int ldc) {
  bool a_trans = false, b_trans = false;
  if (!fortran_trans(transa, &a_trans)) return 1;
  if (!fortran_trans(transb, &b_trans)) return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < std::max(1, a_trans ? k : m)) return 8;
  if (ldb < std::max(1, b_trans ? n : k)) return 10;
  if (ldc < std::max(1, m)) return 13;
  return 0;
}

// The program's xerbla_ (netlib's tests define their own), else the CPU BLAS's, else the reference's
// message and stop.
void report_fortran_error(int info) {
  if (const auto xerbla = reinterpret_cast<FortranXerbla>(error_symbol("xerbla_"))) {
    xerbla("SGEMM ", &info, 6);
    return;
  }
  std::fprintf(stderr, " ** On entry to SGEMM  parameter number %2d had an illegal value\n", info);
  std::exit(EXIT_FAILURE);
}

// The reference cblas_sgemm turns a row-major call into the column-major SGEMM of the swapped operands;
// its cblas_xerbla, seeing CBLAS's RowMajorStrg set, maps that call's positions back to the row-major
// call's (M 4 and N 5, lda 9 and ldb 11 trade places). The program's cblas_xerbla (netlib's CBLAS tests
// define their own, which maps the same way) or the CPU BLAS's is called exactly so: the position as the
// reference passes it, with RowMajorStrg set for the call. Without any, the message is the one the
// reference's would print.
void report_cblas_error(bool row, int info, const char *message, int value) {
  if (const auto xerbla = reinterpret_cast<CblasXerbla>(error_symbol("cblas_xerbla"))) {
    int *const row_major_flag = static_cast<int *>(error_symbol("RowMajorStrg"));
    if (row_major_flag != nullptr) *row_major_flag = row ? 1 : 0;
    xerbla(info, "cblas_sgemm", message, value);
    if (row_major_flag != nullptr) *row_major_flag = 0;
    return;
  }
  if (row) {
    static const int row_major_position[15] = {0, 1, 2, 3, 5, 4, 6, 7, 8, 11, 10, 9, 12, 13, 14};
    if (info >= 0 && info < 15) info = row_major_position[info];
  }
  std::fprintf(stderr, "Parameter %d to routine cblas_sgemm was incorrect\n", info);
  std::fprintf(stderr, message, value);
  std::exit(-1);
}

// The CPU's column-major SGEMM, of arguments already checked: the system BLAS's sgemm_, else its
// cblas_sgemm, else the own loop.
void cpu_sgemm(char transa, char transb, int m, int n, int k, float alpha, const float *A, int lda, const float *B,
               int ldb, float beta, float *C, int ldc) {
  const CpuBlas &blas = cpu_blas();
  InCpuBlas inside;
  if (blas.sgemm != nullptr) {
    blas.sgemm(&transa, &transb, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
    return;
  }
  bool a_trans = false, b_trans = false;
  (void)fortran_trans(transa, &a_trans);
  (void)fortran_trans(transb, &b_trans);
  if (blas.cblas_sgemm != nullptr) {
    blas.cblas_sgemm(col_major, a_trans ? trans : no_trans, b_trans ? trans : no_trans, m, n, k, alpha, A, lda, B, ldb,
                     beta, C, ldc);
    return;
  }
  plain_sgemm(a_trans, b_trans, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void log_cpu_call(const char *caller, int m, int n, int k) {
  if (settings().log)
    std::fprintf(stderr, "fastgemm_blas: %s m=%d n=%d k=%d on the CPU (%s)\n", caller, m, n, k, cpu_blas().name);
}

}  // namespace

FASTGEMM_BLAS_EXPORT void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                                 const float *alpha, const float *A, const int *lda, const float *B, const int *ldb,
                                 const float *beta, float *C, const int *ldc, size_t, size_t) {
  const int info = sgemm_argument_error(*transa, *transb, *m, *n, *k, *lda, *ldb, *ldc);
  if (info != 0) {
    report_fortran_error(info);
    return;
  }
  if (t_in_cpu_blas) {  // the CPU BLAS's own cblas_sgemm computing through sgemm_
    cpu_sgemm(*transa, *transb, *m, *n, *k, *alpha, A, *lda, B, *ldb, *beta, C, *ldc);
    return;
  }
  if (*m == 0 || *n == 0 || ((*alpha == 0.0f || *k == 0) && *beta == 1.0f)) return;
  bool a_trans = false, b_trans = false;
  (void)fortran_trans(*transa, &a_trans);
  (void)fortran_trans(*transb, &b_trans);
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
    report_cblas_error(false, 1, "Illegal layout setting, %d\n", layout);
    return;
  }
  if (!valid_trans(transa)) {
    report_cblas_error(row, 2, "Illegal TransA setting, %d\n", transa);
    return;
  }
  if (!valid_trans(transb)) {
    report_cblas_error(row, row ? 2 : 3, "Illegal TransB setting, %d\n", transb);
    return;
  }
  const char fortran_transa = (row ? transb : transa) == no_trans ? 'N' : 'T';
  const char fortran_transb = (row ? transa : transb) == no_trans ? 'N' : 'T';
  const int fm = row ? n : m, fn = row ? m : n;
  const float *const fa = row ? B : A, *const fb = row ? A : B;
  const int flda = row ? ldb : lda, fldb = row ? lda : ldb;
  const int info = sgemm_argument_error(fortran_transa, fortran_transb, fm, fn, k, flda, fldb, ldc);
  if (info != 0) {
    report_cblas_error(row, info + 1, "", 0);
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
