/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fastgemm: FP32 matrix products and a batched "row mean, then matrix-vector product" on CUDA GPUs.
 *
 * This header is the library's whole C ABI. It compiles as C99 and C++11 and includes only <stdint.h>,
 * <stddef.h> and <cuda_runtime_api.h>.
 *
 * Conventions
 *  - Every function returns an fg_status_t unless it is a pure query, and never throws, aborts or exits.
 *    It prints nothing, except that with the environment variable FASTGEMM_LOG=1 every call writes one
 *    line to stderr (its arguments, the algorithm that ran and the status). On any error nothing is
 *    written to device memory.
 *  - Sizes, leading dimensions, strides and counts are int64_t.
 *  - Matrix pointers are device-accessible memory: cudaMalloc, cudaMallocAsync, managed memory, or pinned
 *    host memory from cudaMallocHost / cudaHostRegister (which the device can address). Pageable host
 *    memory is rejected with FG_STATUS_INVALID_VALUE. Scalars (alpha, beta) are host values.
 *  - Calls are asynchronous on the handle's stream: errors found while enqueuing are returned, errors of
 *    a running kernel surface at the caller's next synchronization.
 *  - Enumerations carry the CBLAS values, so CBLAS callers can pass theirs through. Values never change
 *    once released; new ones are added.
 */
#ifndef FASTGEMM_FASTGEMM_H
#define FASTGEMM_FASTGEMM_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#if defined(_WIN32)
#if defined(FASTGEMM_BUILDING_SHARED)
#define FG_API __declspec(dllexport)
#else
#define FG_API
#endif
#else
#define FG_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Version                                                                                          */
/* ---------------------------------------------------------------------------------------------- */
#define FG_VERSION_MAJOR 0
#define FG_VERSION_MINOR 1
#define FG_VERSION_PATCH 0
#define FG_VERSION (FG_VERSION_MAJOR * 10000 + FG_VERSION_MINOR * 100 + FG_VERSION_PATCH)

/* Returns the FG_VERSION the library was built with; compare it with this header's FG_VERSION. */
FG_API int fg_version(void);

/* ---------------------------------------------------------------------------------------------- */
/* Status                                                                                           */
/* ---------------------------------------------------------------------------------------------- */
typedef enum fg_status_t {
  FG_STATUS_SUCCESS = 0,
  FG_STATUS_INVALID_VALUE = 1,  /* an argument is outside its domain; the message names it */
  FG_STATUS_INVALID_HANDLE = 2, /* NULL handle */
  FG_STATUS_NOT_SUPPORTED = 3,  /* the selected algorithm cannot run this problem (alignment, size, device) */
  FG_STATUS_NO_DEVICE = 4,      /* no usable CUDA device or driver */
  FG_STATUS_ALLOC_FAILED = 5,   /* memory could not be allocated; nothing was written */
  FG_STATUS_CUDA_ERROR = 6,     /* a CUDA runtime call failed; fg_last_cuda_error() has its cudaError_t */
  FG_STATUS_CUBLAS_ERROR = 7,   /* a cuBLAS call failed */
  FG_STATUS_INTERNAL_ERROR = 8
} fg_status_t;

/* Returns the enumerator's name, e.g. "FG_STATUS_INVALID_VALUE"; "FG_STATUS_UNKNOWN" for any other
   value. The string is static. */
FG_API const char *fg_status_name(fg_status_t status);

/* Returns one static sentence describing the status; a sentence about an unknown status for any other
   value. */
FG_API const char *fg_status_string(fg_status_t status);

/* Returns this thread's last failure message, naming the function and the argument or call that failed,
   e.g. "fg_sgemm: lda = 3 must be >= max(1, k) = 16 for FG_ROW_MAJOR, FG_OP_N"; "" if no call of this
   thread has failed. Successful calls leave it as it is. The pointer stays valid until this thread's next
   failing call. */
FG_API const char *fg_last_error_message(void);

/* Returns the cudaError_t behind this thread's last FG_STATUS_CUDA_ERROR (or FG_STATUS_NO_DEVICE, when a
   CUDA call reported it); 0 if there was none. */
FG_API int fg_last_cuda_error(void);

/* ---------------------------------------------------------------------------------------------- */
/* Handle                                                                                           */
/* ---------------------------------------------------------------------------------------------- */
typedef struct fg_context *fg_handle_t;

/* Creates a handle bound to the calling thread's current CUDA device, on the legacy default stream.
   Returns FG_STATUS_SUCCESS and sets *handle; FG_STATUS_INVALID_VALUE if handle is NULL;
   FG_STATUS_NO_DEVICE when there is no usable device or driver (*handle is set to NULL);
   FG_STATUS_ALLOC_FAILED or FG_STATUS_CUDA_ERROR otherwise. The driver's stub library (a toolkit installed
   without a driver) counts as no driver. The handle's math mode is FG_MATH_FP32, or what the environment
   variable FASTGEMM_MATH says ("fp32" or "fp32_emulated", read by each fg_create); any other value of it
   makes fg_create return FG_STATUS_INVALID_VALUE naming FASTGEMM_MATH. Its reproducibility is
   FG_REPRODUCIBLE_RUN, or what FASTGEMM_REPRODUCIBLE says ("run" or "shape", read by each fg_create); any
   other value of it makes fg_create return FG_STATUS_INVALID_VALUE naming FASTGEMM_REPRODUCIBLE. A handle is
   used by one thread at a time; different handles are independent and may run concurrently from different
   threads. */
FG_API fg_status_t fg_create(fg_handle_t *handle);

/* Releases the handle and the device memory it holds. It waits for the work that used the handle's
   workspace (not for its stream, which may have been destroyed already); when the handle has run a cuBLAS
   algorithm, cuBLAS's own release (cublasDestroy) synchronizes the whole device. NULL is accepted and
   returns FG_STATUS_SUCCESS. */
FG_API fg_status_t fg_destroy(fg_handle_t handle);

/* Sets the stream every later call of this handle enqueues on; 0 is the legacy default stream;
   cudaStreamPerThread is the calling thread's default stream, whichever thread calls. Nothing is freed or
   reallocated: the next call that uses the workspace waits (on the device) for the work that used it last,
   so a call captured in a CUDA graph after any sequence of stream changes replays any number of times.
   A thread that has called fastgemm on cudaStreamPerThread waits, when it exits, for the work on its
   per-thread default stream: the CUDA driver can otherwise hang that exit once the process has used the
   stream-ordered allocator (cudaMallocAsync; docs/c-api.md says where it was seen).
   Returns FG_STATUS_INVALID_HANDLE for a NULL handle. */
FG_API fg_status_t fg_set_stream(fg_handle_t handle, cudaStream_t stream);

/* Stores the handle's stream in *stream. Returns FG_STATUS_INVALID_HANDLE for a NULL handle,
   FG_STATUS_INVALID_VALUE for a NULL stream pointer. */
FG_API fg_status_t fg_get_stream(fg_handle_t handle, cudaStream_t *stream);

/* ---------------------------------------------------------------------------------------------- */
/* SGEMM                                                                                            */
/* ---------------------------------------------------------------------------------------------- */
typedef enum fg_layout_t { FG_ROW_MAJOR = 101, FG_COL_MAJOR = 102 } fg_layout_t;
typedef enum fg_op_t { FG_OP_N = 111, FG_OP_T = 112, FG_OP_C = 113 } fg_op_t; /* FG_OP_C means FG_OP_T for real data */

/* C := alpha * op(A) * op(B) + beta * C, with op(A) m x k, op(B) k x n and C m x n, all stored in the given
   layout. Semantics are the reference BLAS's:
   - m, n, k >= 0. m == 0 or n == 0: success, nothing is read or written.
   - k == 0 or alpha == 0: C := beta * C; A and B are not read and may be NULL. beta == 1 then leaves C as it is.
   - beta == 0: C is not read; NaN or Inf already in C never reaches the result.
   - Leading dimensions: FG_ROW_MAJOR: lda >= max(1, transa == N ? k : m), ldb >= max(1, transb == N ? n : k),
     ldc >= max(1, n); FG_COL_MAJOR: lda >= max(1, transa == N ? m : k), ldb >= max(1, transb == N ? k : n),
     ldc >= max(1, m). They are checked even when nothing is read.
   - A, B and C must be device-accessible (see the conventions above) wherever they are read or written,
     and each allocation must hold every element the sizes reach (checked against the driver's record of
     the allocation).
   - C must not share memory with A or B (the reference BLAS leaves that undefined; here it is
     FG_STATUS_INVALID_VALUE naming C). Blocks of one array with the same leading dimension, side by side
     within its lines or in lines of their own, are apart and accepted.
   Any pointer alignment and any leading dimension work with FG_SGEMM_AUTO. For one algorithm, device and
   build, the same inputs give bitwise the same C.
   Returns FG_STATUS_SUCCESS; FG_STATUS_INVALID_HANDLE for a NULL handle; FG_STATUS_INVALID_VALUE for a bad
   enumerator, a negative size, a short leading dimension, a NULL or pageable-host pointer that would be
   read or written, or sizes whose element offsets overflow int64 (the message names the argument);
   FG_STATUS_NOT_SUPPORTED when a forced algorithm cannot run the problem (the message names the unmet
   condition); FG_STATUS_CUDA_ERROR / FG_STATUS_CUBLAS_ERROR / FG_STATUS_ALLOC_FAILED when the device
   refuses. On every error nothing is written. */
FG_API fg_status_t fg_sgemm(fg_handle_t handle, fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m,
                            int64_t n, int64_t k, float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                            float beta, float *C, int64_t ldc);

/* batch_count independent products C_i := alpha * op(A_i) * op(B_i) + beta * C_i, where
   A_i = A + i * stride_a, B_i = B + i * stride_b and C_i = C + i * stride_c (strides in elements).
   Everything fg_sgemm says holds for each product, and:
   - batch_count >= 0; batch_count == 0: success, nothing is read or written.
   - Strides >= 0. A stride of 0 for A or B broadcasts one matrix to every product.
   - C's stride must keep the products apart: either stride_c is at least one C matrix's extent
     (stacked matrices), or the batch_count matrices' elements are apart in any other way (side by side
     within ldc, or interleaved lines such as row-major m = 2, n = 1, ldc = 3, stride_c = 2). Anything
     that writes an element twice, stride_c == 0 with batch_count > 1 included, returns
     FG_STATUS_INVALID_VALUE naming stride_c.
   Returns as fg_sgemm does. */
FG_API fg_status_t fg_sgemm_strided_batched(fg_handle_t handle, fg_layout_t layout, fg_op_t transa, fg_op_t transb,
                                            int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                                            int64_t stride_a, const float *B, int64_t ldb, int64_t stride_b, float beta,
                                            float *C, int64_t ldc, int64_t stride_c, int64_t batch_count);

typedef enum fg_sgemm_algo_t {
  FG_SGEMM_AUTO = 0,          /* the fastest known for the problem on this device (default) */
  FG_SGEMM_NAIVE = 1,         /* one thread per element of C */
  FG_SGEMM_SMEM = 2,          /* 128x128x8 shared-memory tiles, 8x8 outputs per thread */
  FG_SGEMM_SMEM_VEC4 = 3,     /* + 128-bit global loads and stores */
  FG_SGEMM_BANK_FREE = 4,     /* + A tile stored transposed: conflict-free 128-bit shared reads */
  FG_SGEMM_DOUBLE_BUFFER = 5, /* + two shared-memory stages, loads overlapped with math */
  FG_SGEMM_PIPELINED = 6,     /* 64x128 warp-tiled blocks, cp.async pipeline 4 k-tiles deep, any alignment */
  FG_SGEMM_SMALL_TILE = 7,    /* 16x32 tiles of one warp, 8 k-tiles in flight: for tiny problems */
  FG_SGEMM_SPLIT_K = 8,       /* pipelined with k split over blocks and summed: small C, long k */
  FG_SGEMM_OZAKI_INT8 = 9,    /* emulated FP32: exact INT8 tensor-core products of residues (Ozaki scheme II) */
  /* 10..99: further kernels of the project's own, added as they land */
  FG_SGEMM_CUBLAS = 100 /* cuBLAS with FP32 math (TF32 off), for comparison */
} fg_sgemm_algo_t;

/* Selects the algorithm later fg_sgemm* calls of this handle use (FG_SGEMM_AUTO by default). Returns
   FG_STATUS_INVALID_HANDLE for a NULL handle, FG_STATUS_INVALID_VALUE for a value that is no
   fg_sgemm_algo_t, FG_STATUS_NOT_SUPPORTED for one this build does not carry. A forced algorithm that
   cannot run a given problem makes that call return FG_STATUS_NOT_SUPPORTED; FG_SGEMM_AUTO never does. */
FG_API fg_status_t fg_set_sgemm_algo(fg_handle_t handle, fg_sgemm_algo_t algo);

/* Stores the selected algorithm in *algo. Returns FG_STATUS_INVALID_HANDLE for a NULL handle,
   FG_STATUS_INVALID_VALUE for a NULL algo. */
FG_API fg_status_t fg_get_sgemm_algo(fg_handle_t handle, fg_sgemm_algo_t *algo);

/* Stores in *algo the algorithm the last successful fg_sgemm* call of this handle ran: AUTO's choice when
   AUTO is selected, never FG_SGEMM_AUTO itself, except before any product has run and after a call that
   needed no product (m, n or batch_count 0, or only C := beta * C), which store FG_SGEMM_AUTO. Where that
   call chose on the device (AUTO in FG_MATH_FP32_EMULATED: the emulation, or FP32 throughout), it waits for
   the call's work to end, then tells which ran; a failure of that work is returned as FG_STATUS_CUDA_ERROR.
   Returns FG_STATUS_INVALID_HANDLE for a NULL handle, FG_STATUS_INVALID_VALUE for a NULL algo. */
FG_API fg_status_t fg_get_last_sgemm_algo(fg_handle_t handle, fg_sgemm_algo_t *algo);

/* Returns the algorithm's short static name, e.g. "double_buffer"; "unknown" for any other value. */
FG_API const char *fg_sgemm_algo_name(fg_sgemm_algo_t algo);

/* What the last fg_sgemm* call of this handle did in the emulated mode: *moduli is the moduli count of its
   INT8 products (0 when it ran no emulation, failed, was fg_sgemm_host, whose tiles are not reported, or was
   captured into a CUDA graph, whose replays choose on the device), *fp32_elements the elements of C whose
   certificate did not hold at that count before the products (see the math mode's guarantee below): each was
   recomputed in FP32, unless the product's value certified it. Where the call chose on the device (AUTO), it
   waits for the call's work to end first, as fg_get_last_sgemm_algo does.
   Returns FG_STATUS_INVALID_HANDLE for a NULL handle, FG_STATUS_INVALID_VALUE for a NULL moduli or
   fp32_elements. */
FG_API fg_status_t fg_get_last_sgemm_emulation(fg_handle_t handle, int *moduli, int64_t *fp32_elements);

/* ---------------------------------------------------------------------------------------------- */
/* Math mode                                                                                        */
/* ---------------------------------------------------------------------------------------------- */
typedef enum fg_math_mode_t {
  FG_MATH_FP32 = 0,         /* default: IEEE FP32 products and sums (FFMA); no tensor cores */
  FG_MATH_FP32_EMULATED = 1 /* FP32 accuracy from tensor-core products of split operands (see below) */
} fg_math_mode_t;

/* Sets the math mode of the handle's later fg_sgemm* calls (fg_sgemm_host included). In FG_MATH_FP32,
   FG_SGEMM_AUTO never uses tensor cores. In FG_MATH_FP32_EMULATED, FG_SGEMM_AUTO runs an emulating
   algorithm (FG_SGEMM_OZAKI_INT8) where it is faster and its accuracy holds for the operands at hand, and a
   plain FP32 algorithm elsewhere. To tell, it looks at the operands first, on the device, and chooses there:
   the call is a CUDA graph (the look, a kernel that chooses the moduli count, or FP32 throughout where the
   emulation would not pay or cannot certify, and a branch for each choice), so it waits for nothing and is
   asynchronous like an FP32 call. The handle keeps the graphs of its last 64 distinct calls (a call is its
   problem, its pointers, alpha, beta and the workspace): one met again launches its graph, for a few
   microseconds of host time, and chooses anew for the operands it finds; the first call of each makes its
   graph, for about 3 ms of host time at 4096^3 and 27 ms at 16384^3 (H100) before its work starts. A call on
   a stream being captured into a CUDA graph records the same nodes into the caller's graph. A forced
   algorithm runs whatever the mode; FG_SGEMM_OZAKI_INT8 forced outside a capture waits for the look (it
   synchronizes the handle's stream once), and returns FG_STATUS_NOT_SUPPORTED, having written nothing, for
   operands it cannot certify at any count that pays.
   The accuracy contract of FG_MATH_FP32_EMULATED: on fastgemm's accuracy suite (`fastgemm-bench accuracy`),
   for every input distribution and size in it, the normwise relative error ||C - R||_F / ||R||_F and the
   median elementwise error |C - R|_ij / (|A||B|)_ij are no larger than those of cuBLAS FP32 on the same
   inputs, and the largest elementwise error is at most twice cuBLAS's; R is the exact product. NaN and Inf
   in A or B give the NaN/Inf pattern FP32 arithmetic gives. Results are bitwise reproducible, as in
   FG_MATH_FP32.
   The per-element guarantee, for any operands: every element an emulating algorithm returns satisfies
   |C - R|_ij <= 2^-24 (1 + sqrt(t_ij)) (|alpha| |A||B| + |beta| |C0|)_ij, t_ij = min(k, the nonzeros of row i
   of op(A), the nonzeros of column j of op(B)), at least 1 (so within 2^-24 (1 + sqrt(k)) always), certified
   on the device for the operands at hand by a rigorous bound; an element that cannot be certified is
   recomputed in FP32 (or the call runs FP32 throughout), never returned uncertified. Where FP32 is exact (integer
   operands whose exact partial sums are integers below 2^24), C is the exact product, bit for bit. Returns
   FG_STATUS_INVALID_HANDLE for a NULL handle, FG_STATUS_INVALID_VALUE for a value that is no fg_math_mode_t. */
FG_API fg_status_t fg_set_math_mode(fg_handle_t handle, fg_math_mode_t mode);

/* Stores the handle's math mode in *mode. Returns FG_STATUS_INVALID_HANDLE for a NULL handle,
   FG_STATUS_INVALID_VALUE for a NULL mode. */
FG_API fg_status_t fg_get_math_mode(fg_handle_t handle, fg_math_mode_t *mode);

/* Returns "fp32" or "fp32_emulated"; "unknown" for any other value. The string is static. */
FG_API const char *fg_math_mode_name(fg_math_mode_t mode);

/* ---------------------------------------------------------------------------------------------- */
/* Reproducibility across shapes                                                                    */
/* ---------------------------------------------------------------------------------------------- */
typedef enum fg_reproducibility_t {
  FG_REPRODUCIBLE_RUN = 0,  /* default: the same call on the same device gives the same bits */
  FG_REPRODUCIBLE_SHAPE = 1 /* and an element of C does not depend on the call's shape (see below) */
} fg_reproducibility_t;

/* Sets how far the handle's later fg_sgemm* calls (fg_sgemm_host included) are reproducible.
   FG_REPRODUCIBLE_RUN: the same inputs give bitwise the same C, call after call, for one algorithm, device
   and build; AUTO may choose another algorithm, tiling or split of k for another shape, so one element of C
   may round differently inside a wider product.
   FG_REPRODUCIBLE_SHAPE, which applies to FG_MATH_FP32: every element of C is computed by the same sequence
   of FP32 operations for a given k, alpha and beta, its row of op(A) and its column of op(B), whatever m,
   n, the layout, the transposes, the leading dimensions, the pointers' alignment, the batch, the stream,
   and, for fg_sgemm_host, the tiling and the number of devices. That sequence is acc = 0, then
   acc = fma(op(A)[i][l], op(B)[l][j], acc) for l = 0 .. k-1 in order, then (with a sum of -0 taken as +0)
   C = alpha * acc when beta == 0, else fma(beta, C, alpha * acc); k == 0 or alpha == 0 give C = beta * C,
   or 0 when beta == 0. So the same numbers give the same bits inside any product, as the reference BLAS
   does. FG_SGEMM_AUTO then chooses only among the algorithms that compute that sequence (the project's own
   FP32 kernels, never a split of k nor cuBLAS), which costs speed where those were faster. In
   FG_MATH_FP32_EMULATED the handle runs these FP32 algorithms only (the emulation is not used). A forced
   algorithm that cannot compute that sequence (FG_SGEMM_SPLIT_K, FG_SGEMM_OZAKI_INT8, FG_SGEMM_CUBLAS)
   returns FG_STATUS_NOT_SUPPORTED naming why.
   fg_sgemm_host does not cut k into chunks in this setting: a product whose k exceeds 4194304 returns
   FG_STATUS_NOT_SUPPORTED there, and a deep k makes its tiles narrower (see docs/reproducibility.md).
   Returns FG_STATUS_INVALID_HANDLE for a NULL handle, FG_STATUS_INVALID_VALUE for a value that is no
   fg_reproducibility_t. */
FG_API fg_status_t fg_set_reproducibility(fg_handle_t handle, fg_reproducibility_t level);

/* Stores the handle's reproducibility in *level. Returns FG_STATUS_INVALID_HANDLE for a NULL handle,
   FG_STATUS_INVALID_VALUE for a NULL level. */
FG_API fg_status_t fg_get_reproducibility(fg_handle_t handle, fg_reproducibility_t *level);

/* Returns "run" or "shape"; "unknown" for any other value. The string is static. */
FG_API const char *fg_reproducibility_name(fg_reproducibility_t level);

/* ---------------------------------------------------------------------------------------------- */
/* Operands in host memory, any size                                                               */
/* ---------------------------------------------------------------------------------------------- */
/* fg_sgemm for operands that may live anywhere: pageable or pinned host memory, managed memory, or device
   memory (of any device); none needs to fit on a device. C is computed in tiles (1024 to 4096 on a side,
   the largest that cut C's longer side in four; k in balanced chunks about as deep as a tile is wide, at
   least 2048 where k and the device's memory allow) on the handle's devices (fg_set_devices; by default
   the handle's own device), A and B panels and C tiles staged through device buffers and, for pageable
   memory, pinned host buffers, with copies in both directions overlapped with the products; device
   memory of a worker's device is used in place. The buffers are allocated by the first call that needs
   them and kept by the handle for later calls. On each device: as many panel and tile buffers as the
   call's plan uses within the device's free memory less 768 MiB (a row of A's panels and every panel of
   B where they fit, so that each crosses the bus once). In pinned host memory, for pageable operands:
   160 MiB per device, plus, with several devices and a pageable B, whose pieces the host packs for all of
   them at once, 5 pieces of up to 64 MiB per device (3 in flight, 2 left packed for the other devices).
   A product of one tile on the handle's own device whose operands, all in host memory, fit 4 MiB goes
   through one 4 MiB pinned buffer and one 4 MiB device buffer instead, on the calling thread and the
   handle's stream (a tiny product's time is then mostly its two copies).
   Synchronous: the handle's stream is synchronized first (earlier work may write the operands), and the
   call returns once C is written. Semantics, validation and algorithm are fg_sgemm's, with any non-NULL
   pointer accepted (one in an allocation the driver records, device, pinned or managed memory, must lie
   within it, as fg_sgemm checks; in FG_MATH_FP32_EMULATED, AUTO's tiles choose on the device as fg_sgemm
   does, waiting for nothing, while a forced FG_SGEMM_OZAKI_INT8 waits for its look at each tile step); nothing
   is written to C before every argument has been checked and the buffers
   allocated. Pageable operands are checked against the process's memory mappings over their extents (A and
   B readable, C writable): an operand shorter than its sizes and leading dimension is
   FG_STATUS_INVALID_VALUE naming it and the first address it may not use, never a crash (where /proc is
   hidden from the process, that check is skipped). Each element's k order is fixed by the problem alone:
   for one algorithm and device model, C is bitwise the same for any number of devices and any order in
   which they take tiles (with a single device, operands in its memory are read in place, which can change
   the bits only where the algorithm's choice depends on their alignment or leading dimension). The
   environment variable FASTGEMM_HOST_TILE (a positive integer; a testing aid) caps the tile edges and k
   chunk, forcing many small tiles. Returns as fg_sgemm does; a failure of the device after tiles were
   written (FG_STATUS_CUDA_ERROR) may leave part of C written. */
FG_API fg_status_t fg_sgemm_host(fg_handle_t handle, fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m,
                                 int64_t n, int64_t k, float alpha, const float *A, int64_t lda, const float *B,
                                 int64_t ldb, float beta, float *C, int64_t ldc);

/* Selects the devices fg_sgemm_host spreads its tiles over: `count` distinct valid ordinals; an empty list
   (count 0, devices NULL or not) returns to the handle's own device. The caller's current device is never
   changed. Returns FG_STATUS_INVALID_HANDLE for a NULL handle, FG_STATUS_INVALID_VALUE (naming the entry)
   for an ordinal that is no device or is listed twice, a negative count, or NULL with count > 0. */
FG_API fg_status_t fg_set_devices(fg_handle_t handle, const int *devices, int count);

/* Stores the number of fg_sgemm_host's devices in *count and the first min(capacity, *count) ordinals in
   devices (which may be NULL when capacity is 0). Returns FG_STATUS_INVALID_HANDLE for a NULL handle,
   FG_STATUS_INVALID_VALUE for a NULL count, a negative capacity, or NULL devices with capacity > 0. */
FG_API fg_status_t fg_get_devices(fg_handle_t handle, int *devices, int capacity, int *count);

/* ---------------------------------------------------------------------------------------------- */
/* Row mean, then matrix-vector product                                                            */
/* ---------------------------------------------------------------------------------------------- */
typedef enum fg_dtype_t { FG_F32 = 0, FG_F64 = 1 } fg_dtype_t;

/* output[i*N + k] = sum_j matrix[i*L + j] * (1/M) * sum_m input[(k*L + j)*M + m]
   input:  N x L x M, row-major (N batches of L rows of M values)
   matrix: L x L, row-major
   output: L x N, row-major (column k holds batch k)
   All three arrays hold dtype elements, are device-accessible and dense, and are aligned to their
   element (4 bytes for FG_F32, 8 for FG_F64, as cuBLAS requires): a pointer off its element boundary is
   FG_STATUS_INVALID_VALUE naming it, never a fault.
   L == 0 or N == 0: success, nothing is read or written. M must be >= 1 (a mean of nothing is
   FG_STATUS_INVALID_VALUE, whatever L and N are). output must not overlap input or matrix.
   Returns FG_STATUS_SUCCESS; FG_STATUS_INVALID_HANDLE for a NULL handle; FG_STATUS_INVALID_VALUE for a bad
   dtype, a negative size, M == 0, a NULL, pageable-host or misaligned pointer, an array longer than its
   allocation, or sizes whose element counts overflow int64; FG_STATUS_NOT_SUPPORTED when a forced
   algorithm cannot run the shape (or needs more than a caller's workspace holds); FG_STATUS_ALLOC_FAILED when
   the workspace some algorithms need cannot be allocated; FG_STATUS_CUDA_ERROR / FG_STATUS_CUBLAS_ERROR
   when the device refuses. On every error nothing is written. */
FG_API fg_status_t fg_rowmean_matvec(fg_handle_t handle, fg_dtype_t dtype, const void *input, const void *matrix,
                                     void *output, int64_t L, int64_t M, int64_t N);

typedef enum fg_rowmean_algo_t {
  FG_ROWMEAN_AUTO = 0,            /* the fastest known (default) */
  FG_ROWMEAN_SINGLE_BLOCK = 1,    /* one block of L threads walks all N batches */
  FG_ROWMEAN_BLOCK_PER_BATCH = 2, /* one block per batch, shared-memory tree reduction per output row */
  FG_ROWMEAN_COALESCED = 3,       /* row means read with coalesced, warp-shuffle reductions; no workspace */
  FG_ROWMEAN_TWO_PASS = 4,        /* warp-per-row means into a workspace, then a tiled L x L product; any L */
  FG_ROWMEAN_FUSED = 5,           /* one pass, means on chip, product on FP64 tensor cores; L up to ~3600 */
  FG_ROWMEAN_STAGED = 6,          /* means (long rows split) into a workspace, then the product in double; any L */
  FG_ROWMEAN_RELAY = 7,           /* one pass, means relayed through L2 to FP64 tensor cores beside the read */
  FG_ROWMEAN_PIPELINED = 7,       /* deprecated: the former name of FG_ROWMEAN_RELAY */
  /* 8..99: the project's own faster kernels */
  FG_ROWMEAN_CUBLAS = 100 /* gemv for the means, then gemm, through cuBLAS */
} fg_rowmean_algo_t;

/* Selects the algorithm later fg_rowmean_matvec calls of this handle use (FG_ROWMEAN_AUTO by default).
   Returns FG_STATUS_INVALID_HANDLE for a NULL handle, FG_STATUS_INVALID_VALUE for a value that is no
   fg_rowmean_algo_t, FG_STATUS_NOT_SUPPORTED for one this build does not carry. */
FG_API fg_status_t fg_set_rowmean_algo(fg_handle_t handle, fg_rowmean_algo_t algo);

/* Stores the selected algorithm in *algo. Returns FG_STATUS_INVALID_HANDLE for a NULL handle,
   FG_STATUS_INVALID_VALUE for a NULL algo. */
FG_API fg_status_t fg_get_rowmean_algo(fg_handle_t handle, fg_rowmean_algo_t *algo);

/* Stores in *algo the algorithm the last successful fg_rowmean_matvec call of this handle ran: AUTO's choice
   when AUTO is selected, never FG_ROWMEAN_AUTO itself, except before any call has run and after a call with
   nothing to compute (L or N 0), which store FG_ROWMEAN_AUTO. A forced algorithm runs itself or refuses
   (FG_STATUS_NOT_SUPPORTED); it never hands the problem to another, so this is the selected one whenever an
   algorithm is forced. Returns FG_STATUS_INVALID_HANDLE for a NULL handle, FG_STATUS_INVALID_VALUE for a NULL
   algo. */
FG_API fg_status_t fg_get_last_rowmean_algo(fg_handle_t handle, fg_rowmean_algo_t *algo);

/* Returns the algorithm's short static name, e.g. "coalesced" ("relay" for FG_ROWMEAN_RELAY, which
   FG_ROWMEAN_PIPELINED is another name of); "unknown" for any other value. */
FG_API const char *fg_rowmean_algo_name(fg_rowmean_algo_t algo);

/* ---------------------------------------------------------------------------------------------- */
/* Workspace                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

/* By default a handle owns its workspace: it grows, in stream order, on the first call of a shape class
   that needs more, and is kept (so later calls, and their capture in a CUDA graph, allocate nothing).
   fg_set_workspace hands the handle `bytes` of caller-owned device memory instead, aligned to 256 bytes
   (cudaMalloc's memory is), as cublasSetWorkspace does: from then on the handle never allocates device
   memory, cuBLAS included (it gets the part of the workspace the algorithm leaves), so any call can be
   captured on any stream. AUTO then runs the fastest algorithm that fits (rowmean with a workspace too
   small for its staged arrays and L past what a block's shared memory holds, about 29000 rows, has none:
   FG_STATUS_NOT_SUPPORTED); a forced algorithm that needs more returns FG_STATUS_NOT_SUPPORTED naming the
   bytes it needs. The caller keeps the memory valid until the calls that used it have completed. NULL, 0
   returns to a handle-owned workspace.
   Returns FG_STATUS_SUCCESS; FG_STATUS_INVALID_HANDLE for a NULL handle; FG_STATUS_INVALID_VALUE for NULL
   with bytes != 0, a pointer not aligned to 256 bytes, or memory that is not the handle's device's or
   holds fewer than `bytes`. */
FG_API fg_status_t fg_set_workspace(fg_handle_t handle, void *workspace, size_t bytes);

/* Store in *bytes the workspace the handle's selected algorithm (AUTO's first choice, for AUTO) needs for
   that product or rowmean problem, the most that any pointer alignment and leading dimension needs;
   0 when none, or when the call would run no product. Arguments are checked as fg_sgemm_strided_batched
   (dense batches) and fg_rowmean_matvec check theirs. Returns FG_STATUS_SUCCESS;
   FG_STATUS_INVALID_HANDLE for a NULL handle; FG_STATUS_INVALID_VALUE for a NULL bytes or a bad argument;
   FG_STATUS_NOT_SUPPORTED when a forced algorithm cannot run the problem. */
FG_API fg_status_t fg_sgemm_workspace_size(fg_handle_t handle, fg_layout_t layout, fg_op_t transa, fg_op_t transb,
                                           int64_t m, int64_t n, int64_t k, int64_t batch_count, size_t *bytes);
FG_API fg_status_t fg_rowmean_workspace_size(fg_handle_t handle, fg_dtype_t dtype, int64_t L, int64_t M, int64_t N,
                                             size_t *bytes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FASTGEMM_FASTGEMM_H */
