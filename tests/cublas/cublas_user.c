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
#define _POSIX_C_SOURCE 200112L /* pthread_barrier_t and clock_gettime under -std=c99 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void fail_call(int line, const char *call, const char *what) {
  fprintf(stderr, "cublas_user.c:%d: %s failed: %s\n", line, call, what);
  exit(1);
}

#define CHECK_CUDA(call)                                                                         \
  do {                                                                                           \
    const cudaError_t check_error_ = (call);                                                     \
    if (check_error_ != cudaSuccess) fail_call(__LINE__, #call, cudaGetErrorName(check_error_)); \
  } while (0)

#define CHECK_CUBLAS(call)                                                                                      \
  do {                                                                                                          \
    const cublasStatus_t check_status_ = (call);                                                                \
    if (check_status_ != CUBLAS_STATUS_SUCCESS) fail_call(__LINE__, #call, cublasGetStatusName(check_status_)); \
  } while (0)

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes);
  if (p == NULL) {
    fprintf(stderr, "cublas_user: out of host memory (%zu bytes)\n", bytes);
    exit(1);
  }
  return p;
}

/* An all-ones byte pattern is a NaN in FP32: written before a call, any element the call leaves alone keeps exactly
   these bits, and any element it should have written but did not stays NaN. */
#define POISON_BYTE 0xff

/* Uniform in [-1, 1) with 24 random bits, so every value is an exact float; a fixed seed gives the same operands in
   every run, which passthrough's hashes rely on. */
static void fill_uniform(float *x, size_t count, uint64_t seed) {
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  for (size_t i = 0; i < count; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (float)(int64_t)(state >> 40) / 8388608.0f - 1.0f;
  }
}

static double seconds(void) {
  struct timespec now;
  if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) return 0.0;
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

static int have_device(void) {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

static void print_device(void) {
  int device = 0;
  struct cudaDeviceProp properties;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaGetDeviceProperties(&properties, device));
  printf("device %d: %s, compute capability %d.%d\n", device, properties.name, properties.major, properties.minor);
}

/* Copies that the host can rely on at once: ordered on the stream the products use, finished on return. */
static void copy_now(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, cudaStream_t stream) {
  CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
}

static char op_letter(cublasOperation_t op) { return op == CUBLAS_OP_N ? 'N' : op == CUBLAS_OP_T ? 'T' : 'C'; }

/* ---------------------------------------------------------------------------------------------------------------- */
/* Operands and their reference */

/* One product's operands as the mathematics sees them, op(A) (m x k) and op(B) (k x n), column-major and packed,
   with R = op(A) op(B) and S = |op(A)| |op(B)| (m x n) in double. The transposes only change how the operands are
   stored for a call, so one reference serves every transpose. */
typedef struct {
  int m, n, k;
  float *a, *b;
  double *r, *s;
} operands_t;

/* The products of floats are exact in double and k of them sum with an error near 2^-53 k S, far below the bound
   the FP32 results are held to; cublasDgemm is not an FP32 entry point, so it reaches cuBLAS under the preload too. */
static void reference(cublasHandle_t handle, operands_t *o) {
  const size_t mk = (size_t)o->m * o->k, kn = (size_t)o->k * o->n, mn = (size_t)o->m * o->n;
  cudaStream_t stream;
  CHECK_CUBLAS(cublasGetStream(handle, &stream));
  double *host = xmalloc(sizeof(double) * (mk > kn ? mk : kn));
  double *a, *b, *product;
  CHECK_CUDA(cudaMalloc((void **)&a, sizeof(double) * mk));
  CHECK_CUDA(cudaMalloc((void **)&b, sizeof(double) * kn));
  CHECK_CUDA(cudaMalloc((void **)&product, sizeof(double) * mn));
  const double one = 1.0, zero = 0.0;
  for (int absolute = 0; absolute < 2; ++absolute) {
    for (size_t i = 0; i < mk; ++i) host[i] = absolute ? fabs((double)o->a[i]) : (double)o->a[i];
    copy_now(a, host, sizeof(double) * mk, cudaMemcpyHostToDevice, stream);
    for (size_t i = 0; i < kn; ++i) host[i] = absolute ? fabs((double)o->b[i]) : (double)o->b[i];
    copy_now(b, host, sizeof(double) * kn, cudaMemcpyHostToDevice, stream);
    CHECK_CUBLAS(
        cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, o->m, o->n, o->k, &one, a, o->m, b, o->k, &zero, product, o->m));
    copy_now(absolute ? o->s : o->r, product, sizeof(double) * mn, cudaMemcpyDeviceToHost, stream);
  }
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaFree(product));
  free(host);
}

static void operands_init(operands_t *o, int m, int n, int k) {
  o->m = m, o->n = n, o->k = k;
  o->a = xmalloc(sizeof(float) * m * k);
  o->b = xmalloc(sizeof(float) * k * n);
  o->r = xmalloc(sizeof(double) * m * n);
  o->s = xmalloc(sizeof(double) * m * n);
}

/* New random values (the seed decides them) and their reference. */
static void operands_fill(operands_t *o, cublasHandle_t handle, uint64_t seed) {
  fill_uniform(o->a, (size_t)o->m * o->k, 2 * seed);
  fill_uniform(o->b, (size_t)o->k * o->n, 2 * seed + 1);
  reference(handle, o);
}

static void operands_free(operands_t *o) {
  free(o->a), free(o->b), free(o->r), free(o->s);
  memset(o, 0, sizeof(*o));
}

/* Writes x (rows x cols, packed column-major) into dst with leading dimension ld as a call with operation op reads
   it: as it is for N, transposed for T and C (the same for real matrices). Other elements of dst keep their value. */
static void store(float *dst, const float *x, int rows, int cols, cublasOperation_t op, int ld) {
  if (op == CUBLAS_OP_N) {
    for (int j = 0; j < cols; ++j) memcpy(dst + (size_t)j * ld, x + (size_t)j * rows, sizeof(float) * rows);
    return;
  }
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) dst[(size_t)i * ld + j] = x[(size_t)j * rows + i];
}

/* Rows of the matrix a call reads for an operand that is rows x cols after op. */
static int stored_rows(cublasOperation_t op, int rows, int cols) { return op == CUBLAS_OP_N ? rows : cols; }

/* ---------------------------------------------------------------------------------------------------------------- */
/* The check */

typedef struct {
  double ratio;  /* the largest error over its bound */
  long long bad; /* elements outside their bound, NaN, or written where nothing should be */
  char first[256];
} verdict_t;

static void note_bad(verdict_t *v, const char *what) {
  if (v->bad++ == 0) snprintf(v->first, sizeof(v->first), "%s", what);
}

/* Elements [from, to) of a block of C that the call must not write keep their bits. */
static void compare_bits(verdict_t *v, const float *c, const float *before, long long from, long long to, int block) {
  if (from >= to || memcmp(c + from, before + from, sizeof(float) * (size_t)(to - from)) == 0) return;
  for (long long e = from; e < to; ++e) {
    uint32_t got, had;
    memcpy(&got, c + e, sizeof(got));
    memcpy(&had, before + e, sizeof(had));
    if (got == had) continue;
    char what[256];
    snprintf(what, sizeof(what), "element %lld of block %d, outside the product, changed from 0x%08x to 0x%08x", e,
             block, (unsigned)had, (unsigned)got);
    note_bad(v, what);
  }
}

/* C after C := alpha op(A) op(B) + beta C [+ bias] [then relu], for the first `batch` of `slots` blocks of `stride`
   elements, block b from ops[b]; every element of the buffer outside those m x n products must keep the bits it had
   (`before`, the image of the buffer before the call). The bound is twice the one the interposer promises:
   2^-24 (1 + sqrt(k)) (|alpha| |A||B| + |beta| |C0|), with |bias| beside |beta C0| for the Lt epilogues. */
static verdict_t check_product(const float *c, const float *before, int m, int n, int k, int ldc, long long stride,
                               int batch, int slots, double alpha, double beta, const operands_t *const *ops,
                               const float *bias, int relu) {
  verdict_t v = {0.0, 0, ""};
  char what[256];
  const double factor = 2.0 * 0x1p-24 * (1.0 + sqrt((double)k));
  for (int block = 0; block < slots; ++block) {
    const float *cb = c + block * stride, *bb = before + block * stride;
    if (block >= batch) {
      compare_bits(&v, cb, bb, 0, stride, block);
      continue;
    }
    for (int j = 0; j < n; ++j) compare_bits(&v, cb, bb, (long long)j * ldc + m, (long long)(j + 1) * ldc, block);
    compare_bits(&v, cb, bb, (long long)n * ldc, stride, block);
    if (block >= batch) continue;
    const operands_t *o = ops[block];
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        const double got = cb[(size_t)j * ldc + i], r = o->r[(size_t)j * m + i], s = o->s[(size_t)j * m + i];
        const double old = beta != 0.0 ? bb[(size_t)j * ldc + i] : 0.0, shift = bias ? bias[i] : 0.0;
        double want = alpha * r + beta * old + shift;
        if (relu && want < 0.0) want = 0.0;
        const double bound = factor * (fabs(alpha) * s + fabs(beta) * fabs(old) + fabs(shift)) + 1e-30;
        const double ratio = fabs(got - want) / bound;
        if (isnan(got) || !(ratio <= 1.0)) {
          snprintf(what, sizeof(what), "C(%d,%d) of block %d is %.9g, should be %.9g within %.3g", i, j, block, got,
                   want, bound);
          note_bad(&v, what);
        }
        if (ratio > v.ratio) v.ratio = ratio;
      }
  }
  return v;
}

/* Prints the case's line (and what failed); returns 1 when it failed. */
static int report(const char *label, const verdict_t *v) {
  printf("%s: max ratio %.3g\n", label, v->ratio);
  if (v->bad == 0) return 0;
  printf("FAILED: %s: %lld elements wrong; first: %s\n", label, v->bad, v->first);
  return 1;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* One call's arguments */

typedef struct {
  cublasOperation_t ta, tb;
  int m, n, k, lda, ldb, ldc;
  long long stride_a, stride_b, stride_c;
  float alpha, beta;
  const float *a, *b;
  float *c;
} gemm_t;

/* cublasLtMatmul as its documentation shows it: descriptors, the heuristic's first algorithm, C == D. */
static void lt_matmul(cublasLtHandle_t lt, const gemm_t *g, cublasComputeType_t compute, cublasLtEpilogue_t epilogue,
                      const float *bias, void *workspace, size_t workspace_size, cudaStream_t stream) {
  cublasLtMatmulDesc_t desc;
  CHECK_CUBLAS(cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F));
  const int32_t ta = g->ta, tb = g->tb;
  const uint32_t epilogue_value = epilogue;
  CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  CHECK_CUBLAS(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue_value, sizeof(epilogue_value)));
  if (bias != NULL)
    CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  cublasLtMatrixLayout_t la, lb, lc;
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, stored_rows(g->ta, g->m, g->k),
                                          stored_rows(g->ta, g->k, g->m), g->lda));
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, stored_rows(g->tb, g->k, g->n),
                                          stored_rows(g->tb, g->n, g->k), g->ldb));
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, g->m, g->n, g->ldc));
  cublasLtMatmulPreference_t preference;
  CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&preference));
  const uint64_t workspace_limit = workspace_size;
  CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_limit, sizeof(workspace_limit)));
  cublasLtMatmulHeuristicResult_t heuristic;
  int found = 0;
  CHECK_CUBLAS(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, preference, 1, &heuristic, &found));
  if (found < 1) fail_call(__LINE__, "cublasLtMatmulAlgoGetHeuristic", "no algorithm");
  CHECK_CUBLAS(cublasLtMatmul(lt, desc, &g->alpha, g->a, la, g->b, lb, &g->beta, g->c, lc, g->c, lc, &heuristic.algo,
                              workspace, workspace_size, stream));
  CHECK_CUBLAS(cublasLtMatmulPreferenceDestroy(preference));
  CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(la));
  CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(lb));
  CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(lc));
  CHECK_CUBLAS(cublasLtMatmulDescDestroy(desc));
}

static void sgemm(cublasHandle_t handle, const gemm_t *g) {
  CHECK_CUBLAS(cublasSgemm_v2(handle, g->ta, g->tb, g->m, g->n, g->k, &g->alpha, g->a, g->lda, g->b, g->ldb, &g->beta,
                              g->c, g->ldc));
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* status */

static int mode_status(void) {
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
    default: fail_call(__LINE__, "product_case", "unknown entry point");
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

static int mode_products(void) {
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

/* ---------------------------------------------------------------------------------------------------------------- */
/* passthrough */

static uint64_t fnv1a(const void *data, size_t bytes) {
  const unsigned char *p = data;
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}

static void print_hash(const char *name, const float *device, size_t count) {
  float *host = xmalloc(sizeof(float) * count);
  copy_now(host, device, sizeof(float) * count, cudaMemcpyDeviceToHost, 0);
  printf("passthrough %s: %016llx\n", name, (unsigned long long)fnv1a(host, sizeof(float) * count));
  free(host);
}

/* Products whose precision or form is not FP32's emulated product, and one too small to be worth it: cuBLAS computes
   them all, so its bits are the same with the preload as without. */
static int mode_passthrough(void) {
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

/* ---------------------------------------------------------------------------------------------------------------- */
/* One cublasSgemm_v2 on device buffers of its own, for capture and threads */

typedef struct {
  operands_t ops;
  gemm_t g;
  float *a, *b, *c;                 /* device */
  float *host_a, *host_b, *host_c;  /* staging, in the layout the call reads */
  float *before;                    /* C as it is before the call: poison, or the random C0 where beta != 0 */
  size_t a_count, b_count, c_count; /* elements of the buffers */
} job_t;

static void job_init(job_t *j, int m, int n, int k, cublasOperation_t ta, cublasOperation_t tb, float alpha,
                     float beta) {
  operands_init(&j->ops, m, n, k);
  gemm_t g = {ta, tb, m, n, k, stored_rows(ta, m, k), stored_rows(tb, k, n), m, 0, 0, 0, alpha, beta, NULL, NULL, NULL};
  j->a_count = (size_t)m * k, j->b_count = (size_t)k * n, j->c_count = (size_t)m * n;
  CHECK_CUDA(cudaMalloc((void **)&j->a, sizeof(float) * j->a_count));
  CHECK_CUDA(cudaMalloc((void **)&j->b, sizeof(float) * j->b_count));
  CHECK_CUDA(cudaMalloc((void **)&j->c, sizeof(float) * j->c_count));
  g.a = j->a, g.b = j->b, g.c = j->c;
  j->g = g;
  j->host_a = xmalloc(sizeof(float) * j->a_count);
  j->host_b = xmalloc(sizeof(float) * j->b_count);
  j->host_c = xmalloc(sizeof(float) * j->c_count);
  j->before = xmalloc(sizeof(float) * j->c_count);
}

/* New operands (and C0 where beta != 0) on the handle's stream, with their reference. */
static void job_fill(job_t *j, cublasHandle_t handle, uint64_t seed) {
  cudaStream_t stream;
  CHECK_CUBLAS(cublasGetStream(handle, &stream));
  operands_fill(&j->ops, handle, seed);
  store(j->host_a, j->ops.a, j->g.m, j->g.k, j->g.ta, j->g.lda);
  store(j->host_b, j->ops.b, j->g.k, j->g.n, j->g.tb, j->g.ldb);
  copy_now(j->a, j->host_a, sizeof(float) * j->a_count, cudaMemcpyHostToDevice, stream);
  copy_now(j->b, j->host_b, sizeof(float) * j->b_count, cudaMemcpyHostToDevice, stream);
  if (j->g.beta == 0.0f)
    memset(j->before, POISON_BYTE, sizeof(float) * j->c_count);
  else
    fill_uniform(j->before, j->c_count, seed + 0x5eed);
}

/* C as `before` says, ahead of the call on the stream. */
static void job_reset_c(job_t *j, cudaStream_t stream) {
  copy_now(j->c, j->before, sizeof(float) * j->c_count, cudaMemcpyHostToDevice, stream);
}

static int job_check(job_t *j, cudaStream_t stream, const char *label) {
  copy_now(j->host_c, j->c, sizeof(float) * j->c_count, cudaMemcpyDeviceToHost, stream);
  const operands_t *ops[1] = {&j->ops};
  const verdict_t v = check_product(j->host_c, j->before, j->g.m, j->g.n, j->g.k, j->g.ldc, (long long)j->c_count, 1, 1,
                                    j->g.alpha, j->g.beta, ops, NULL, 0);
  char line[256];
  snprintf(line, sizeof(line), "%s cublasSgemm_v2 %c%c m=%d n=%d k=%d alpha=%g beta=%g", label, op_letter(j->g.ta),
           op_letter(j->g.tb), j->g.m, j->g.n, j->g.k, j->g.alpha, j->g.beta);
  return report(line, &v);
}

static void job_free(job_t *j) {
  CHECK_CUDA(cudaFree(j->a));
  CHECK_CUDA(cudaFree(j->b));
  CHECK_CUDA(cudaFree(j->c));
  free(j->host_a), free(j->host_b), free(j->host_c), free(j->before);
  operands_free(&j->ops);
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* capture */

/* Captures job's call on the stream into a graph, ready to launch. */
static cudaGraphExec_t capture(cublasHandle_t handle, cudaStream_t stream, const job_t *j) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  sgemm(handle, &j->g);
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CHECK_CUDA(cudaGraphDestroy(graph));
  return exec;
}

/* A graph holds the call, not its values: each replay must read what A and B hold at launch. */
static int replay(cudaGraphExec_t exec, cublasHandle_t handle, cudaStream_t stream, job_t *j, uint64_t seed,
                  const char *label) {
  job_fill(j, handle, seed);
  job_reset_c(j, stream);
  CHECK_CUDA(cudaGraphLaunch(exec, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  return job_check(j, stream, label);
}

static int mode_capture(void) {
  print_device();
  cudaStream_t stream;
  cublasHandle_t handle;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  int failures = 0;

  /* The shape called once eagerly before it is captured. */
  job_t job;
  job_init(&job, 2048, 2048, 4096, CUBLAS_OP_N, CUBLAS_OP_N, 0.75f, 0.0f);
  job_fill(&job, handle, 301);
  job_reset_c(&job, stream);
  sgemm(handle, &job.g);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  failures += job_check(&job, stream, "capture eager");
  cudaGraphExec_t exec = capture(handle, stream, &job);
  failures += replay(exec, handle, stream, &job, 302, "capture replay 1");
  failures += replay(exec, handle, stream, &job, 303, "capture replay 2");
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  job_free(&job);

  /* A shape first seen inside the capture, with beta != 0: C0 is read at launch too. */
  job_t fresh;
  job_init(&fresh, 2560, 2048, 4096, CUBLAS_OP_T, CUBLAS_OP_N, -0.5f, 1.25f);
  exec = capture(handle, stream, &fresh);
  failures += replay(exec, handle, stream, &fresh, 312, "capture new shape replay 1");
  failures += replay(exec, handle, stream, &fresh, 313, "capture new shape replay 2");
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  job_free(&fresh);

  CHECK_CUBLAS(cublasDestroy(handle));
  CHECK_CUDA(cudaStreamDestroy(stream));
  printf("capture: %d failed\n", failures);
  return failures == 0 ? 0 : 1;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* threads */

enum { THREADS = 4, CALLS = 3 };

typedef struct {
  int index;
  pthread_barrier_t *barrier;
  int failures;
} worker_t;

/* Each thread prepares its operands, waits for the others, then queues its calls back to back on its own stream so
   that the threads' products run at the same time. */
static void *worker(void *argument) {
  worker_t *w = argument;
  cublasHandle_t handle;
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  const cublasOperation_t ta = w->index & 1 ? CUBLAS_OP_T : CUBLAS_OP_N, tb = w->index & 2 ? CUBLAS_OP_T : CUBLAS_OP_N;
  job_t jobs[CALLS];
  for (int c = 0; c < CALLS; ++c) {
    job_init(&jobs[c], 2048, 2048, 4096, ta, tb, 1.0f - 0.25f * c, c == CALLS - 1 ? 0.5f : 0.0f);
    job_fill(&jobs[c], handle, 400 + 10 * w->index + c);
    job_reset_c(&jobs[c], stream);
  }
  const int waited = pthread_barrier_wait(w->barrier);
  if (waited != 0 && waited != PTHREAD_BARRIER_SERIAL_THREAD) fail_call(__LINE__, "pthread_barrier_wait", "error");
  for (int c = 0; c < CALLS; ++c) sgemm(handle, &jobs[c].g);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  for (int c = 0; c < CALLS; ++c) {
    char label[64];
    snprintf(label, sizeof(label), "threads thread %d call %d", w->index, c);
    w->failures += job_check(&jobs[c], stream, label);
    job_free(&jobs[c]);
  }
  CHECK_CUBLAS(cublasDestroy(handle));
  CHECK_CUDA(cudaStreamDestroy(stream));
  return NULL;
}

static int mode_threads(void) {
  print_device();
  /* The runtime's context exists before the threads start, as in most programs. */
  CHECK_CUDA(cudaFree(NULL));
  pthread_barrier_t barrier;
  if (pthread_barrier_init(&barrier, NULL, THREADS) != 0) fail_call(__LINE__, "pthread_barrier_init", "error");
  pthread_t threads[THREADS];
  worker_t workers[THREADS];
  for (int t = 0; t < THREADS; ++t) {
    workers[t].index = t, workers[t].barrier = &barrier, workers[t].failures = 0;
    if (pthread_create(&threads[t], NULL, worker, &workers[t]) != 0) fail_call(__LINE__, "pthread_create", "error");
  }
  int failures = 0;
  for (int t = 0; t < THREADS; ++t) {
    if (pthread_join(threads[t], NULL) != 0) fail_call(__LINE__, "pthread_join", "error");
    failures += workers[t].failures;
  }
  pthread_barrier_destroy(&barrier);

  /* Two handles on two streams, used in turn by one thread, all calls in flight before any is waited for. */
  cublasHandle_t handles[2];
  cudaStream_t streams[2];
  job_t jobs[4];
  for (int h = 0; h < 2; ++h) {
    CHECK_CUDA(cudaStreamCreateWithFlags(&streams[h], cudaStreamNonBlocking));
    CHECK_CUBLAS(cublasCreate(&handles[h]));
    CHECK_CUBLAS(cublasSetStream(handles[h], streams[h]));
  }
  for (int c = 0; c < 4; ++c) {
    job_init(&jobs[c], 2048, 2048, 4096, CUBLAS_OP_N, c & 1 ? CUBLAS_OP_T : CUBLAS_OP_N, c & 2 ? -1.0f : 1.0f, 0.0f);
    job_fill(&jobs[c], handles[c % 2], 500 + c);
    job_reset_c(&jobs[c], streams[c % 2]);
  }
  for (int c = 0; c < 4; ++c) sgemm(handles[c % 2], &jobs[c].g);
  for (int h = 0; h < 2; ++h) CHECK_CUDA(cudaStreamSynchronize(streams[h]));
  for (int c = 0; c < 4; ++c) {
    char label[64];
    snprintf(label, sizeof(label), "threads handle %d call %d", c % 2, c);
    failures += job_check(&jobs[c], streams[c % 2], label);
    job_free(&jobs[c]);
  }
  for (int h = 0; h < 2; ++h) {
    CHECK_CUBLAS(cublasDestroy(handles[h]));
    CHECK_CUDA(cudaStreamDestroy(streams[h]));
  }
  printf("threads: %d failed\n", failures);
  return failures == 0 ? 0 : 1;
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
