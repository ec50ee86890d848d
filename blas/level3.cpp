// SPDX-License-Identifier: Apache-2.0
#include "level3.hpp"

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

#include "common.hpp"
#include "composed.hpp"
#include "cpu_blas.hpp"
#include "gpu.hpp"
#include "plain.hpp"

namespace fastgemm_blas {
namespace {

// The system BLAS's routines, as they are called: the Fortran ones with the hidden lengths of their
// character arguments, the CBLAS ones with CBLAS's enumerations.
template <typename T>
using FortranGemm = void (*)(const char *, const char *, const int *, const int *, const int *, const T *, const T *,
                             const int *, const T *, const int *, const T *, T *, const int *, size_t, size_t);
template <typename T>
using FortranSymm = void (*)(const char *, const char *, const int *, const int *, const T *, const T *, const int *,
                             const T *, const int *, const T *, T *, const int *, size_t, size_t);
template <typename T>
using FortranSyrk = void (*)(const char *, const char *, const int *, const int *, const T *, const T *, const int *,
                             const T *, T *, const int *, size_t, size_t);
template <typename T>
using FortranSyr2k = void (*)(const char *, const char *, const int *, const int *, const T *, const T *, const int *,
                              const T *, const int *, const T *, T *, const int *, size_t, size_t);
template <typename T>
using FortranTriangular = void (*)(const char *, const char *, const char *, const char *, const int *, const int *,
                                   const T *, const T *, const int *, T *, const int *, size_t, size_t, size_t, size_t);
template <typename T>
using CblasGemm = void (*)(int, int, int, int, int, int, T, const T *, int, const T *, int, T, T *, int);
template <typename T>
using CblasSymm = void (*)(int, int, int, int, int, T, const T *, int, const T *, int, T, T *, int);
template <typename T>
using CblasSyrk = void (*)(int, int, int, int, int, T, const T *, int, T, T *, int);
template <typename T>
using CblasSyr2k = void (*)(int, int, int, int, int, T, const T *, int, const T *, int, T, T *, int);
template <typename T>
using CblasTriangular = void (*)(int, int, int, int, int, int, int, T, const T *, int, T *, int);

template <typename F>
F as(void *symbol) {
  return reinterpret_cast<F>(symbol);
}

int cblas_trans(char letter) { return letter == 'N' ? no_trans : trans; }
int cblas_side(char letter) { return letter == 'L' ? left : right; }
int cblas_uplo(char letter) { return letter == 'U' ? upper : lower; }
int cblas_diag(char letter) { return letter == 'U' ? unit : non_unit; }

// Whether the CPU BLAS's CBLAS form may be called. Inside the CPU BLAS already, it is not: a library with
// a CBLAS form and no Fortran routine, whose CBLAS form calls the Fortran name (this library's), would go
// round forever; the own loop computes that call.
bool cblas_usable(const CpuRoutine &routine, bool nested) { return routine.cblas != nullptr && !nested; }

// One line per call kept on the CPU under FASTGEMM_LOG=1, written whole: the fields (a printf format and its
// values) are the column-major call's. Nothing is formatted without the setting.
template <typename T>
void log_cpu_call(const Caller &caller, Family family, const char *format, ...) {
  if (!settings().log) return;
  char fields[96];
  va_list values;
  va_start(values, format);
  std::vsnprintf(fields, sizeof fields, format, values);
  va_end(values);
  std::fprintf(stderr, "fastgemm_blas: %s %s%s on the CPU (%s)\n", caller.name, fields,
               caller.row_major ? " (row-major, as column-major)" : "", cpu_routine<T>(family).name);
}

}  // namespace

// A call whose alpha is 0 (or whose k is 0) only scales its output by beta: the own loops (plain.hpp) make those
// calls as the reference does, reading neither A nor B, and with beta == 0 not the output either (NaN there
// becomes 0), whatever the system BLAS would make of them (some multiply the NaN of an unread operand by 0).

template <typename T>
void cpu_gemm(char transa, char transb, int m, int n, int k, T alpha, const T *A, int lda, const T *B, int ldb, T beta,
              T *C, int ldc) {
  if (alpha == T(0) || k == 0) return plain_gemm<T>(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  const CpuRoutine &routine = cpu_routine<T>(Family::gemm);
  const bool nested = t_in_cpu_blas;
  InCpuBlas inside;
  if (routine.fortran != nullptr)
    as<FortranGemm<T>>(routine.fortran)(&transa, &transb, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
  else if (cblas_usable(routine, nested))
    as<CblasGemm<T>>(routine.cblas)(col_major, cblas_trans(transa), cblas_trans(transb), m, n, k, alpha, A, lda, B, ldb,
                                    beta, C, ldc);
  else
    plain_gemm<T>(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <typename T>
void cpu_symm(char side, char uplo, int m, int n, T alpha, const T *A, int lda, const T *B, int ldb, T beta, T *C,
              int ldc) {
  if (alpha == T(0)) return plain_symm<T>(side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
  const CpuRoutine &routine = cpu_routine<T>(Family::symm);
  const bool nested = t_in_cpu_blas;
  InCpuBlas inside;
  if (routine.fortran != nullptr)
    as<FortranSymm<T>>(routine.fortran)(&side, &uplo, &m, &n, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
  else if (cblas_usable(routine, nested))
    as<CblasSymm<T>>(routine.cblas)(col_major, cblas_side(side), cblas_uplo(uplo), m, n, alpha, A, lda, B, ldb, beta, C,
                                    ldc);
  else
    plain_symm<T>(side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <typename T>
void cpu_syrk(char uplo, char trans, int n, int k, T alpha, const T *A, int lda, T beta, T *C, int ldc) {
  if (alpha == T(0) || k == 0) return plain_syrk<T>(uplo, trans, n, k, alpha, A, lda, beta, C, ldc);
  const CpuRoutine &routine = cpu_routine<T>(Family::syrk);
  const bool nested = t_in_cpu_blas;
  InCpuBlas inside;
  if (routine.fortran != nullptr)
    as<FortranSyrk<T>>(routine.fortran)(&uplo, &trans, &n, &k, &alpha, A, &lda, &beta, C, &ldc, 1, 1);
  else if (cblas_usable(routine, nested))
    as<CblasSyrk<T>>(routine.cblas)(col_major, cblas_uplo(uplo), cblas_trans(trans), n, k, alpha, A, lda, beta, C, ldc);
  else
    plain_syrk<T>(uplo, trans, n, k, alpha, A, lda, beta, C, ldc);
}

template <typename T>
void cpu_syr2k(char uplo, char trans, int n, int k, T alpha, const T *A, int lda, const T *B, int ldb, T beta, T *C,
               int ldc) {
  if (alpha == T(0) || k == 0) return plain_syr2k<T>(uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  const CpuRoutine &routine = cpu_routine<T>(Family::syr2k);
  const bool nested = t_in_cpu_blas;
  InCpuBlas inside;
  if (routine.fortran != nullptr)
    as<FortranSyr2k<T>>(routine.fortran)(&uplo, &trans, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
  else if (cblas_usable(routine, nested))
    as<CblasSyr2k<T>>(routine.cblas)(col_major, cblas_uplo(uplo), cblas_trans(trans), n, k, alpha, A, lda, B, ldb, beta,
                                     C, ldc);
  else
    plain_syr2k<T>(uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

// trmm and trsm, alike but for the routine: the system BLAS's Fortran form, else its CBLAS form, else `plain`.
template <typename T>
void cpu_triangular(Family family,
                    void (*plain)(char, char, char, char, int64_t, int64_t, T, const T *, int64_t, T *, int64_t),
                    char side, char uplo, char transa, char diag, int m, int n, T alpha, const T *A, int lda, T *B,
                    int ldb) {
  if (alpha == T(0)) return plain(side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
  const CpuRoutine &routine = cpu_routine<T>(family);
  const bool nested = t_in_cpu_blas;
  InCpuBlas inside;
  if (routine.fortran != nullptr)
    as<FortranTriangular<T>>(routine.fortran)(&side, &uplo, &transa, &diag, &m, &n, &alpha, A, &lda, B, &ldb, 1, 1, 1,
                                              1);
  else if (cblas_usable(routine, nested))
    as<CblasTriangular<T>>(routine.cblas)(col_major, cblas_side(side), cblas_uplo(uplo), cblas_trans(transa),
                                          cblas_diag(diag), m, n, alpha, A, lda, B, ldb);
  else
    plain(side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
}

template <typename T>
void cpu_trmm(char side, char uplo, char transa, char diag, int m, int n, T alpha, const T *A, int lda, T *B, int ldb) {
  cpu_triangular<T>(Family::trmm, plain_trmm<T>, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
}

template <typename T>
void cpu_trsm(char side, char uplo, char transa, char diag, int m, int n, T alpha, const T *A, int lda, T *B, int ldb) {
  cpu_triangular<T>(Family::trsm, plain_trsm<T>, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
}

namespace {

// The GPU's product for the composed routines (composed.hpp) and dgemm: in single precision fg_sgemm_host, or
// fg_sgemm on device memory, as sgemm_'s; in double precision fastgemm_blas_dgemm_host (gpu.hpp). It declines what
// only scales C (the CPU does that) and, like sgemm_'s, leaves C untouched whenever it declines.
template <typename T>
Product<T> gpu_product(const char *caller) {
  return [caller](char transa, char transb, int64_t m, int64_t n, int64_t k, T alpha, const T *A, int64_t lda,
                  const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {
    if (k == 0 || alpha == T(0)) return false;
    return run_on_gpu(caller, col_major, transa == 'N' ? no_trans : trans, transb == 'N' ? no_trans : trans, m, n, k,
                      alpha, A, lda, B, ldb, beta, C, ldc);
  };
}

// The CPU's product: the fallback of the routines that make several products (syrk, syr2k, trsm) once the GPU has
// declined one after another wrote part of the output.
template <typename T>
Product<T> cpu_product() {
  return [](char ta, char tb, int64_t pm, int64_t pn, int64_t pk, T pa, const T *a, int64_t pla, const T *b,
            int64_t plb, T pb, T *c, int64_t plc) {
    cpu_gemm<T>(ta, tb, static_cast<int>(pm), static_cast<int>(pn), static_cast<int>(pk), pa, a, static_cast<int>(pla),
                b, static_cast<int>(plb), pb, c, static_cast<int>(plc));
    return true;
  };
}

// The lines of the diagonal blocks of syrk, syr2k and trsm on the GPU: 1024, or FASTGEMM_HOST_TILE's edge where it is
// set.
int64_t gpu_block() {
  static const int64_t block = [] {
    const char *text = std::getenv("FASTGEMM_HOST_TILE");
    const long long tile = text != nullptr ? std::atoll(text) : 0;
    return tile > 0 ? static_cast<int64_t>(tile) : int64_t{1024};
  }();
  return block;
}

}  // namespace

// The families' choice, in either precision: dgemm, and symm, syrk, syr2k and trmm, of sizes the GPU takes (the same
// rule as sgemm_'s, over the product each becomes) run there, the latter as general products; trsm by blocks whose
// updates are products there; everything else on the CPU.

template <typename T>
void gemm(const Caller &caller, char transa, char transb, int m, int n, int k, T alpha, const T *A, int lda, const T *B,
          int ldb, T beta, T *C, int ldc) {
  if (wants_gpu(m, n, k) && gpu_product<T>(caller.name)(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
    return;
  log_cpu_call<T>(caller, Family::gemm, "m=%d n=%d k=%d", m, n, k);
  cpu_gemm<T>(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

namespace {

// After a routine computed on the device left all but its first `done` lines (columns for side L, rows for side R):
// the rest of `x` (B or C) and of the extents, a call of its own.
template <typename X>
void skip_lines(char side, int64_t done, X *&x, int ld) {
  x += side == 'L' ? done * static_cast<int64_t>(ld) : done;
}
void skip_extent(char side, int64_t done, int &m, int &n) { (side == 'L' ? n : m) -= static_cast<int>(done); }

}  // namespace

template <typename T>
void symm(const Caller &caller, char side, char uplo, int m, int n, T alpha, const T *A, int lda, const T *B, int ldb,
          T beta, T *C, int ldc) {
  // On the device whole (blas/dgemm/device_level3.hpp), A's triangle sent once and mirrored there, B and C through it
  // in panels; what it leaves (it declines where the device lacks the memory) as a general product with A written
  // out whole on the host.
  if (alpha != T(0) && wants_gpu(m, n, side == 'L' ? m : n) && gpu_available<T>()) {
    int64_t done = 0;
    if (symm_on_gpu<T>(caller.name, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc, &done)) return;
    skip_lines(side, done, B, ldb);
    skip_lines(side, done, C, ldc);
    skip_extent(side, done, m, n);
    if (m == 0 || n == 0) return;
  }
  if (wants_gpu(m, n, side == 'L' ? m : n) &&
      composed_symm<T>(gpu_product<T>(caller.name), side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc))
    return;
  log_cpu_call<T>(caller, Family::symm, "side=%c uplo=%c m=%d n=%d", side, uplo, m, n);
  cpu_symm<T>(side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <typename T>
void syrk(const Caller &caller, char uplo, char trans, int n, int k, T alpha, const T *A, int lda, T beta, T *C,
          int ldc) {
  // On the device whole (blas/dgemm/device_level3.hpp), A sent once and C's triangle once each way, in panels of its
  // columns; where it declines (the device lacks the memory), by halves of C through the host engine.
  if (alpha != T(0) && k > 0 && wants_gpu(n, n, k) && gpu_available<T>() &&
      rank_k_on_gpu<T>(caller.name, uplo, trans, n, k, alpha, A, lda, nullptr, 0, beta, C, ldc))
    return;
  if (wants_gpu(n, n, k) &&
      composed_syrk<T>(gpu_product<T>(caller.name), cpu_product<T>(), symmetric_update_block(gpu_block(), n, k, 1),
                       uplo, trans, n, k, alpha, A, lda, beta, C, ldc))
    return;
  log_cpu_call<T>(caller, Family::syrk, "uplo=%c trans=%c n=%d k=%d", uplo, trans, n, k);
  cpu_syrk<T>(uplo, trans, n, k, alpha, A, lda, beta, C, ldc);
}

template <typename T>
void syr2k(const Caller &caller, char uplo, char trans, int n, int k, T alpha, const T *A, int lda, const T *B, int ldb,
           T beta, T *C, int ldc) {
  // As syrk, A and B sent once, each panel of C two products.
  if (alpha != T(0) && k > 0 && B != nullptr && wants_gpu(n, n, k) && gpu_available<T>() &&
      rank_k_on_gpu<T>(caller.name, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
    return;
  if (wants_gpu(n, n, k) &&
      composed_syr2k<T>(gpu_product<T>(caller.name), cpu_product<T>(), symmetric_update_block(gpu_block(), n, k, 2),
                        uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
    return;
  log_cpu_call<T>(caller, Family::syr2k, "uplo=%c trans=%c n=%d k=%d", uplo, trans, n, k);
  cpu_syr2k<T>(uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <typename T>
void trmm(const Caller &caller, char side, char uplo, char transa, char diag, int m, int n, T alpha, const T *A,
          int lda, T *B, int ldb) {
  // On the device whole (blas/dgemm/device_level3.hpp), A's triangle sent once, B through it in panels, each
  // multiplied by halves of the triangle; what it leaves as a general product from A written out whole on the host
  // into a buffer, then copied into B.
  if (alpha != T(0) && wants_gpu(m, n, side == 'L' ? m : n) && gpu_available<T>()) {
    int64_t done = 0;
    if (trmm_on_gpu<T>(caller.name, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb, &done)) return;
    skip_lines(side, done, B, ldb);
    skip_extent(side, done, m, n);
    if (m == 0 || n == 0) return;
  }
  if (wants_gpu(m, n, side == 'L' ? m : n) &&
      composed_trmm<T>(gpu_product<T>(caller.name), side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb))
    return;
  log_cpu_call<T>(caller, Family::trmm, "side=%c uplo=%c transa=%c diag=%c m=%d n=%d", side, uplo, transa, diag, m, n);
  cpu_trmm<T>(side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
}

template <typename T>
void trsm(const Caller &caller, char side, char uplo, char transa, char diag, int m, int n, T alpha, const T *A,
          int lda, T *B, int ldb) {
  // The whole solve on the device (blas/dgemm/device_level3.hpp), A sent once and B through it in panels; lines it
  // leaves (it declines where the device lacks the memory) go the way below: diagonal blocks of 1024 lines
  // (FASTGEMM_HOST_TILE's edge where it is set, the testing knob that makes many small tiles) solved on the CPU, the
  // updates between them (all but about 1024 / order of the work) products on the GPU, by halves of the triangle
  // (composed.hpp), those the GPU declines on the CPU. alpha == 0 makes B zero without reading A (Inf there times a
  // zero of B is no NaN): the CPU's.
  if (alpha != T(0) && wants_gpu(m, n, side == 'L' ? m : n) && gpu_available<T>()) {
    int64_t done = 0;
    if (trsm_on_gpu<T>(caller.name, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb, &done)) return;
    skip_lines(side, done, B, ldb);
    skip_extent(side, done, m, n);
    if (m == 0 || n == 0) return;
    const BlockSolve<T> solve = [](char bs, char bu, char bt, char bd, int64_t bm, int64_t bn, T ba, const T *a,
                                   int64_t bla, T *b, int64_t blb) {
      cpu_trsm<T>(bs, bu, bt, bd, static_cast<int>(bm), static_cast<int>(bn), ba, a, static_cast<int>(bla), b,
                  static_cast<int>(blb));
    };
    composed_trsm<T>(gpu_product<T>(caller.name), cpu_product<T>(), solve, gpu_block(), side, uplo, transa, diag, m, n,
                     alpha, A, lda, B, ldb);
    return;
  }
  log_cpu_call<T>(caller, Family::trsm, "side=%c uplo=%c transa=%c diag=%c m=%d n=%d", side, uplo, transa, diag, m, n);
  cpu_trsm<T>(side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
}

#define FASTGEMM_BLAS_LEVEL3(T)                                                                                 \
  template void cpu_gemm<T>(char, char, int, int, int, T, const T *, int, const T *, int, T, T *, int);         \
  template void cpu_symm<T>(char, char, int, int, T, const T *, int, const T *, int, T, T *, int);              \
  template void cpu_syrk<T>(char, char, int, int, T, const T *, int, T, T *, int);                              \
  template void cpu_syr2k<T>(char, char, int, int, T, const T *, int, const T *, int, T, T *, int);             \
  template void cpu_trmm<T>(char, char, char, char, int, int, T, const T *, int, T *, int);                     \
  template void cpu_trsm<T>(char, char, char, char, int, int, T, const T *, int, T *, int);                     \
  template void symm<T>(const Caller &, char, char, int, int, T, const T *, int, const T *, int, T, T *, int);  \
  template void syrk<T>(const Caller &, char, char, int, int, T, const T *, int, T, T *, int);                  \
  template void syr2k<T>(const Caller &, char, char, int, int, T, const T *, int, const T *, int, T, T *, int); \
  template void trmm<T>(const Caller &, char, char, char, char, int, int, T, const T *, int, T *, int);         \
  template void trsm<T>(const Caller &, char, char, char, char, int, int, T, const T *, int, T *, int);
FASTGEMM_BLAS_LEVEL3(float)
FASTGEMM_BLAS_LEVEL3(double)
#undef FASTGEMM_BLAS_LEVEL3
template void gemm<double>(const Caller &, char, char, int, int, int, double, const double *, int, const double *, int,
                           double, double *, int);

}  // namespace fastgemm_blas
