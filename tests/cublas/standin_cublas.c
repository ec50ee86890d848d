/* SPDX-License-Identifier: Apache-2.0 */
/* A stand-in for cuBLAS (soname libcublas.so.<major>), for cublas.routing: a machine without a GPU can then run a
 * program "calling cuBLAS" under libfastgemm_cublas.so. It has the handle's settings the interposer queries and the
 * product entry points it forwards to; each product prints the arguments that reached it and computes nothing. */
#include <stdlib.h>

#include "routing_calls.h"

struct cublasContext {
  cublasMath_t math_mode;
  cublasPointerMode_t pointer_mode;
  cudaStream_t stream;
};

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
  if (handle == NULL) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = calloc(1, sizeof **handle);
  return *handle == NULL ? CUBLAS_STATUS_ALLOC_FAILED : CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  if (handle == NULL) return CUBLAS_STATUS_NOT_INITIALIZED;
  free(handle);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (handle == NULL) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode) {
  if (handle == NULL) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode == NULL) return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->math_mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode) {
  if (handle == NULL) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->pointer_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t *mode) {
  if (handle == NULL) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode == NULL) return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->pointer_mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  if (handle == NULL) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *stream) {
  if (handle == NULL) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (stream == NULL) return CUBLAS_STATUS_INVALID_VALUE;
  *stream = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t reached(const struct routing_gemm *g) {
  routing_print_gemm("real", g);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                              int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                              const float *beta, float *C, int ldc) {
  const struct routing_gemm g = {.entry = "cublasSgemm_v2",
                                 .handle = handle,
                                 .transa = transa,
                                 .transb = transb,
                                 .m = m,
                                 .n = n,
                                 .k = k,
                                 .alpha = alpha,
                                 .a = A,
                                 .lda = lda,
                                 .b = B,
                                 .ldb = ldb,
                                 .beta = beta,
                                 .c = C,
                                 .ldc = ldc};
  return reached(&g);
}

cublasStatus_t cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
                                 int64_t n, int64_t k, const float *alpha, const float *A, int64_t lda, const float *B,
                                 int64_t ldb, const float *beta, float *C, int64_t ldc) {
  const struct routing_gemm g = {.entry = "cublasSgemm_v2_64",
                                 .handle = handle,
                                 .transa = transa,
                                 .transb = transb,
                                 .m = m,
                                 .n = n,
                                 .k = k,
                                 .alpha = alpha,
                                 .a = A,
                                 .lda = lda,
                                 .b = B,
                                 .ldb = ldb,
                                 .beta = beta,
                                 .c = C,
                                 .ldc = ldc};
  return reached(&g);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const float *alpha, const float *A, int lda,
                                         long long int strideA, const float *B, int ldb, long long int strideB,
                                         const float *beta, float *C, int ldc, long long int strideC, int batchCount) {
  const struct routing_gemm g = {.entry = "cublasSgemmStridedBatched",
                                 .handle = handle,
                                 .transa = transa,
                                 .transb = transb,
                                 .m = m,
                                 .n = n,
                                 .k = k,
                                 .batch = batchCount,
                                 .alpha = alpha,
                                 .a = A,
                                 .lda = lda,
                                 .stride_a = strideA,
                                 .b = B,
                                 .ldb = ldb,
                                 .stride_b = strideB,
                                 .beta = beta,
                                 .c = C,
                                 .ldc = ldc,
                                 .stride_c = strideC};
  return reached(&g);
}

cublasStatus_t cublasSgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                            int64_t m, int64_t n, int64_t k, const float *alpha, const float *A,
                                            int64_t lda, long long int strideA, const float *B, int64_t ldb,
                                            long long int strideB, const float *beta, float *C, int64_t ldc,
                                            long long int strideC, int64_t batchCount) {
  const struct routing_gemm g = {.entry = "cublasSgemmStridedBatched_64",
                                 .handle = handle,
                                 .transa = transa,
                                 .transb = transb,
                                 .m = m,
                                 .n = n,
                                 .k = k,
                                 .batch = batchCount,
                                 .alpha = alpha,
                                 .a = A,
                                 .lda = lda,
                                 .stride_a = strideA,
                                 .b = B,
                                 .ldb = ldb,
                                 .stride_b = strideB,
                                 .beta = beta,
                                 .c = C,
                                 .ldc = ldc,
                                 .stride_c = strideC};
  return reached(&g);
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                  int n, int k, const float *alpha, const float *const Aarray[], int lda,
                                  const float *const Barray[], int ldb, const float *beta, float *const Carray[],
                                  int ldc, int batchCount) {
  const struct routing_gemm g = {.entry = "cublasSgemmBatched",
                                 .handle = handle,
                                 .transa = transa,
                                 .transb = transb,
                                 .m = m,
                                 .n = n,
                                 .k = k,
                                 .batch = batchCount,
                                 .alpha = alpha,
                                 .a = Aarray,
                                 .lda = lda,
                                 .b = Barray,
                                 .ldb = ldb,
                                 .beta = beta,
                                 .c = Carray,
                                 .ldc = ldc};
  return reached(&g);
}

cublasStatus_t cublasSgemmBatched_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                     int64_t m, int64_t n, int64_t k, const float *alpha, const float *const Aarray[],
                                     int64_t lda, const float *const Barray[], int64_t ldb, const float *beta,
                                     float *const Carray[], int64_t ldc, int64_t batchCount) {
  const struct routing_gemm g = {.entry = "cublasSgemmBatched_64",
                                 .handle = handle,
                                 .transa = transa,
                                 .transb = transb,
                                 .m = m,
                                 .n = n,
                                 .k = k,
                                 .batch = batchCount,
                                 .alpha = alpha,
                                 .a = Aarray,
                                 .lda = lda,
                                 .b = Barray,
                                 .ldb = ldb,
                                 .beta = beta,
                                 .c = Carray,
                                 .ldc = ldc};
  return reached(&g);
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void *alpha, const void *A, cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta, void *C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  const struct routing_gemm g = {.entry = "cublasGemmEx",
                                 .handle = handle,
                                 .transa = transa,
                                 .transb = transb,
                                 .m = m,
                                 .n = n,
                                 .k = k,
                                 .alpha = alpha,
                                 .a = A,
                                 .a_type = Atype,
                                 .lda = lda,
                                 .b = B,
                                 .b_type = Btype,
                                 .ldb = ldb,
                                 .beta = beta,
                                 .c = C,
                                 .c_type = Ctype,
                                 .ldc = ldc,
                                 .compute = computeType,
                                 .algo = algo};
  return reached(&g);
}

cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
                               int64_t n, int64_t k, const void *alpha, const void *A, cudaDataType Atype, int64_t lda,
                               const void *B, cudaDataType Btype, int64_t ldb, const void *beta, void *C,
                               cudaDataType Ctype, int64_t ldc, cublasComputeType_t computeType,
                               cublasGemmAlgo_t algo) {
  const struct routing_gemm g = {.entry = "cublasGemmEx_64",
                                 .handle = handle,
                                 .transa = transa,
                                 .transb = transb,
                                 .m = m,
                                 .n = n,
                                 .k = k,
                                 .alpha = alpha,
                                 .a = A,
                                 .a_type = Atype,
                                 .lda = lda,
                                 .b = B,
                                 .b_type = Btype,
                                 .ldb = ldb,
                                 .beta = beta,
                                 .c = C,
                                 .c_type = Ctype,
                                 .ldc = ldc,
                                 .compute = computeType,
                                 .algo = algo};
  return reached(&g);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
                                          int lda, long long int strideA, const void *B, cudaDataType Btype, int ldb,
                                          long long int strideB, const void *beta, void *C, cudaDataType Ctype, int ldc,
                                          long long int strideC, int batchCount, cublasComputeType_t computeType,
                                          cublasGemmAlgo_t algo) {
  const struct routing_gemm g = {.entry = "cublasGemmStridedBatchedEx",
                                 .handle = handle,
                                 .transa = transa,
                                 .transb = transb,
                                 .m = m,
                                 .n = n,
                                 .k = k,
                                 .batch = batchCount,
                                 .alpha = alpha,
                                 .a = A,
                                 .a_type = Atype,
                                 .lda = lda,
                                 .stride_a = strideA,
                                 .b = B,
                                 .b_type = Btype,
                                 .ldb = ldb,
                                 .stride_b = strideB,
                                 .beta = beta,
                                 .c = C,
                                 .c_type = Ctype,
                                 .ldc = ldc,
                                 .stride_c = strideC,
                                 .compute = computeType,
                                 .algo = algo};
  return reached(&g);
}

cublasStatus_t cublasGemmStridedBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                             int64_t m, int64_t n, int64_t k, const void *alpha, const void *A,
                                             cudaDataType Atype, int64_t lda, long long int strideA, const void *B,
                                             cudaDataType Btype, int64_t ldb, long long int strideB, const void *beta,
                                             void *C, cudaDataType Ctype, int64_t ldc, long long int strideC,
                                             int64_t batchCount, cublasComputeType_t computeType,
                                             cublasGemmAlgo_t algo) {
  const struct routing_gemm g = {.entry = "cublasGemmStridedBatchedEx_64",
                                 .handle = handle,
                                 .transa = transa,
                                 .transb = transb,
                                 .m = m,
                                 .n = n,
                                 .k = k,
                                 .batch = batchCount,
                                 .alpha = alpha,
                                 .a = A,
                                 .a_type = Atype,
                                 .lda = lda,
                                 .stride_a = strideA,
                                 .b = B,
                                 .b_type = Btype,
                                 .ldb = ldb,
                                 .stride_b = strideB,
                                 .beta = beta,
                                 .c = C,
                                 .c_type = Ctype,
                                 .ldc = ldc,
                                 .stride_c = strideC,
                                 .compute = computeType,
                                 .algo = algo};
  return reached(&g);
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                   int n, int k, const void *alpha, const void *const Aarray[], cudaDataType Atype,
                                   int lda, const void *const Barray[], cudaDataType Btype, int ldb, const void *beta,
                                   void *const Carray[], cudaDataType Ctype, int ldc, int batchCount,
                                   cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  const struct routing_gemm g = {.entry = "cublasGemmBatchedEx",
                                 .handle = handle,
                                 .transa = transa,
                                 .transb = transb,
                                 .m = m,
                                 .n = n,
                                 .k = k,
                                 .batch = batchCount,
                                 .alpha = alpha,
                                 .a = Aarray,
                                 .a_type = Atype,
                                 .lda = lda,
                                 .b = Barray,
                                 .b_type = Btype,
                                 .ldb = ldb,
                                 .beta = beta,
                                 .c = Carray,
                                 .c_type = Ctype,
                                 .ldc = ldc,
                                 .compute = computeType,
                                 .algo = algo};
  return reached(&g);
}

cublasStatus_t cublasGemmBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                      int64_t m, int64_t n, int64_t k, const void *alpha, const void *const Aarray[],
                                      cudaDataType Atype, int64_t lda, const void *const Barray[], cudaDataType Btype,
                                      int64_t ldb, const void *beta, void *const Carray[], cudaDataType Ctype,
                                      int64_t ldc, int64_t batchCount, cublasComputeType_t computeType,
                                      cublasGemmAlgo_t algo) {
  const struct routing_gemm g = {.entry = "cublasGemmBatchedEx_64",
                                 .handle = handle,
                                 .transa = transa,
                                 .transb = transb,
                                 .m = m,
                                 .n = n,
                                 .k = k,
                                 .batch = batchCount,
                                 .alpha = alpha,
                                 .a = Aarray,
                                 .a_type = Atype,
                                 .lda = lda,
                                 .b = Barray,
                                 .b_type = Btype,
                                 .ldb = ldb,
                                 .beta = beta,
                                 .c = Carray,
                                 .c_type = Ctype,
                                 .ldc = ldc,
                                 .compute = computeType,
                                 .algo = algo};
  return reached(&g);
}
