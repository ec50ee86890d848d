/* SPDX-License-Identifier: Apache-2.0 */
/* What cublas_user's modes share: checked calls, random operands, FP64 references, the bound check, the calls. */
#ifndef FASTGEMM_TESTS_CUBLAS_USER_SUPPORT_H
#define FASTGEMM_TESTS_CUBLAS_USER_SUPPORT_H
/* Every file of cublas_user includes this header first, so that this definition precedes every system header. */
#define _POSIX_C_SOURCE 200112L /* pthread_barrier_t and clock_gettime under -std=c99 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

/* Prints "FILE:LINE: CALL failed: WHAT" (FILE without its directories) and exits with 1. */
void fail_call(const char *file, int line, const char *call, const char *what);

#define CHECK_CUDA(call)                                                                                   \
  do {                                                                                                     \
    const cudaError_t check_error_ = (call);                                                               \
    if (check_error_ != cudaSuccess) fail_call(__FILE__, __LINE__, #call, cudaGetErrorName(check_error_)); \
  } while (0)

#define CHECK_CUBLAS(call)                                                      \
  do {                                                                          \
    const cublasStatus_t check_status_ = (call);                                \
    if (check_status_ != CUBLAS_STATUS_SUCCESS)                                 \
      fail_call(__FILE__, __LINE__, #call, cublasGetStatusName(check_status_)); \
  } while (0)

void *xmalloc(size_t bytes);

/* An all-ones byte pattern is a NaN in FP32: written before a call, any element the call leaves alone keeps exactly
   these bits, and any element it should have written but did not stays NaN. */
#define POISON_BYTE 0xff

/* Uniform in [-1, 1) with 24 random bits, so every value is an exact float; a fixed seed gives the same operands in
   every run, which passthrough's hashes rely on. */
void fill_uniform(float *x, size_t count, uint64_t seed);

double seconds(void);
int have_device(void);
void print_device(void);

/* Copies that the host can rely on at once: ordered on the stream the products use, finished on return. */
void copy_now(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, cudaStream_t stream);

char op_letter(cublasOperation_t op);

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

void operands_init(operands_t *o, int m, int n, int k);
/* New random values (the seed decides them) and their reference. */
void operands_fill(operands_t *o, cublasHandle_t handle, uint64_t seed);
void operands_free(operands_t *o);

/* Writes x (rows x cols, packed column-major) into dst with leading dimension ld as a call with operation op reads
   it: as it is for N, transposed for T and C (the same for real matrices). Other elements of dst keep their value. */
void store(float *dst, const float *x, int rows, int cols, cublasOperation_t op, int ld);

/* Rows of the matrix a call reads for an operand that is rows x cols after op. */
int stored_rows(cublasOperation_t op, int rows, int cols);

/* ---------------------------------------------------------------------------------------------------------------- */
/* The check */

typedef struct {
  double ratio;  /* the largest error over its bound */
  long long bad; /* elements outside their bound, NaN, or written where nothing should be */
  char first[256];
} verdict_t;

/* C after C := alpha op(A) op(B) + beta C [+ bias] [then relu], for the first `batch` of `slots` blocks of `stride`
   elements, block b from ops[b]; every element of the buffer outside those m x n products must keep the bits it had
   (`before`, the image of the buffer before the call). The bound is twice the one the interposer promises:
   2^-24 (1 + sqrt(k)) (|alpha| |A||B| + |beta| |C0|), with |bias| beside |beta C0| for the Lt epilogues. */
verdict_t check_product(const float *c, const float *before, int m, int n, int k, int ldc, long long stride, int batch,
                        int slots, double alpha, double beta, const operands_t *const *ops, const float *bias,
                        int relu);

/* Prints the case's line (and what failed); returns 1 when it failed. */
int report(const char *label, const verdict_t *v);

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
void lt_matmul(cublasLtHandle_t lt, const gemm_t *g, cublasComputeType_t compute, cublasLtEpilogue_t epilogue,
               const float *bias, void *workspace, size_t workspace_size, cudaStream_t stream);
void sgemm(cublasHandle_t handle, const gemm_t *g);

/* ---------------------------------------------------------------------------------------------------------------- */
/* The hash of passthrough's outputs */

/* FNV-1a, 64 bits, of the bytes. */
uint64_t fnv1a(const void *data, size_t bytes);

/* ---------------------------------------------------------------------------------------------------------------- */
/* The modes: each returns the program's exit status (cublas_user.c, cublas_user_products.c, cublas_user_passthrough.c,
   cublas_user_capture_threads.c). */

int mode_status(void);
int mode_products(void);
int mode_passthrough(void);
int mode_capture(void);
int mode_threads(void);

#endif
