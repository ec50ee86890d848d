// SPDX-License-Identifier: Apache-2.0
// The double-precision path: libfastgemm_blas_dgemm.so (blas/dgemm/dgemm_host.h says why it is a library of its
// own), opened on the first double-precision product the GPU takes, as libfastgemm.so is for single precision. Its
// fastgemm_blas_dgemm_host takes operands in any memory (host arrays of any size, device memory too) and computes in
// FP64 on the tiles of the host engine that fg_sgemm_host uses (its own tiles at the drop-in's reproducible setting,
// cuBLAS's DGEMM otherwise).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "blas/dgemm/dgemm_host.h"
#include "common.hpp"
#include "gpu.hpp"
#include "gpu_handles.hpp"
#include "preload/loading.hpp"

namespace fastgemm_blas {
namespace {

struct DoubleLibrary : GpuLibrary<fastgemm_blas_dgemm_t> {
  decltype(&fastgemm_blas_dgemm_host) gemm_host = nullptr;
  decltype(&fastgemm_blas_dgemm_trsm_host) trsm_host = nullptr;
  decltype(&fastgemm_blas_dgemm_trmm_host) trmm_host = nullptr;
  decltype(&fastgemm_blas_dgemm_symm_host) symm_host = nullptr;
  decltype(&fastgemm_blas_dgemm_syrk_host) syrk_host = nullptr;
  decltype(&fastgemm_blas_dgemm_syr2k_host) syr2k_host = nullptr;
  decltype(&fastgemm_blas_dgemm_level3_float) level3_float = nullptr;
};

const DoubleLibrary *double_library() {
  static const DoubleLibrary *const loaded = load_gpu_library<DoubleLibrary>(
      FASTGEMM_BLAS_DGEMM_LIBRARY, "fastgemm_blas_dgemm_", "DGEMM",
      [](void *library, DoubleLibrary *gpu, std::string *missing) {
        fastgemm_preload::bind(library, "fastgemm_blas_dgemm_host", &gpu->gemm_host, missing);
        fastgemm_preload::bind(library, "fastgemm_blas_dgemm_trsm_host", &gpu->trsm_host, missing);
        fastgemm_preload::bind(library, "fastgemm_blas_dgemm_trmm_host", &gpu->trmm_host, missing);
        fastgemm_preload::bind(library, "fastgemm_blas_dgemm_symm_host", &gpu->symm_host, missing);
        fastgemm_preload::bind(library, "fastgemm_blas_dgemm_syrk_host", &gpu->syrk_host, missing);
        fastgemm_preload::bind(library, "fastgemm_blas_dgemm_syr2k_host", &gpu->syr2k_host, missing);
        fastgemm_preload::bind(library, "fastgemm_blas_dgemm_level3_float", &gpu->level3_float, missing);
      });
  return loaded;
}

const GpuLibrary<fastgemm_blas_dgemm_t> *double_handles() { return double_library(); }

std::atomic<bool> g_cpu_only{false};
thread_local ThreadHandle<fastgemm_blas_dgemm_t> t_handle(double_handles, &g_cpu_only, "DGEMM");

}  // namespace

template <>
bool gpu_available<double>() {
  return t_handle.get() != nullptr;
}

bool run_on_gpu(const char *caller, int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, double alpha,
                const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
  const fastgemm_blas_dgemm_t handle = t_handle.get();
  if (handle == nullptr) return false;
  const DoubleLibrary &gpu = *double_library();
  const fg_status_t status = gpu.gemm_host(handle, static_cast<fg_layout_t>(layout), static_cast<fg_op_t>(transa),
                                           static_cast<fg_op_t>(transb), m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  return gpu_product_done<fastgemm_blas_dgemm_t>(gpu, caller, m, n, k, "fastgemm_blas_dgemm_host", status, beta == 0.0);
}

namespace {

// A routine the device computed whole (`entry` returned `status`), logged under FASTGEMM_LOG=1 as the products are:
// true on success; false where the first *done lines are the routine's and the rest untouched. Lines left part
// written stop the process, as a product that failed after writing part of C does (gpu_handles.hpp).
bool device_routine_done(const DoubleLibrary &gpu, const char *caller, const char *entry, int64_t m, int64_t n,
                         int64_t k, fg_status_t status, int partial) {
  log_gpu_call(gpu, caller, m, n, k, entry, status);
  if (status == FG_STATUS_SUCCESS) return true;
  if (partial == 0) return false;
  std::fprintf(stderr, "fastgemm_blas: %s failed on the GPU after writing part of its output (%s: %s); stopping\n",
               caller, gpu.handles.status_name(status), gpu.handles.last_error_message());
  std::abort();
}

// `run(gpu, handle, &partial)` (one of the library's device routines, named `entry`) on this thread's handle; m, n
// and k as its log line gives them.
template <typename Run>
bool device_routine(const char *caller, const char *entry, int64_t m, int64_t n, int64_t k, int64_t *done, Run &&run) {
  *done = 0;
  const fastgemm_blas_dgemm_t handle = t_handle.get();
  if (handle == nullptr) return false;
  const DoubleLibrary &gpu = *double_library();
  int partial = 0;
  const fg_status_t status = run(gpu, handle, &partial);
  return device_routine_done(gpu, caller, entry, m, n, k, status, partial);
}

}  // namespace

template <>
bool trsm_on_gpu<double>(const char *caller, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                         double alpha, const double *A, int64_t lda, double *B, int64_t ldb, int64_t *done) {
  return device_routine(caller, "fastgemm_blas_dgemm_trsm_host", m, n, side == 'L' ? m : n, done,
                        [&](const DoubleLibrary &gpu, fastgemm_blas_dgemm_t handle, int *partial) {
                          return gpu.trsm_host(handle, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb, done,
                                               partial);
                        });
}

template <>
bool trmm_on_gpu<double>(const char *caller, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                         double alpha, const double *A, int64_t lda, double *B, int64_t ldb, int64_t *done) {
  return device_routine(caller, "fastgemm_blas_dgemm_trmm_host", m, n, side == 'L' ? m : n, done,
                        [&](const DoubleLibrary &gpu, fastgemm_blas_dgemm_t handle, int *partial) {
                          return gpu.trmm_host(handle, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb, done,
                                               partial);
                        });
}

template <>
bool symm_on_gpu<double>(const char *caller, char side, char uplo, int64_t m, int64_t n, double alpha, const double *A,
                         int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc,
                         int64_t *done) {
  return device_routine(caller, "fastgemm_blas_dgemm_symm_host", m, n, side == 'L' ? m : n, done,
                        [&](const DoubleLibrary &gpu, fastgemm_blas_dgemm_t handle, int *partial) {
                          return gpu.symm_host(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc, done,
                                               partial);
                        });
}

namespace {

// A single-precision routine (0 trsm, 1 trmm, 2 symm, 3 syrk, 4 syr2k) through libfastgemm_blas_dgemm.so, its products
// fg_sgemm's on this thread's libfastgemm handle: none, and nothing runs there.
bool float_routine(const char *caller, int routine, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                   float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                   int64_t ldc, int64_t *done) {
  *done = 0;
  void *const state = float_product_state();
  if (state == nullptr) return false;
  // Logged as the product it is: m x n x order, or for syrk and syr2k (m the order, n the depth) m x m x n.
  const bool rank_k = routine >= 3;
  return device_routine(caller, "fastgemm_blas_dgemm_level3_float", m, rank_k ? m : n,
                        rank_k        ? n
                        : side == 'L' ? m
                                      : n,
                        done, [&](const DoubleLibrary &gpu, fastgemm_blas_dgemm_t handle, int *partial) {
                          return gpu.level3_float(handle, routine, side, uplo, transa, diag, m, n, alpha, A, lda, B,
                                                  ldb, beta, C, ldc, float_device_product, state, done, partial);
                        });
}

}  // namespace

template <>
bool trsm_on_gpu<float>(const char *caller, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                        float alpha, const float *A, int64_t lda, float *B, int64_t ldb, int64_t *done) {
  return float_routine(caller, 0, side, uplo, transa, diag, m, n, alpha, A, lda, nullptr, 0, 0.0f, B, ldb, done);
}

template <>
bool trmm_on_gpu<float>(const char *caller, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                        float alpha, const float *A, int64_t lda, float *B, int64_t ldb, int64_t *done) {
  return float_routine(caller, 1, side, uplo, transa, diag, m, n, alpha, A, lda, nullptr, 0, 0.0f, B, ldb, done);
}

template <>
bool symm_on_gpu<float>(const char *caller, char side, char uplo, int64_t m, int64_t n, float alpha, const float *A,
                        int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc, int64_t *done) {
  return float_routine(caller, 2, side, uplo, 'N', 'N', m, n, alpha, A, lda, B, ldb, beta, C, ldc, done);
}

template <>
bool rank_k_on_gpu<double>(const char *caller, char uplo, char trans, int64_t n, int64_t k, double alpha,
                           const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C,
                           int64_t ldc) {
  int64_t done = 0;
  const bool two = B != nullptr;
  return device_routine(caller, two ? "fastgemm_blas_dgemm_syr2k_host" : "fastgemm_blas_dgemm_syrk_host", n, n, k,
                        &done, [&](const DoubleLibrary &gpu, fastgemm_blas_dgemm_t handle, int *partial) {
                          return two ? gpu.syr2k_host(handle, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                                                      partial)
                                     : gpu.syrk_host(handle, uplo, trans, n, k, alpha, A, lda, beta, C, ldc, partial);
                        });
}

template <>
bool rank_k_on_gpu<float>(const char *caller, char uplo, char trans, int64_t n, int64_t k, float alpha, const float *A,
                          int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  int64_t done = 0;
  return float_routine(caller, B != nullptr ? 4 : 3, 'L', uplo, trans, 'N', n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                       &done);
}

}  // namespace fastgemm_blas
