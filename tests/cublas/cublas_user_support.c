/* SPDX-License-Identifier: Apache-2.0 */
/* The helpers cublas_user_support.h declares: checked calls, operands and their reference, the check, the calls. */
#include "cublas_user_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void fail_call(const char *file, int line, const char *call, const char *what) {
  const char *name = strrchr(file, '/');
  fprintf(stderr, "%s:%d: %s failed: %s\n", name ? name + 1 : file, line, call, what);
  exit(1);
}

void *xmalloc(size_t bytes) {
  void *p = malloc(bytes);
  if (p == NULL) {
    fprintf(stderr, "cublas_user: out of host memory (%zu bytes)\n", bytes);
    exit(1);
  }
  return p;
}

void fill_uniform(float *x, size_t count, uint64_t seed) {
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  for (size_t i = 0; i < count; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (float)(int64_t)(state >> 40) / 8388608.0f - 1.0f;
  }
}

double seconds(void) {
  struct timespec now;
  if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) return 0.0;
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

int have_device(void) {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

void print_device(void) {
  int device = 0;
  struct cudaDeviceProp properties;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaGetDeviceProperties(&properties, device));
  printf("device %d: %s, compute capability %d.%d\n", device, properties.name, properties.major, properties.minor);
}

void copy_now(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, cudaStream_t stream) {
  CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
}

char op_letter(cublasOperation_t op) { return op == CUBLAS_OP_N ? 'N' : op == CUBLAS_OP_T ? 'T' : 'C'; }

/* ---------------------------------------------------------------------------------------------------------------- */
/* Operands and their reference */

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

void operands_init(operands_t *o, int m, int n, int k) {
  o->m = m, o->n = n, o->k = k;
  o->a = xmalloc(sizeof(float) * m * k);
  o->b = xmalloc(sizeof(float) * k * n);
  o->r = xmalloc(sizeof(double) * m * n);
  o->s = xmalloc(sizeof(double) * m * n);
}

void operands_fill(operands_t *o, cublasHandle_t handle, uint64_t seed) {
  fill_uniform(o->a, (size_t)o->m * o->k, 2 * seed);
  fill_uniform(o->b, (size_t)o->k * o->n, 2 * seed + 1);
  reference(handle, o);
}

void operands_free(operands_t *o) {
  free(o->a), free(o->b), free(o->r), free(o->s);
  memset(o, 0, sizeof(*o));
}

void store(float *dst, const float *x, int rows, int cols, cublasOperation_t op, int ld) {
  if (op == CUBLAS_OP_N) {
    for (int j = 0; j < cols; ++j) memcpy(dst + (size_t)j * ld, x + (size_t)j * rows, sizeof(float) * rows);
    return;
  }
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) dst[(size_t)i * ld + j] = x[(size_t)j * rows + i];
}

int stored_rows(cublasOperation_t op, int rows, int cols) { return op == CUBLAS_OP_N ? rows : cols; }

/* ---------------------------------------------------------------------------------------------------------------- */
/* The check */

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

verdict_t check_product(const float *c, const float *before, int m, int n, int k, int ldc, long long stride, int batch,
                        int slots, double alpha, double beta, const operands_t *const *ops, const float *bias,
                        int relu) {
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

int report(const char *label, const verdict_t *v) {
  printf("%s: max ratio %.3g\n", label, v->ratio);
  if (v->bad == 0) return 0;
  printf("FAILED: %s: %lld elements wrong; first: %s\n", label, v->bad, v->first);
  return 1;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* One call's arguments */

void lt_matmul(cublasLtHandle_t lt, const gemm_t *g, cublasComputeType_t compute, cublasLtEpilogue_t epilogue,
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
  if (found < 1) fail_call(__FILE__, __LINE__, "cublasLtMatmulAlgoGetHeuristic", "no algorithm");
  CHECK_CUBLAS(cublasLtMatmul(lt, desc, &g->alpha, g->a, la, g->b, lb, &g->beta, g->c, lc, g->c, lc, &heuristic.algo,
                              workspace, workspace_size, stream));
  CHECK_CUBLAS(cublasLtMatmulPreferenceDestroy(preference));
  CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(la));
  CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(lb));
  CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(lc));
  CHECK_CUBLAS(cublasLtMatmulDescDestroy(desc));
}

void sgemm(cublasHandle_t handle, const gemm_t *g) {
  CHECK_CUBLAS(cublasSgemm_v2(handle, g->ta, g->tb, g->m, g->n, g->k, &g->alpha, g->a, g->lda, g->b, g->ldb, &g->beta,
                              g->c, g->ldc));
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* The hash of passthrough's outputs */

uint64_t fnv1a(const void *data, size_t bytes) {
  const unsigned char *p = data;
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}
