/* SPDX-License-Identifier: Apache-2.0 */
/* A program as a cuBLAS user writes one: FP32 products through cuBLAS's and cuBLASLt's entry points, checked against
   cuBLAS's own FP64 product of the same inputs. It knows nothing of fastgemm: the cublas.* tests run it with
   libfastgemm_cublas.so preloaded and without, and compare.

   cublas_user status       statuses of cublasCreate and of invalid calls (works without a GPU)
   cublas_user products     every FP32 entry point, transposes, scalars and Lt epilogues, against a bound
   cublas_user passthrough  calls cuBLAS must compute itself, as hashes of their outputs
   cublas_user capture      products captured into CUDA graphs and replayed on new operands
   cublas_user threads      handles and streams of several threads, two handles of one thread

   Every mode but status prints "SKIPPED: no CUDA device" and exits with 77 where no device is usable; a product
   outside its bound exits with 1. */
#include "cublas_user_support.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------------------------- */
/* status */

int mode_status(void) {
  cublasHandle_t handle = NULL;
  const cublasStatus_t created = cublasCreate(&handle);
  printf("cublasCreate: %d\n", (int)created);
  const float one = 1.0f, zero = 0.0f;
  /* A product the interposer would take, on no handle: the status must come before any use of the operands. */
  printf("cublasSgemm_v2 NULL handle 4096x4096x4096: %d\n",
         (int)cublasSgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 4096, 4096, 4096, &one, NULL, 4096, NULL, 4096, &zero,
                             NULL, 4096));
  if (created != CUBLAS_STATUS_SUCCESS) return 0;

  /* Real operands, so that a call accepted by mistake computes instead of faulting, and the statuses stay the
     comparison. */
  const int n = 4096;
  const size_t bytes = sizeof(float) * n * n;
  float *a, *b, *c;
  CHECK_CUDA(cudaMalloc((void **)&a, bytes));
  CHECK_CUDA(cudaMalloc((void **)&b, bytes));
  CHECK_CUDA(cudaMalloc((void **)&c, bytes));
  CHECK_CUDA(cudaMemset(a, 0, bytes));
  CHECK_CUDA(cudaMemset(b, 0, bytes));
  CHECK_CUDA(cudaMemset(c, 0, bytes));
  const cublasOperation_t N = CUBLAS_OP_N;
  printf("cublasSgemm_v2 m=-1: %d\n", (int)cublasSgemm_v2(handle, N, N, -1, n, n, &one, a, n, b, n, &zero, c, n));
  printf("cublasSgemm_v2 k=-1: %d\n", (int)cublasSgemm_v2(handle, N, N, n, n, -1, &one, a, n, b, n, &zero, c, n));
  printf("cublasSgemm_v2 lda=4095: %d\n",
         (int)cublasSgemm_v2(handle, N, N, n, n, n, &one, a, n - 1, b, n, &zero, c, n));
  printf("cublasSgemm_v2 ldb=4095: %d\n",
         (int)cublasSgemm_v2(handle, N, N, n, n, n, &one, a, n, b, n - 1, &zero, c, n));
  printf("cublasSgemm_v2 ldc=4095: %d\n",
         (int)cublasSgemm_v2(handle, N, N, n, n, n, &one, a, n, b, n, &zero, c, n - 1));
  printf("cublasSgemm_v2 transa=7: %d\n",
         (int)cublasSgemm_v2(handle, (cublasOperation_t)7, N, n, n, n, &one, a, n, b, n, &zero, c, n));
  printf("cublasSgemm_v2_64 m=-1: %d\n", (int)cublasSgemm_v2_64(handle, N, N, -1, n, n, &one, a, n, b, n, &zero, c, n));
  printf("cublasSgemmStridedBatched batch=-1: %d\n",
         (int)cublasSgemmStridedBatched(handle, N, N, n, n, n, &one, a, n, 0, b, n, 0, &zero, c, n, 0, -1));
  printf("cublasGemmEx A CUDA_R_16F, B and C CUDA_R_32F, CUBLAS_COMPUTE_32F: %d\n",
         (int)cublasGemmEx(handle, N, N, n, n, n, &one, a, CUDA_R_16F, n, b, CUDA_R_32F, n, &zero, c, CUDA_R_32F, n,
                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  /* Half operands into an FP32 C is a valid mixed-precision product, which is not FP32's to serve. */
  printf("cublasGemmEx A and B CUDA_R_16F, C CUDA_R_32F, CUBLAS_COMPUTE_32F: %d\n",
         (int)cublasGemmEx(handle, N, N, n, n, n, &one, a, CUDA_R_16F, n, b, CUDA_R_16F, n, &zero, c, CUDA_R_32F, n,
                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  printf("cublasSgemm_v2 m=0: %d\n", (int)cublasSgemm_v2(handle, N, N, 0, n, n, &one, a, n, b, n, &zero, c, n));
  printf("cudaDeviceSynchronize: %d\n", (int)cudaDeviceSynchronize());
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaFree(c));
  printf("cublasDestroy: %d\n", (int)cublasDestroy(handle));
  return 0;
}

/* ---------------------------------------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  /* Lines as they come: a harness that stops the program still sees the cases before. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  static const char *const modes[] = {"status", "products", "passthrough", "capture", "threads"};
  int mode = -1;
  for (int i = 0; argc == 2 && i < (int)(sizeof(modes) / sizeof(modes[0])); ++i)
    if (strcmp(argv[1], modes[i]) == 0) mode = i;
  if (mode < 0) {
    fprintf(stderr, "usage: %s status|products|passthrough|capture|threads\n", argv[0]);
    return 2;
  }
  if (mode == 0) return mode_status();
  if (!have_device()) {
    printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  switch (mode) {
    case 1: return mode_products();
    case 2: return mode_passthrough();
    case 3: return mode_capture();
    default: return mode_threads();
  }
}
