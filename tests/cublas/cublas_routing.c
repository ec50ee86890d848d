/* SPDX-License-Identifier: Apache-2.0 */
/* The calls of cublas.routing: one of each kind of FP32 product call libfastgemm_cublas.so decides on, linked against
 * the stand-in cuBLAS and cuBLASLt (standin_cublas.c, standin_cublaslt.c), so that it runs without a GPU. For each
 * call it prints
 *   case <name> <entry> m=.. n=.. k=.. batch=..   the sizes the interposer's log line must give
 *   call <entry> <arguments>                      what it passes (routing_calls.h)
 *   status <cublasStatus_t>                       what the call returned
 * and "done" at the end; the stand-in prints "real <entry> <arguments>" for what reaches it. run_routing.cmake holds
 * what the interposer must decide for each case. No pointer to A, B or C is ever read: neither the interposer's
 * decision nor the stand-in reads them, and a call fastgemm would serve finds no device. */
#include <stdint.h>
#include <stdio.h>

#include "routing_calls.h"

/* Addresses that are only compared and printed. */
#define FAKE(address) ((void *)(uintptr_t)(address))
static void *const kA = FAKE(0x10000000), *const kB = FAKE(0x20000000), *const kC = FAKE(0x30000000),
                   *const kD = FAKE(0x40000000);

enum entry {
  SGEMM,
  SGEMM_64,
  SGEMM_STRIDED,
  SGEMM_STRIDED_64,
  SGEMM_BATCHED,
  SGEMM_BATCHED_64,
  GEMM_EX,
  GEMM_EX_64,
  GEMM_STRIDED_EX,
  GEMM_STRIDED_EX_64,
  GEMM_BATCHED_EX,
  GEMM_BATCHED_EX_64,
};

static const char *const kEntryNames[] = {
    "cublasSgemm_v2",
    "cublasSgemm_v2_64",
    "cublasSgemmStridedBatched",
    "cublasSgemmStridedBatched_64",
    "cublasSgemmBatched",
    "cublasSgemmBatched_64",
    "cublasGemmEx",
    "cublasGemmEx_64",
    "cublasGemmStridedBatchedEx",
    "cublasGemmStridedBatchedEx_64",
    "cublasGemmBatchedEx",
    "cublasGemmBatchedEx_64",
};

/* The handles the classic calls use, by their settings. */
enum handle {
  H_DEFAULT,
  H_TF32,
  H_PEDANTIC,
  H_TENSOR_OP,
  H_BF16X9,
  H_DISALLOW_REDUCTION,
  H_DEVICE_POINTERS,
  H_FP64_EMULATION,
  H_COUNT,
  H_NULL
};

/* A classic call. Zero means the ordinary value: a batch of 1 (strided and pointer-array forms: 2), leading
 * dimensions 1, 2 and 3 above the smallest (all different, so that one passed for another shows), the strides of
 * dense batches, FP32 operands, CUBLAS_COMPUTE_32F, alpha 1 and beta 0. */
struct classic_case {
  const char *name;
  enum entry entry;
  enum handle handle;
  cublasOperation_t transa, transb;
  long long m, n, k, batch, lda, ldb, ldc, stride_a, stride_b, stride_c;
  cudaDataType a_type, b_type, c_type;
  cublasComputeType_t compute;
  int alpha_zero, null_alpha;
};

/* m n k exactly 2^34, the smallest product of the emulation's rule; m, n and k apart, so that an argument passed in
 * another's place shows. */
#define LARGE .m = 2048, .n = 1024, .k = 8192

static const struct classic_case kClassic[] = {
    {.name = "sgemm_small", .entry = SGEMM, .m = 256, .n = 256, .k = 256},
    {.name = "sgemm_1024", .entry = SGEMM, .m = 1024, .n = 1024, .k = 1024},
    {.name = "sgemm_below_2_34", .entry = SGEMM, .m = 2048, .n = 1024, .k = 8191},
    {.name = "sgemm_large", .entry = SGEMM, LARGE},
    {.name = "sgemm_square", .entry = SGEMM, .m = 2048, .n = 2048, .k = 4096},
    {.name = "sgemm_tight_ld", .entry = SGEMM, LARGE, .lda = 2048, .ldb = 8192, .ldc = 2048},
    {.name = "sgemm_large_transposed", .entry = SGEMM, LARGE, .transa = CUBLAS_OP_T, .transb = CUBLAS_OP_C},
    {.name = "sgemm_tf32", .entry = SGEMM, .handle = H_TF32, .m = 2048, .n = 2048, .k = 4096},
    {.name = "sgemm_pedantic", .entry = SGEMM, .handle = H_PEDANTIC, LARGE},
    {.name = "sgemm_tensor_op", .entry = SGEMM, .handle = H_TENSOR_OP, LARGE},
    {.name = "sgemm_bf16x9", .entry = SGEMM, .handle = H_BF16X9, LARGE},
    {.name = "sgemm_disallow_reduction", .entry = SGEMM, .handle = H_DISALLOW_REDUCTION, LARGE},
    {.name = "sgemm_device_pointers", .entry = SGEMM, .handle = H_DEVICE_POINTERS, LARGE},
    {.name = "sgemm_device_pointers_small", .entry = SGEMM, .handle = H_DEVICE_POINTERS, .m = 256, .n = 256, .k = 256},
    {.name = "sgemm_device_pointers_null_alpha", .entry = SGEMM, .handle = H_DEVICE_POINTERS, LARGE, .null_alpha = 1},
    {.name = "sgemm_alpha_zero", .entry = SGEMM, LARGE, .alpha_zero = 1},
    {.name = "sgemm_null_alpha", .entry = SGEMM, LARGE, .null_alpha = 1},
    {.name = "sgemm_negative_m", .entry = SGEMM, .m = -5, .n = 1024, .k = 8192, .lda = 1, .ldc = 1},
    {.name = "sgemm_zero_k", .entry = SGEMM, .m = 2048, .n = 1024, .k = 0, .ldb = 1},
    {.name = "sgemm_bad_transpose", .entry = SGEMM, LARGE, .transa = (cublasOperation_t)7, .lda = 8192},
    {.name = "sgemm_small_lda", .entry = SGEMM, LARGE, .lda = 2047},
    /* op(A) = A^T: A is k x m, and lda = m is below k. */
    {.name = "sgemm_transposed_small_lda", .entry = SGEMM, LARGE, .transa = CUBLAS_OP_T, .lda = 2048},
    {.name = "sgemm_null_handle", .entry = SGEMM, .handle = H_NULL, LARGE},
    {.name = "sgemm64_small", .entry = SGEMM_64, .m = 256, .n = 320, .k = 384},
    {.name = "sgemm64_large", .entry = SGEMM_64, LARGE},
    {.name = "sgemm64_tf32", .entry = SGEMM_64, .handle = H_TF32, LARGE},
    {.name = "strided_large", .entry = SGEMM_STRIDED, LARGE},
    {.name = "strided_small", .entry = SGEMM_STRIDED, .m = 512, .n = 4096, .k = 8192},
    /* The batched rule: 2048^3 twice and 1024^3 16 times are 2^34 in all; 2048^3 alone and 1024^3 8 times are not
     * served, nor 64 products with an edge of 1023. */
    {.name = "strided_2048_twice", .entry = SGEMM_STRIDED, .m = 2048, .n = 2048, .k = 2048, .batch = 2},
    {.name = "strided_2048_once", .entry = SGEMM_STRIDED, .m = 2048, .n = 2048, .k = 2048, .batch = 1},
    {.name = "strided_1024_16_times", .entry = SGEMM_STRIDED, .m = 1024, .n = 1024, .k = 1024, .batch = 16},
    {.name = "strided_1024_8_times", .entry = SGEMM_STRIDED, .m = 1024, .n = 1024, .k = 1024, .batch = 8},
    {.name = "strided_1023_64_times", .entry = SGEMM_STRIDED, .m = 1024, .n = 1023, .k = 1024, .batch = 64},
    {.name = "strided_negative_stride", .entry = SGEMM_STRIDED, LARGE, .stride_c = -1},
    {.name = "strided_zero_batch", .entry = SGEMM_STRIDED, LARGE, .batch = -1},
    /* C's second batch starts inside the first */
    {.name = "strided_overlapping_c", .entry = SGEMM_STRIDED, LARGE, .stride_c = 1024},
    {.name = "sgemm_fp64_emulation_handle", .entry = SGEMM, .handle = H_FP64_EMULATION, LARGE},
    {.name = "strided64_large", .entry = SGEMM_STRIDED_64, LARGE},
    {.name = "strided64_pedantic", .entry = SGEMM_STRIDED_64, .handle = H_PEDANTIC, LARGE},
    {.name = "sgemm_batched", .entry = SGEMM_BATCHED, LARGE},
    {.name = "sgemm_batched64", .entry = SGEMM_BATCHED_64, LARGE},
    {.name = "gemmex_large", .entry = GEMM_EX, LARGE},
    {.name = "gemmex_small", .entry = GEMM_EX, .m = 256, .n = 320, .k = 384},
    {.name = "gemmex_fast_tf32", .entry = GEMM_EX, LARGE, .compute = CUBLAS_COMPUTE_32F_FAST_TF32},
    {.name = "gemmex_pedantic_compute", .entry = GEMM_EX, LARGE, .compute = CUBLAS_COMPUTE_32F_PEDANTIC},
    {.name = "gemmex_half_a", .entry = GEMM_EX, LARGE, .a_type = CUDA_R_16F},
    {.name = "gemmex_bf16_c", .entry = GEMM_EX, LARGE, .c_type = CUDA_R_16BF},
    {.name = "gemmex_tf32_handle", .entry = GEMM_EX, .handle = H_TF32, LARGE},
    {.name = "gemmex_alpha_zero", .entry = GEMM_EX, LARGE, .alpha_zero = 1},
    {.name = "gemmex64_large", .entry = GEMM_EX_64, LARGE},
    {.name = "gemmex64_fast_16f", .entry = GEMM_EX_64, LARGE, .compute = CUBLAS_COMPUTE_32F_FAST_16F},
    {.name = "strided_ex_large", .entry = GEMM_STRIDED_EX, LARGE},
    {.name = "strided_ex_half_b", .entry = GEMM_STRIDED_EX, LARGE, .b_type = CUDA_R_16F},
    {.name = "strided_ex64_large", .entry = GEMM_STRIDED_EX_64, LARGE},
    {.name = "strided_ex64_fast_16bf", .entry = GEMM_STRIDED_EX_64, LARGE, .compute = CUBLAS_COMPUTE_32F_FAST_16BF},
    {.name = "batched_ex", .entry = GEMM_BATCHED_EX, LARGE},
    {.name = "batched_ex64", .entry = GEMM_BATCHED_EX_64, LARGE},
};

static int failed(const char *what, cublasStatus_t status) {
  fprintf(stderr, "cublas_routing: %s returned %d\n", what, (int)status);
  return 1;
}

static int make_handles(cublasHandle_t handles[H_COUNT]) {
  static const struct {
    cublasMath_t math;
    cublasPointerMode_t pointers;
  } kSettings[H_COUNT] = {
      [H_DEFAULT] = {CUBLAS_DEFAULT_MATH, CUBLAS_POINTER_MODE_HOST},
      [H_TF32] = {CUBLAS_TF32_TENSOR_OP_MATH, CUBLAS_POINTER_MODE_HOST},
      [H_PEDANTIC] = {CUBLAS_PEDANTIC_MATH, CUBLAS_POINTER_MODE_HOST},
      [H_TENSOR_OP] = {CUBLAS_TENSOR_OP_MATH, CUBLAS_POINTER_MODE_HOST},
      [H_BF16X9] = {CUBLAS_FP32_EMULATED_BF16X9_MATH, CUBLAS_POINTER_MODE_HOST},
      [H_DISALLOW_REDUCTION] = {CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, CUBLAS_POINTER_MODE_HOST},
      [H_DEVICE_POINTERS] = {CUBLAS_DEFAULT_MATH, CUBLAS_POINTER_MODE_DEVICE},
      /* double precision's emulation (8, named by number as older toolkits lack it): FP32 products stay FP32 */
      [H_FP64_EMULATION] = {(cublasMath_t)8, CUBLAS_POINTER_MODE_HOST},
  };
  for (int i = 0; i < H_COUNT; ++i) {
    cublasStatus_t status = cublasCreate(&handles[i]);
    if (status == CUBLAS_STATUS_SUCCESS) status = cublasSetMathMode(handles[i], kSettings[i].math);
    if (status == CUBLAS_STATUS_SUCCESS) status = cublasSetPointerMode(handles[i], kSettings[i].pointers);
    if (status != CUBLAS_STATUS_SUCCESS) return failed("the handles' setup", status);
  }
  return 0;
}

static long long or_default(long long value, long long ordinary) { return value != 0 ? value : ordinary; }

static void begin(const char *name, const char *entry, long long m, long long n, long long k, long long batch) {
  printf("case %s %s m=%lld n=%lld k=%lld batch=%lld\n", name, entry, m, n, k, batch);
  fflush(stdout);
}

static void end(cublasStatus_t status) {
  printf("status %d\n", (int)status);
  fflush(stdout);
}

static void run_classic(const struct classic_case *c, cublasHandle_t handles[H_COUNT]) {
  static const float kOne = 1.0f, kZero = 0.0f;
  const enum entry e = c->entry;
  const int strided = e == SGEMM_STRIDED || e == SGEMM_STRIDED_64 || e == GEMM_STRIDED_EX || e == GEMM_STRIDED_EX_64;
  const int arrays = e == SGEMM_BATCHED || e == SGEMM_BATCHED_64 || e == GEMM_BATCHED_EX || e == GEMM_BATCHED_EX_64;
  const int ex = e >= GEMM_EX;
  const int a_t = c->transa != CUBLAS_OP_N, b_t = c->transb != CUBLAS_OP_N;
  const long long a_rows = a_t ? c->k : c->m, a_cols = a_t ? c->m : c->k;
  const long long b_rows = b_t ? c->n : c->k, b_cols = b_t ? c->k : c->n;
  struct routing_gemm g = {.entry = kEntryNames[e],
                           .handle = c->handle == H_NULL ? NULL : handles[c->handle],
                           .transa = c->transa,
                           .transb = c->transb,
                           .m = c->m,
                           .n = c->n,
                           .k = c->k,
                           .alpha = c->null_alpha   ? NULL
                                    : c->alpha_zero ? &kZero
                                                    : &kOne,
                           .a = kA,
                           .lda = or_default(c->lda, a_rows + 1),
                           .b = kB,
                           .ldb = or_default(c->ldb, b_rows + 2),
                           .beta = &kZero,
                           .c = kC,
                           .ldc = or_default(c->ldc, c->m + 3)};
  if (strided || arrays) g.batch = c->batch < 0 ? 0 : or_default(c->batch, 2);
  if (strided) {
    g.stride_a = or_default(c->stride_a, g.lda * a_cols);
    g.stride_b = or_default(c->stride_b, g.ldb * b_cols);
    g.stride_c = or_default(c->stride_c, g.ldc * c->n);
  }
  if (ex) {
    g.a_type = c->a_type, g.b_type = c->b_type, g.c_type = c->c_type;
    g.compute = or_default(c->compute, CUBLAS_COMPUTE_32F);
    g.algo = CUBLAS_GEMM_DEFAULT;
  }
  begin(c->name, g.entry, g.m, g.n, g.k, (strided || arrays) ? g.batch : 1);
  routing_print_gemm("call", &g);
  cublasHandle_t h = (cublasHandle_t)g.handle;
  const cublasOperation_t ta = (cublasOperation_t)g.transa, tb = (cublasOperation_t)g.transb;
  const cudaDataType at = (cudaDataType)g.a_type, bt = (cudaDataType)g.b_type, ct = (cudaDataType)g.c_type;
  const cublasComputeType_t compute = (cublasComputeType_t)g.compute;
  const cublasGemmAlgo_t algo = (cublasGemmAlgo_t)g.algo;
  const float *alpha = g.alpha, *beta = g.beta;
  const int m = (int)g.m, n = (int)g.n, k = (int)g.k, lda = (int)g.lda, ldb = (int)g.ldb, ldc = (int)g.ldc,
            batch = (int)g.batch;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  switch (e) {
    case SGEMM: status = cublasSgemm(h, ta, tb, m, n, k, alpha, kA, lda, kB, ldb, beta, kC, ldc); break;
    case SGEMM_64:
      status = cublasSgemm_v2_64(h, ta, tb, g.m, g.n, g.k, alpha, kA, g.lda, kB, g.ldb, beta, kC, g.ldc);
      break;
    case SGEMM_STRIDED:
      status = cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, kA, lda, g.stride_a, kB, ldb, g.stride_b, beta, kC,
                                         ldc, g.stride_c, batch);
      break;
    case SGEMM_STRIDED_64:
      status = cublasSgemmStridedBatched_64(h, ta, tb, g.m, g.n, g.k, alpha, kA, g.lda, g.stride_a, kB, g.ldb,
                                            g.stride_b, beta, kC, g.ldc, g.stride_c, g.batch);
      break;
    case SGEMM_BATCHED:
      status = cublasSgemmBatched(h, ta, tb, m, n, k, alpha, (const float *const *)kA, lda, (const float *const *)kB,
                                  ldb, beta, (float *const *)kC, ldc, batch);
      break;
    case SGEMM_BATCHED_64:
      status = cublasSgemmBatched_64(h, ta, tb, g.m, g.n, g.k, alpha, (const float *const *)kA, g.lda,
                                     (const float *const *)kB, g.ldb, beta, (float *const *)kC, g.ldc, g.batch);
      break;
    case GEMM_EX:
      status = cublasGemmEx(h, ta, tb, m, n, k, alpha, kA, at, lda, kB, bt, ldb, beta, kC, ct, ldc, compute, algo);
      break;
    case GEMM_EX_64:
      status = cublasGemmEx_64(h, ta, tb, g.m, g.n, g.k, alpha, kA, at, g.lda, kB, bt, g.ldb, beta, kC, ct, g.ldc,
                               compute, algo);
      break;
    case GEMM_STRIDED_EX:
      status = cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, alpha, kA, at, lda, g.stride_a, kB, bt, ldb, g.stride_b,
                                          beta, kC, ct, ldc, g.stride_c, batch, compute, algo);
      break;
    case GEMM_STRIDED_EX_64:
      status = cublasGemmStridedBatchedEx_64(h, ta, tb, g.m, g.n, g.k, alpha, kA, at, g.lda, g.stride_a, kB, bt, g.ldb,
                                             g.stride_b, beta, kC, ct, g.ldc, g.stride_c, g.batch, compute, algo);
      break;
    case GEMM_BATCHED_EX:
      status = cublasGemmBatchedEx(h, ta, tb, m, n, k, alpha, (const void *const *)kA, at, lda, (const void *const *)kB,
                                   bt, ldb, beta, (void *const *)kC, ct, ldc, batch, compute, algo);
      break;
    case GEMM_BATCHED_EX_64:
      status = cublasGemmBatchedEx_64(h, ta, tb, g.m, g.n, g.k, alpha, (const void *const *)kA, at, g.lda,
                                      (const void *const *)kB, bt, g.ldb, beta, (void *const *)kC, ct, g.ldc, g.batch,
                                      compute, algo);
      break;
  }
  end(status);
}

/* A cublasLtMatmul call: FP32 column-major A, B, C and D, CUBLAS_COMPUTE_32F with FP32 scales, alpha 1 and beta 0,
 * D apart from C, then the one setting the case changes. */
struct lt_case {
  const char *name;
  long long m, n, k;
  cublasOperation_t transa;
  cublasComputeType_t compute;
  cudaDataType scale_type;
  int device_pointers, epilogue, bias, bias_half, a_scale, transc;
  int a_row_order, a_half, a_cols, a_batch, c_ld_extra;
  int alpha_zero, null_alpha, beta_one, c_is_d, d_overlaps_c, null_desc;
};

static const struct lt_case kLt[] = {
    {.name = "lt_small", .m = 256, .n = 320, .k = 384},
    {.name = "lt_below_2_34", .m = 2048, .n = 1024, .k = 8191},
    {.name = "lt_large", LARGE},
    {.name = "lt_large_transposed", LARGE, .transa = CUBLAS_OP_T},
    {.name = "lt_beta_apart", LARGE, .beta_one = 1},
    {.name = "lt_beta_in_place", LARGE, .beta_one = 1, .c_is_d = 1},
    {.name = "lt_relu", LARGE, .epilogue = CUBLASLT_EPILOGUE_RELU},
    {.name = "lt_relu_bias", LARGE, .epilogue = CUBLASLT_EPILOGUE_RELU_BIAS, .bias = 1},
    {.name = "lt_bias_without_pointer", LARGE, .epilogue = CUBLASLT_EPILOGUE_BIAS},
    {.name = "lt_bias_half", LARGE, .epilogue = CUBLASLT_EPILOGUE_BIAS, .bias = 1, .bias_half = 1},
    {.name = "lt_fast_tf32", LARGE, .compute = CUBLAS_COMPUTE_32F_FAST_TF32},
    {.name = "lt_scale_double", LARGE, .scale_type = CUDA_R_64F},
    {.name = "lt_gelu", LARGE, .epilogue = CUBLASLT_EPILOGUE_GELU},
    {.name = "lt_device_pointers", LARGE, .device_pointers = 1},
    {.name = "lt_a_scale", LARGE, .a_scale = 1},
    {.name = "lt_transc", LARGE, .transc = 1},
    {.name = "lt_row_order", LARGE, .a_row_order = 1},
    {.name = "lt_half_a", LARGE, .a_half = 1},
    {.name = "lt_misfit", LARGE, .a_cols = 4000},
    {.name = "lt_batch_misfit", LARGE, .a_batch = 2},
    {.name = "lt_alpha_zero", LARGE, .alpha_zero = 1},
    {.name = "lt_null_alpha", LARGE, .null_alpha = 1},
    {.name = "lt_c_is_d_two_layouts", LARGE, .c_is_d = 1, .c_ld_extra = 1},
    {.name = "lt_apart_other_layouts", LARGE, .beta_one = 1, .c_ld_extra = 1},
    {.name = "lt_overlapping", LARGE, .beta_one = 1, .d_overlaps_c = 1},
    {.name = "lt_null_desc", LARGE, .null_desc = 1},
};

static cublasStatus_t set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, int32_t value) {
  return cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof value);
}

static cublasStatus_t set_desc_pointer(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                                       const void *value) {
  return cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof value);
}

static cublasStatus_t set_layout(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute,
                                 int32_t value) {
  return cublasLtMatrixLayoutSetAttribute(layout, attribute, &value, sizeof value);
}

static int run_lt(const struct lt_case *c, cublasLtHandle_t handle) {
  static const float kOne = 1.0f, kZero = 0.0f;
  const int a_t = c->transa != CUBLAS_OP_N;
  const long long a_rows = a_t ? c->k : c->m, a_cols = c->a_cols != 0 ? c->a_cols : a_t ? c->m : c->k;
  cublasLtMatmulDesc_t desc = NULL;
  cublasLtMatrixLayout_t a = NULL, b = NULL, cl = NULL, d = NULL;
  cublasStatus_t status =
      cublasLtMatmulDescCreate(&desc, c->compute != 0 ? c->compute : CUBLAS_COMPUTE_32F, c->scale_type);
  if (status == CUBLAS_STATUS_SUCCESS && c->transa != CUBLAS_OP_N)
    status = set_desc(desc, CUBLASLT_MATMUL_DESC_TRANSA, c->transa);
  if (status == CUBLAS_STATUS_SUCCESS && c->transc) status = set_desc(desc, CUBLASLT_MATMUL_DESC_TRANSC, CUBLAS_OP_T);
  if (status == CUBLAS_STATUS_SUCCESS && c->device_pointers)
    status = set_desc(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_DEVICE);
  if (status == CUBLAS_STATUS_SUCCESS && c->epilogue != 0)
    status = set_desc(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, c->epilogue);
  if (status == CUBLAS_STATUS_SUCCESS && c->bias)
    status = set_desc_pointer(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, kD);
  if (status == CUBLAS_STATUS_SUCCESS && c->bias_half)
    status = set_desc(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, CUDA_R_16F);
  if (status == CUBLAS_STATUS_SUCCESS && c->a_scale)
    status = set_desc_pointer(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, kD);
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatrixLayoutCreate(&a, c->a_half ? CUDA_R_16F : CUDA_R_32F, a_rows, a_cols, a_rows);
  if (status == CUBLAS_STATUS_SUCCESS) status = cublasLtMatrixLayoutCreate(&b, CUDA_R_32F, c->k, c->n, c->k);
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatrixLayoutCreate(&cl, CUDA_R_32F, c->m, c->n, c->m + c->c_ld_extra);
  if (status == CUBLAS_STATUS_SUCCESS) status = cublasLtMatrixLayoutCreate(&d, CUDA_R_32F, c->m, c->n, c->m);
  if (status == CUBLAS_STATUS_SUCCESS && c->a_row_order)
    status = set_layout(a, CUBLASLT_MATRIX_LAYOUT_ORDER, CUBLASLT_ORDER_ROW);
  if (status == CUBLAS_STATUS_SUCCESS && c->a_batch)
    status = set_layout(a, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, c->a_batch);
  if (status != CUBLAS_STATUS_SUCCESS) return failed("the descriptors' setup", status);

  const void *alpha = c->null_alpha ? NULL : c->alpha_zero ? &kZero : &kOne;
  const void *beta = c->beta_one ? &kOne : &kZero;
  void *dd = c->c_is_d ? kC : c->d_overlaps_c ? (void *)((float *)kC + 1) : kD;
  cublasLtMatmulDesc_t passed_desc = c->null_desc ? NULL : desc;
  /* What the interposer can know of the sizes: nothing where the descriptor is missing. */
  if (c->null_desc)
    begin(c->name, "cublasLtMatmul", 0, 0, 0, 1);
  else
    begin(c->name, "cublasLtMatmul", c->m, c->n, a_t ? a_rows : a_cols, 1);
  routing_print_lt("call", handle, passed_desc, alpha, kA, a, kB, b, beta, kC, cl, dd, d, NULL, NULL, 0, NULL);
  end(cublasLtMatmul(handle, passed_desc, alpha, kA, a, kB, b, beta, kC, cl, dd, d, NULL, NULL, 0, NULL));
  cublasLtMatrixLayoutDestroy(d);
  cublasLtMatrixLayoutDestroy(cl);
  cublasLtMatrixLayoutDestroy(b);
  cublasLtMatrixLayoutDestroy(a);
  cublasLtMatmulDescDestroy(desc);
  return 0;
}

int main(void) {
  cublasHandle_t handles[H_COUNT];
  if (make_handles(handles) != 0) return 1;
  cublasLtHandle_t lt = NULL;
  cublasStatus_t status = cublasLtCreate(&lt);
  if (status != CUBLAS_STATUS_SUCCESS) return failed("cublasLtCreate", status);
  for (size_t i = 0; i < sizeof kClassic / sizeof kClassic[0]; ++i) run_classic(&kClassic[i], handles);
  for (size_t i = 0; i < sizeof kLt / sizeof kLt[0]; ++i)
    if (run_lt(&kLt[i], lt) != 0) return 1;
  printf("done\n");
  fflush(stdout);
  cublasLtDestroy(lt);
  for (int i = 0; i < H_COUNT; ++i) cublasDestroy(handles[i]);
  return 0;
}
