/* SPDX-License-Identifier: Apache-2.0 */
/* The arguments of one cuBLAS product call as one line of text, printed by cublas_routing.c ("call", what it
 * passes) and by the stand-in cuBLAS ("real", what reaches it): run_routing.cmake compares the two lines as text, so
 * both sides must print through these functions. */
#ifndef FASTGEMM_TESTS_CUBLAS_ROUTING_CALLS_H
#define FASTGEMM_TESTS_CUBLAS_ROUTING_CALLS_H

#include <stdio.h>

#include <cublasLt.h>
#include <cublas_v2.h>

/* Every argument of the classic product entry points; an entry point fills those it has and leaves the others 0. */
struct routing_gemm {
  const char *entry;
  const void *handle;
  long long transa, transb, m, n, k, batch;
  const void *alpha, *a;
  long long a_type, lda, stride_a;
  const void *b;
  long long b_type, ldb, stride_b;
  const void *beta, *c;
  long long c_type, ldc, stride_c, compute, algo;
};

/* Flushed at once, so that the lines of the program, of the stand-in and of the interposer's log (stderr) keep the
 * order in which the calls made them. */
static inline void routing_print_gemm(const char *word, const struct routing_gemm *g) {
  printf(
      "%s %s handle=%p transa=%lld transb=%lld m=%lld n=%lld k=%lld batch=%lld alpha=%p A=%p Atype=%lld lda=%lld "
      "strideA=%lld B=%p Btype=%lld ldb=%lld strideB=%lld beta=%p C=%p Ctype=%lld ldc=%lld strideC=%lld "
      "compute=%lld algo=%lld\n",
      word, g->entry, g->handle, g->transa, g->transb, g->m, g->n, g->k, g->batch, g->alpha, g->a, g->a_type, g->lda,
      g->stride_a, g->b, g->b_type, g->ldb, g->stride_b, g->beta, g->c, g->c_type, g->ldc, g->stride_c, g->compute,
      g->algo);
  fflush(stdout);
}

static inline void routing_print_lt(const char *word, cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                    const void *alpha, const void *a, cublasLtMatrixLayout_t a_desc, const void *b,
                                    cublasLtMatrixLayout_t b_desc, const void *beta, const void *c,
                                    cublasLtMatrixLayout_t c_desc, const void *d, cublasLtMatrixLayout_t d_desc,
                                    const cublasLtMatmulAlgo_t *algo, const void *workspace, size_t workspace_bytes,
                                    cudaStream_t stream) {
  printf(
      "%s cublasLtMatmul handle=%p desc=%p alpha=%p A=%p Adesc=%p B=%p Bdesc=%p beta=%p C=%p Cdesc=%p D=%p Ddesc=%p "
      "algo=%p workspace=%p workspaceSize=%zu stream=%p\n",
      word, (const void *)handle, (const void *)desc, alpha, a, (const void *)a_desc, b, (const void *)b_desc, beta, c,
      (const void *)c_desc, d, (const void *)d_desc, (const void *)algo, workspace, workspace_bytes,
      (const void *)stream);
  fflush(stdout);
}

#endif
