/* SPDX-License-Identifier: Apache-2.0 */
/* The private interface of libfastgemm_blas_dgemm.so: libfastgemm_blas's double-precision products on the GPU,
   over operands in host memory of any size (or any other memory), as FP64 products of tiles streamed by the host
   engine of fg_sgemm_host (lib/host, instantiated for double): the library's own tiles at FG_REPRODUCIBLE_SHAPE,
   cuBLAS's DGEMM otherwise; and its trsm, trmm and symm whole on the device, in either precision (single precision
   with products the caller gives).

   Why a library of its own. libfastgemm.so exports exactly the functions of fastgemm.h, and the C ABI has no
   double-precision product, so the drop-in cannot reach the engine's FP64 instance through it. Linking the
   engine into libfastgemm_blas.so itself would load the CUDA runtime and cuBLAS with every program that preloads
   it (or bring a second, static CUDA runtime and cuBLAS resolved by hand). This library is built from the same
   objects of lib/core and lib/host as libfastgemm, linked to the same shared CUDA runtime and cuBLAS (one of each
   in the process, shared with libfastgemm.so where both are loaded), installed beside libfastgemm_blas.so, and
   opened by it with dlopen on the first double-precision product the GPU takes, as libfastgemm.so is on the first
   single-precision one. It is private: the functions below are for libfastgemm_blas.so of the same build, not for
   programs, and may change in any release.

   The functions mirror fastgemm.h's: statuses are fg_status_t, each failure leaves a message for
   fastgemm_blas_dgemm_last_error_message, nothing is printed, and nothing throws. A handle binds to the calling
   thread's current device and makes it current during each call. */
#ifndef FASTGEMM_BLAS_DGEMM_HOST_H
#define FASTGEMM_BLAS_DGEMM_HOST_H

#include <stdint.h>

#include "fastgemm/fastgemm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fastgemm_blas_dgemm_handle *fastgemm_blas_dgemm_t;

/* fg_create's: a handle on the current device; FG_STATUS_NO_DEVICE without one. */
fg_status_t fastgemm_blas_dgemm_create(fastgemm_blas_dgemm_t *handle);
/* fg_destroy's; NULL is FG_STATUS_SUCCESS. */
fg_status_t fastgemm_blas_dgemm_destroy(fastgemm_blas_dgemm_t handle);
/* fg_set_devices's: the devices each product's tiles are spread over. */
fg_status_t fastgemm_blas_dgemm_set_devices(fastgemm_blas_dgemm_t handle, const int *devices, int count);
/* FG_REPRODUCIBLE_SHAPE: k is never cut, each element of C the same sequence of FP64 mma steps over all of k
   whatever the product's shape (shape_reproducible.hpp; cuBLAS on devices before compute capability 8.0);
   FG_REPRODUCIBLE_RUN (the default): cuBLAS's DGEMM, k in chunks summed into C in k order. Either way C is bitwise
   the same whatever the schedule of the tiles and the number of devices (of one model): see dgemm_host.cpp. */
fg_status_t fastgemm_blas_dgemm_set_reproducibility(fastgemm_blas_dgemm_t handle, fg_reproducibility_t level);
/* C := alpha op(A) op(B) + beta C in FP64, fg_sgemm_host's semantics and checks for double operands, but for
   k == 0 or alpha == 0 (C := beta C, which the caller computes): FG_STATUS_NOT_SUPPORTED, C untouched. Synchronous.
   A failure before any tile ran (a bad argument or extent, no memory, no device) leaves C untouched. */
fg_status_t fastgemm_blas_dgemm_host(fastgemm_blas_dgemm_t handle, fg_layout_t layout, fg_op_t transa, fg_op_t transb,
                                     int64_t m, int64_t n, int64_t k, double alpha, const double *A, int64_t lda,
                                     const double *B, int64_t ldb, double beta, double *C, int64_t ldc);
/* dtrsm_, dtrmm_ and dsymm_ on the device (device_level3.hpp): A's stored triangle sent once and written out whole
   there where the routine needs it, B (and C for symm with beta != 0) through it in panels of 4096 of its
   independent lines (columns for side L, rows for side R). trsm: op(A) X = alpha B (side 'L') or X op(A) = alpha B
   ('R'), B overwritten by X, each panel solved by halves and blocks of 32 lines; trmm: B := alpha op(A) B or
   alpha B op(A); symm: C := alpha A B + beta C or alpha B A + beta C (C read only where beta != 0). Products are
   the handle's FP64 ones: at FG_REPRODUCIBLE_SHAPE a line of the output does not depend on the call's shape. The
   letters upper case as the reference's checks leave them ('C' taken as 'T'), m, n > 0, alpha != 0, lda at least
   the order, ldb and ldc at least m. On failure *done lines of the output (the first columns for side L, rows for
   side R) are the routine's and the others as given, unless *partial is 1 (a failure while a panel came back, which
   left lines of it part written). FG_STATUS_NOT_SUPPORTED, nothing written, where the device has no room for A and
   two panels. Synchronous. */
fg_status_t fastgemm_blas_dgemm_trsm_host(fastgemm_blas_dgemm_t handle, char side, char uplo, char transa, char diag,
                                          int64_t m, int64_t n, double alpha, const double *A, int64_t lda, double *B,
                                          int64_t ldb, int64_t *done, int *partial);
fg_status_t fastgemm_blas_dgemm_trmm_host(fastgemm_blas_dgemm_t handle, char side, char uplo, char transa, char diag,
                                          int64_t m, int64_t n, double alpha, const double *A, int64_t lda, double *B,
                                          int64_t ldb, int64_t *done, int *partial);
fg_status_t fastgemm_blas_dgemm_symm_host(fastgemm_blas_dgemm_t handle, char side, char uplo, int64_t m, int64_t n,
                                          double alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
                                          double beta, double *C, int64_t ldc, int64_t *done, int *partial);
/* dsyrk_ and dsyr2k_ on the device (device_level3.hpp): C := alpha A A^T + beta C or alpha A^T A + beta C (trans 'N'
   or 'T'; syr2k: alpha (A B^T + B A^T) + beta C or alpha (A^T B + B^T A) + beta C), only C's triangle uplo written;
   A (and B) n x k for 'N', k x n for 'T', sent once; C's triangle (with its diagonal blocks whole) sent where beta
   != 0, in panels of its columns, and its triangle sent back. Letters upper case, n, k > 0, alpha != 0, lda (ldb)
   at least A's (B's) rows, ldc at least n. On failure C is as given unless *partial is 1. FG_STATUS_NOT_SUPPORTED,
   nothing written, where the device has no room for A (and B) and two panels. Synchronous. */
fg_status_t fastgemm_blas_dgemm_syrk_host(fastgemm_blas_dgemm_t handle, char uplo, char trans, int64_t n, int64_t k,
                                          double alpha, const double *A, int64_t lda, double beta, double *C,
                                          int64_t ldc, int *partial);
fg_status_t fastgemm_blas_dgemm_syr2k_host(fastgemm_blas_dgemm_t handle, char uplo, char trans, int64_t n, int64_t k,
                                           double alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
                                           double beta, double *C, int64_t ldc, int *partial);
/* The single-precision forms, in one entry: `routine` 0 (trsm: B := X, C is B and ldc ldb; B and ldb unused), 1 (trmm,
   likewise), 2 (symm: C := alpha A B + beta C, or alpha B A + beta C), 3 (syrk: uplo, transa the trans, m the order
   n, n the depth k; side, diag, B and ldb unused; *done 0) or 4 (syr2k, likewise with B). Their products are the
   caller's: `product`, given `product_state`, enqueues C := alpha op(A) op(B) + beta C on device operands, row-major,
   on `stream`, and returns FG_STATUS_SUCCESS or a failure (libfastgemm_blas passes fg_sgemm with its thread's handle,
   whose math mode and reproducibility level they then follow). The rest as for double precision above. */
typedef fg_status_t (*fastgemm_blas_dgemm_float_product)(void *product_state, cudaStream_t stream, fg_op_t transa,
                                                         fg_op_t transb, int64_t m, int64_t n, int64_t k, float alpha,
                                                         const float *A, int64_t lda, const float *B, int64_t ldb,
                                                         float beta, float *C, int64_t ldc);
fg_status_t fastgemm_blas_dgemm_level3_float(fastgemm_blas_dgemm_t handle, int routine, char side, char uplo,
                                             char transa, char diag, int64_t m, int64_t n, float alpha, const float *A,
                                             int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                                             int64_t ldc, fastgemm_blas_dgemm_float_product product,
                                             void *product_state, int64_t *done, int *partial);
/* fg_status_name's. */
const char *fastgemm_blas_dgemm_status_name(fg_status_t status);
/* This thread's last failure, naming the function; "" if none. */
const char *fastgemm_blas_dgemm_last_error_message(void);

#ifdef __cplusplus
}
#endif

#endif /* FASTGEMM_BLAS_DGEMM_HOST_H */
