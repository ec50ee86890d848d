/* SPDX-License-Identifier: Apache-2.0 */
/* cublas_user passthrough: calls cuBLAS must compute itself, printed as hashes of their outputs. */
#include "cublas_user_support.h"

#include <stdio.h>
#include <stdlib.h>

/* ---------------------------------------------------------------------------------------------------------------- */
/* passthrough */

static void print_hash(const char *name, const float *device, size_t count) {
  float *host = xmalloc(sizeof(float) * count);
  copy_now(host, device, sizeof(float) * count, cudaMemcpyDeviceToHost, 0);
  printf("passthrough %s: %016llx\n", name, (unsigned long long)fnv1a(host, sizeof(float) * count));
  free(host);
}

/* Products whose precision or form is not FP32's emulated product, and one too small to be worth it: cuBLAS computes
   them all, so its bits are the same with the preload as without. */
int mode_passthrough(void) {
  const int m = 2048, n = 2048, k = 4096;
  const size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
  cublasHandle_t handle;
  cublasLtHandle_t lt;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasLtCreate(&lt));
  const size_t workspace_size = (size_t)32 << 20;
  void *workspace;
  CHECK_CUDA(cudaMalloc(&workspace, workspace_size));
  float *host = xmalloc(sizeof(float) * (mk > kn ? mk : kn));
  float *a, *b, *c, *c0;
  CHECK_CUDA(cudaMalloc((void **)&a, sizeof(float) * mk));
  CHECK_CUDA(cudaMalloc((void **)&b, sizeof(float) * kn));
  CHECK_CUDA(cudaMalloc((void **)&c, sizeof(float) * mn));
  CHECK_CUDA(cudaMalloc((void **)&c0, sizeof(float) * mn));
  fill_uniform(host, mk, 501);
  copy_now(a, host, sizeof(float) * mk, cudaMemcpyHostToDevice, 0);
  fill_uniform(host, kn, 502);
  copy_now(b, host, sizeof(float) * kn, cudaMemcpyHostToDevice, 0);
  fill_uniform(host, mn, 503);
  copy_now(c0, host, sizeof(float) * mn, cudaMemcpyHostToDevice, 0);
  free(host);
  gemm_t g = {CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, m, k, m, 0, 0, 0, 1.5f, -0.25f, a, b, c};
#define RESET_C() copy_now(c, c0, sizeof(float) * mn, cudaMemcpyDeviceToDevice, 0)

  static const struct {
    cublasMath_t mode;
    const char *name;
  } math_modes[] = {{CUBLAS_TF32_TENSOR_OP_MATH, "cublasSgemm_v2 CUBLAS_TF32_TENSOR_OP_MATH"},
                    {CUBLAS_PEDANTIC_MATH, "cublasSgemm_v2 CUBLAS_PEDANTIC_MATH"}};
  for (size_t i = 0; i < sizeof(math_modes) / sizeof(math_modes[0]); ++i) {
    RESET_C();
    CHECK_CUBLAS(cublasSetMathMode(handle, math_modes[i].mode));
    sgemm(handle, &g);
    CHECK_CUBLAS(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    print_hash(math_modes[i].name, c, mn);
  }

  static const struct {
    cublasComputeType_t compute;
    const char *name;
  } computes[] = {{CUBLAS_COMPUTE_32F_FAST_TF32, "cublasGemmEx CUBLAS_COMPUTE_32F_FAST_TF32"},
                  {CUBLAS_COMPUTE_32F_FAST_16F, "cublasGemmEx CUBLAS_COMPUTE_32F_FAST_16F"},
                  {CUBLAS_COMPUTE_32F_FAST_16BF, "cublasGemmEx CUBLAS_COMPUTE_32F_FAST_16BF"},
                  {CUBLAS_COMPUTE_32F_PEDANTIC, "cublasGemmEx CUBLAS_COMPUTE_32F_PEDANTIC"}};
  for (size_t i = 0; i < sizeof(computes) / sizeof(computes[0]); ++i) {
    RESET_C();
    CHECK_CUBLAS(cublasGemmEx(handle, g.ta, g.tb, m, n, k, &g.alpha, a, CUDA_R_32F, m, b, CUDA_R_32F, k, &g.beta, c,
                              CUDA_R_32F, m, computes[i].compute, CUBLAS_GEMM_DEFAULT));
    print_hash(computes[i].name, c, mn);
  }

  gemm_t small = {CUBLAS_OP_N, CUBLAS_OP_T, 256, 256, 256, 256, 256, 256, 0, 0, 0, 1.5f, -0.25f, a, b, c};
  RESET_C();
  sgemm(handle, &small);
  print_hash("cublasSgemm_v2 256x256x256", c, 256 * 256);

  /* Four 1024^3 products through arrays of pointers (in device memory, as cuBLAS reads them) into the operands. */
  const int nb = 1024, count = 4;
  const float *host_a[4], *host_b[4];
  float *host_c[4];
  for (int i = 0; i < count; ++i) {
    host_a[i] = a + (size_t)i * nb * nb;
    host_b[i] = b + (size_t)i * nb * nb;
    host_c[i] = c + (size_t)i * nb * nb;
  }
  const float **array_a, **array_b;
  float **array_c;
  CHECK_CUDA(cudaMalloc((void **)&array_a, sizeof(host_a)));
  CHECK_CUDA(cudaMalloc((void **)&array_b, sizeof(host_b)));
  CHECK_CUDA(cudaMalloc((void **)&array_c, sizeof(host_c)));
  copy_now(array_a, host_a, sizeof(host_a), cudaMemcpyHostToDevice, 0);
  copy_now(array_b, host_b, sizeof(host_b), cudaMemcpyHostToDevice, 0);
  copy_now(array_c, host_c, sizeof(host_c), cudaMemcpyHostToDevice, 0);
  RESET_C();
  CHECK_CUBLAS(cublasSgemmBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, nb, nb, nb, &g.alpha, array_a, nb, array_b, nb,
                                  &g.beta, array_c, nb, count));
  print_hash("cublasSgemmBatched 1024x1024x1024 batch=4", c, (size_t)count * nb * nb);
  CHECK_CUDA(cudaFree(array_a));
  CHECK_CUDA(cudaFree(array_b));
  CHECK_CUDA(cudaFree(array_c));

  RESET_C();
  lt_matmul(lt, &g, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLASLT_EPILOGUE_DEFAULT, NULL, workspace, workspace_size, 0);
  print_hash("cublasLtMatmul CUBLAS_COMPUTE_32F_FAST_TF32", c, mn);
  RESET_C();
  lt_matmul(lt, &g, CUBLAS_COMPUTE_32F, CUBLASLT_EPILOGUE_GELU, NULL, workspace, workspace_size, 0);
  print_hash("cublasLtMatmul CUBLASLT_EPILOGUE_GELU", c, mn);
#undef RESET_C

  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaFree(c));
  CHECK_CUDA(cudaFree(c0));
  CHECK_CUDA(cudaFree(workspace));
  CHECK_CUBLAS(cublasLtDestroy(lt));
  CHECK_CUBLAS(cublasDestroy(handle));
  return 0;
}
