/* SPDX-License-Identifier: Apache-2.0 */
/* cublas_user products: every FP32 entry point, transposes, scalars and Lt epilogues, checked against the bound. */
#include "cublas_user_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------------------------- */
/* products */

typedef enum {
  SGEMM,
  SGEMM_64,
  SGEMM_STRIDED,
  SGEMM_STRIDED_64,
  GEMM_EX,
  GEMM_EX_64,
  GEMM_STRIDED_EX,
  GEMM_STRIDED_EX_64,
  SGEMM_DEVICE_SCALARS,
  LT_MATMUL,
  ENTRY_COUNT
} entry_t;

static const char *const entry_names[ENTRY_COUNT] = {"cublasSgemm_v2",
                                                     "cublasSgemm_v2_64",
                                                     "cublasSgemmStridedBatched",
                                                     "cublasSgemmStridedBatched_64",
                                                     "cublasGemmEx",
                                                     "cublasGemmEx_64",
                                                     "cublasGemmStridedBatchedEx",
                                                     "cublasGemmStridedBatchedEx_64",
                                                     "cublasSgemm_v2(CUBLAS_POINTER_MODE_DEVICE)",
                                                     "cublasLtMatmul"};

static int entry_batch(entry_t entry) {
  return entry == SGEMM_STRIDED || entry == SGEMM_STRIDED_64 || entry == GEMM_STRIDED_EX || entry == GEMM_STRIDED_EX_64
             ? 2
             : 1;
}

typedef struct {
  int m, n, k, pad_a, pad_b, pad_c;
} shape_t;

typedef struct {
  cublasHandle_t handle;
  cublasLtHandle_t lt;
  void *workspace;
  size_t workspace_size;
  int m, n, k, ldc;
  long long stride_c;
  float *a, *b, *c, *c0, *bias, *scalars; /* device */
  float *host_c, *host_c0, *host_poison, *host_bias;
  const operands_t *ops[2];
  int cases, failures;
} products_t;

/* One call of `entry` on p's operands (stored for g's transposes) and its check. */
static void product_case(products_t *p, gemm_t g, entry_t entry, cublasLtEpilogue_t epilogue) {
  const int batch = entry_batch(entry);
  const int with_bias =
      entry == LT_MATMUL && (epilogue == CUBLASLT_EPILOGUE_BIAS || epilogue == CUBLASLT_EPILOGUE_RELU_BIAS);
  const int relu =
      entry == LT_MATMUL && (epilogue == CUBLASLT_EPILOGUE_RELU || epilogue == CUBLASLT_EPILOGUE_RELU_BIAS);
  const size_t c_bytes = sizeof(float) * 2 * p->stride_c;
  if (g.beta == 0.0f)
    CHECK_CUDA(cudaMemsetAsync(p->c, POISON_BYTE, c_bytes, 0));
  else
    CHECK_CUDA(cudaMemcpyAsync(p->c, p->c0, c_bytes, cudaMemcpyDeviceToDevice, 0));
  const cublasHandle_t h = p->handle;
  const cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  const cudaDataType f32 = CUDA_R_32F;
  switch (entry) {
    case SGEMM: sgemm(h, &g); break;
    case SGEMM_64:
      CHECK_CUBLAS(
          cublasSgemm_v2_64(h, g.ta, g.tb, g.m, g.n, g.k, &g.alpha, g.a, g.lda, g.b, g.ldb, &g.beta, g.c, g.ldc));
      break;
    case SGEMM_STRIDED:
      CHECK_CUBLAS(cublasSgemmStridedBatched(h, g.ta, g.tb, g.m, g.n, g.k, &g.alpha, g.a, g.lda, g.stride_a, g.b, g.ldb,
                                             g.stride_b, &g.beta, g.c, g.ldc, g.stride_c, batch));
      break;
    case SGEMM_STRIDED_64:
      CHECK_CUBLAS(cublasSgemmStridedBatched_64(h, g.ta, g.tb, g.m, g.n, g.k, &g.alpha, g.a, g.lda, g.stride_a, g.b,
                                                g.ldb, g.stride_b, &g.beta, g.c, g.ldc, g.stride_c, batch));
      break;
    case GEMM_EX:
      CHECK_CUBLAS(cublasGemmEx(h, g.ta, g.tb, g.m, g.n, g.k, &g.alpha, g.a, f32, g.lda, g.b, f32, g.ldb, &g.beta, g.c,
                                f32, g.ldc, compute, CUBLAS_GEMM_DEFAULT));
      break;
    case GEMM_EX_64:
      CHECK_CUBLAS(cublasGemmEx_64(h, g.ta, g.tb, g.m, g.n, g.k, &g.alpha, g.a, f32, g.lda, g.b, f32, g.ldb, &g.beta,
                                   g.c, f32, g.ldc, compute, CUBLAS_GEMM_DEFAULT));
      break;
    case GEMM_STRIDED_EX:
      CHECK_CUBLAS(cublasGemmStridedBatchedEx(h, g.ta, g.tb, g.m, g.n, g.k, &g.alpha, g.a, f32, g.lda, g.stride_a, g.b,
                                              f32, g.ldb, g.stride_b, &g.beta, g.c, f32, g.ldc, g.stride_c, batch,
                                              compute, CUBLAS_GEMM_DEFAULT));
      break;
    case GEMM_STRIDED_EX_64:
      CHECK_CUBLAS(cublasGemmStridedBatchedEx_64(h, g.ta, g.tb, g.m, g.n, g.k, &g.alpha, g.a, f32, g.lda, g.stride_a,
                                                 g.b, f32, g.ldb, g.stride_b, &g.beta, g.c, f32, g.ldc, g.stride_c,
                                                 batch, compute, CUBLAS_GEMM_DEFAULT));
      break;
    case SGEMM_DEVICE_SCALARS: {
      const float scalars[2] = {g.alpha, g.beta};
      copy_now(p->scalars, scalars, sizeof(scalars), cudaMemcpyHostToDevice, 0);
      CHECK_CUBLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
      CHECK_CUBLAS(
          cublasSgemm_v2(h, g.ta, g.tb, g.m, g.n, g.k, p->scalars, g.a, g.lda, g.b, g.ldb, p->scalars + 1, g.c, g.ldc));
      CHECK_CUBLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
      break;
    }
    case LT_MATMUL:
      lt_matmul(p->lt, &g, compute, epilogue, with_bias ? p->bias : NULL, p->workspace, p->workspace_size, 0);
      break;
    default: fail_call(__FILE__, __LINE__, "product_case", "unknown entry point");
  }
  copy_now(p->host_c, p->c, c_bytes, cudaMemcpyDeviceToHost, 0);

  const char *epilogue_name = "";
  if (entry == LT_MATMUL)
    epilogue_name = epilogue == CUBLASLT_EPILOGUE_DEFAULT ? " DEFAULT"
                    : epilogue == CUBLASLT_EPILOGUE_BIAS  ? " BIAS"
                    : epilogue == CUBLASLT_EPILOGUE_RELU  ? " RELU"
                                                          : " RELU_BIAS";
  const verdict_t v =
      check_product(p->host_c, g.beta == 0.0f ? p->host_poison : p->host_c0, g.m, g.n, g.k, g.ldc, p->stride_c, batch,
                    2, g.alpha, g.beta, p->ops, with_bias ? p->host_bias : NULL, relu);
  char label[256];
  snprintf(label, sizeof(label), "products %s %c%c m=%d n=%d k=%d alpha=%g beta=%g%s", entry_names[entry],
           op_letter(g.ta), op_letter(g.tb), g.m, g.n, g.k, g.alpha, g.beta, epilogue_name);
  p->failures += report(label, &v);
  ++p->cases;
}

/* Every entry point, transpose pair, scalar pair and epilogue on one shape. Two operand sets (the two blocks of the
   batched calls) and their references are made once; each transpose pair only stores them anew. A, B and C carry
   poison between leading dimensions and between blocks: what a call must not read is NaN, what it must not write is
   checked bit for bit. */
static void products_shape(products_t *p, const shape_t *shape) {
  const int m = shape->m, n = shape->n, k = shape->k;
  const long long gap = 40; /* elements between blocks of a strided batch, beyond the last column */
  operands_t ops[2];
  for (int set = 0; set < 2; ++set) {
    operands_init(&ops[set], m, n, k);
    operands_fill(&ops[set], p->handle, 1000u * m + 10u * k + set);
    p->ops[set] = &ops[set];
  }
  p->m = m, p->n = n, p->k = k;
  p->ldc = m + shape->pad_c;
  p->stride_c = (long long)p->ldc * n + gap;
  const long long stride_a_max = (long long)m * k + (long long)(m > k ? m : k) * shape->pad_a + gap;
  const long long stride_b_max = (long long)k * n + (long long)(n > k ? n : k) * shape->pad_b + gap;
  const size_t c_count = 2 * (size_t)p->stride_c;
  float *host_a = xmalloc(sizeof(float) * 2 * stride_a_max), *host_b = xmalloc(sizeof(float) * 2 * stride_b_max);
  float *a, *b;
  CHECK_CUDA(cudaMalloc((void **)&a, sizeof(float) * 2 * stride_a_max));
  CHECK_CUDA(cudaMalloc((void **)&b, sizeof(float) * 2 * stride_b_max));
  CHECK_CUDA(cudaMalloc((void **)&p->c, sizeof(float) * c_count));
  CHECK_CUDA(cudaMalloc((void **)&p->c0, sizeof(float) * c_count));
  CHECK_CUDA(cudaMalloc((void **)&p->bias, sizeof(float) * m));
  CHECK_CUDA(cudaMallocHost((void **)&p->host_c, sizeof(float) * c_count));
  p->host_c0 = xmalloc(sizeof(float) * c_count);
  p->host_poison = xmalloc(sizeof(float) * c_count);
  p->host_bias = xmalloc(sizeof(float) * m);
  memset(p->host_poison, POISON_BYTE, sizeof(float) * c_count);
  memset(p->host_c0, POISON_BYTE, sizeof(float) * c_count);
  float *column = xmalloc(sizeof(float) * m);
  for (int block = 0; block < 2; ++block)
    for (int j = 0; j < n; ++j) {
      fill_uniform(column, m, 77777u + 4096u * block + j);
      memcpy(p->host_c0 + block * p->stride_c + (size_t)j * p->ldc, column, sizeof(float) * m);
    }
  free(column);
  fill_uniform(p->host_bias, m, 31337u + m);
  copy_now(p->c0, p->host_c0, sizeof(float) * c_count, cudaMemcpyHostToDevice, 0);
  copy_now(p->bias, p->host_bias, sizeof(float) * m, cudaMemcpyHostToDevice, 0);

  static const cublasOperation_t transposes[][2] = {{CUBLAS_OP_N, CUBLAS_OP_N},
                                                    {CUBLAS_OP_T, CUBLAS_OP_N},
                                                    {CUBLAS_OP_N, CUBLAS_OP_T},
                                                    {CUBLAS_OP_T, CUBLAS_OP_T},
                                                    {CUBLAS_OP_C, CUBLAS_OP_C}};
  static const float scalars[][2] = {{1.0f, 0.0f}, {-1.5f, 0.75f}, {0.5f, 0.0f}};
  static const cublasLtEpilogue_t epilogues[] = {CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_BIAS,
                                                 CUBLASLT_EPILOGUE_RELU, CUBLASLT_EPILOGUE_RELU_BIAS};
  for (size_t t = 0; t < sizeof(transposes) / sizeof(transposes[0]); ++t) {
    gemm_t g;
    g.ta = transposes[t][0], g.tb = transposes[t][1];
    g.m = m, g.n = n, g.k = k;
    const int rows_a = stored_rows(g.ta, m, k), rows_b = stored_rows(g.tb, k, n);
    g.lda = rows_a + shape->pad_a, g.ldb = rows_b + shape->pad_b, g.ldc = p->ldc;
    g.stride_a = (long long)g.lda * stored_rows(g.ta, k, m) + gap;
    g.stride_b = (long long)g.ldb * stored_rows(g.tb, n, k) + gap;
    g.stride_c = p->stride_c;
    memset(host_a, POISON_BYTE, sizeof(float) * 2 * stride_a_max);
    memset(host_b, POISON_BYTE, sizeof(float) * 2 * stride_b_max);
    for (int set = 0; set < 2; ++set) {
      store(host_a + set * g.stride_a, ops[set].a, m, k, g.ta, g.lda);
      store(host_b + set * g.stride_b, ops[set].b, k, n, g.tb, g.ldb);
    }
    copy_now(a, host_a, sizeof(float) * 2 * stride_a_max, cudaMemcpyHostToDevice, 0);
    copy_now(b, host_b, sizeof(float) * 2 * stride_b_max, cudaMemcpyHostToDevice, 0);
    g.a = a, g.b = b, g.c = p->c;
    for (int entry = 0; entry < ENTRY_COUNT; ++entry)
      for (size_t s = 0; s < sizeof(scalars) / sizeof(scalars[0]); ++s) {
        g.alpha = scalars[s][0], g.beta = scalars[s][1];
        if (entry != LT_MATMUL) {
          product_case(p, g, (entry_t)entry, CUBLASLT_EPILOGUE_DEFAULT);
          continue;
        }
        for (size_t e = 0; e < sizeof(epilogues) / sizeof(epilogues[0]); ++e)
          product_case(p, g, LT_MATMUL, epilogues[e]);
      }
  }
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaFree(p->c));
  CHECK_CUDA(cudaFree(p->c0));
  CHECK_CUDA(cudaFree(p->bias));
  CHECK_CUDA(cudaFreeHost(p->host_c));
  free(p->host_c0), free(p->host_poison), free(p->host_bias), free(host_a), free(host_b);
  operands_free(&ops[0]);
  operands_free(&ops[1]);
}

int mode_products(void) {
  const double start = seconds();
  print_device();
  products_t p;
  memset(&p, 0, sizeof(p));
  CHECK_CUBLAS(cublasCreate(&p.handle));
  CHECK_CUBLAS(cublasLtCreate(&p.lt));
  p.workspace_size = (size_t)32 << 20;
  CHECK_CUDA(cudaMalloc(&p.workspace, p.workspace_size));
  CHECK_CUDA(cudaMalloc((void **)&p.scalars, sizeof(float) * 2));
  /* A square product at the size the interposer starts to serve, and one of dimensions no tile divides, with leading
     dimensions that leave every column unaligned. */
  static const shape_t shapes[] = {{2048, 2048, 4096, 0, 0, 0}, {2603, 2101, 3301, 3, 5, 7}};
  for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); ++s) products_shape(&p, &shapes[s]);
  CHECK_CUDA(cudaFree(p.workspace));
  CHECK_CUDA(cudaFree(p.scalars));
  CHECK_CUBLAS(cublasLtDestroy(p.lt));
  CHECK_CUBLAS(cublasDestroy(p.handle));
  printf("products: %d cases, %d failed, %.1f s\n", p.cases, p.failures, seconds() - start);
  return p.failures == 0 ? 0 : 1;
}
