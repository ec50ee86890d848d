// SPDX-License-Identifier: Apache-2.0
// The GPU side of libfastgemm_blas: single-precision products through libfastgemm.so's fg_sgemm_host (fg_sgemm on
// device memory), double-precision ones through libfastgemm_blas_dgemm.so (blas/dgemm/), each library loaded on the
// first product of its precision large enough for the GPU (gpu_handles.hpp).
#pragma once

#include <cstdint>

#include "fastgemm/fastgemm.h"

namespace fastgemm_blas {

// Whether a product of these sizes goes to the GPU (FASTGEMM_BLAS_MIN_FLOPS, else the default rule), in either
// precision.
bool wants_gpu(int64_t m, int64_t n, int64_t k);

// Whether this thread has a handle on a GPU for products of T, float or double (made on the first call that asks):
// false without a usable device.
template <typename T>
bool gpu_available();
template <>
bool gpu_available<float>();
template <>
bool gpu_available<double>();

// A validated product with k > 0 and alpha != 0, in the CBLAS values, of a size wants_gpu accepted.
// Returns whether the GPU computed C; false means C is untouched and the CPU must compute it. Single precision runs
// in the math mode of libfastgemm's handles (FASTGEMM_MATH), double precision in FP64 (blas/dgemm/dgemm_host.h).
bool run_on_gpu(const char *caller, int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha,
                const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
bool run_on_gpu(const char *caller, int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, double alpha,
                const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc);

// dtrsm_, dtrmm_ and dsymm_ computed whole on the device (blas/dgemm/device_level3.hpp), for a call with alpha != 0
// of a size wants_gpu accepted, the letters upper case ('C' as 'T'). True when the output (B, C for symm) is the
// routine's; false with the first *done lines of it (columns for side L, rows for side R) the routine's and the others
// untouched, for the caller to compute. A failure that left lines part written (the device lost while the output
// came back) stops the process, as gpu_handles.hpp's products do.
// Single precision likewise, the products fg_sgemm's on this thread's libfastgemm handle (its math mode and
// reproducibility level), the rest in libfastgemm_blas_dgemm.so.
template <typename T>
bool trsm_on_gpu(const char *caller, char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha,
                 const T *A, int64_t lda, T *B, int64_t ldb, int64_t *done);
template <typename T>
bool trmm_on_gpu(const char *caller, char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha,
                 const T *A, int64_t lda, T *B, int64_t ldb, int64_t *done);
template <typename T>
bool symm_on_gpu(const char *caller, char side, char uplo, int64_t m, int64_t n, T alpha, const T *A, int64_t lda,
                 const T *B, int64_t ldb, T beta, T *C, int64_t ldc, int64_t *done);
// ?syrk_ and ?syr2k_ likewise (k > 0): true when C is the routine's, false with C untouched (B null for syrk).
template <typename T>
bool rank_k_on_gpu(const char *caller, char uplo, char trans, int64_t n, int64_t k, T alpha, const T *A, int64_t lda,
                   const T *B, int64_t ldb, T beta, T *C, int64_t ldc);

// For those single-precision routines: this thread's libfastgemm handle (nullptr without one), and the product they
// are given, fg_sgemm (row-major) with that handle on `stream` (its own stream put back after).
void *float_product_state();
fg_status_t float_device_product(void *state, cudaStream_t stream, fg_op_t transa, fg_op_t transb, int64_t m, int64_t n,
                                 int64_t k, float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                                 float beta, float *C, int64_t ldc);

}  // namespace fastgemm_blas
