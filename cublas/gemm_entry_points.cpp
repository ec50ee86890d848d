// SPDX-License-Identifier: Apache-2.0
// cuBLAS's FP32 product entry points: cublasSgemm_v2, its strided batched form, cublasGemmEx and its strided batched
// form with FP32 types and CUBLAS_COMPUTE_32F, each with its _64 variant. The pointer-array batched forms are
// defined too, and always pass through: their arrays of addresses live in device memory, and reading them on the
// host would synchronize the call.
#include <cublas_v2.h>

#include <algorithm>
#include <cstdio>

#include "gemm_calls.hpp"

namespace fastgemm_cublas {

void log_call(const Product &p, const char *route, const std::string &why) {
  log_line("%s m=%lld n=%lld k=%lld batch=%lld -> %s (%s)", p.entry, static_cast<long long>(p.m),
           static_cast<long long>(p.n), static_cast<long long>(p.k), static_cast<long long>(p.batch), route,
           why.c_str());
}

namespace {

// A cuBLAS call of the classic API, as its arguments give it.
struct ClassicCall {
  cublasHandle_t handle;
  cublasOperation_t transa, transb;
  int64_t m, n, k, batch;
  const float *alpha;
  const float *a;
  int64_t lda, stride_a;
  const float *b;
  int64_t ldb, stride_b;
  const float *beta;
  float *c;
  int64_t ldc, stride_c;
};

bool real_op(cublasOperation_t op, bool *transposed) {
  if (op != CUBLAS_OP_N && op != CUBLAS_OP_T && op != CUBLAS_OP_C) return false;
  *transposed = op != CUBLAS_OP_N;
  return true;
}

// The flags that concern other precisions only: reduced-precision reductions (FP16 outputs) and
// CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH (8, double precision; named by number, as toolkits before 13.0 lack it).
const char *math_refusal(cublasMath_t mode) {
  constexpr int kOtherPrecisions = CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION | 8;
  switch (static_cast<int>(mode) & ~kOtherPrecisions) {
    case CUBLAS_DEFAULT_MATH: return nullptr;
    case CUBLAS_TENSOR_OP_MATH: return "the handle's CUBLAS_TENSOR_OP_MATH (FP16 tensor cores for FP32)";
    case CUBLAS_PEDANTIC_MATH: return "the handle's CUBLAS_PEDANTIC_MATH";
    case CUBLAS_TF32_TENSOR_OP_MATH: return "the handle's CUBLAS_TF32_TENSOR_OP_MATH";
    default: return "the handle's math mode asks for another arithmetic";
  }
}

// Every check of a classic call, cheapest first; the product is filled as far as the sizes go, for the log.
Decision decide_classic(const ClassicCall &call, Product *p) {
  p->m = call.m, p->n = call.n, p->k = call.k, p->batch = call.batch;
  const Settings &s = settings();
  if (s.pass_all) return {s.pass_all_reason, {}};
  if (call.handle == nullptr) return {"no handle: cuBLAS answers", {}};
  if (!real_op(call.transa, &p->a_transposed) || !real_op(call.transb, &p->b_transposed))
    return {"a transpose cuBLAS checks", {}};
  if (call.m <= 0 || call.n <= 0 || call.k <= 0 || call.batch <= 0)
    return {"no product to compute, or sizes cuBLAS checks", {}};
  const int64_t a_rows = p->a_transposed ? call.k : call.m, b_rows = p->b_transposed ? call.n : call.k;
  if (call.lda < std::max<int64_t>(1, a_rows) || call.ldb < std::max<int64_t>(1, b_rows) ||
      call.ldc < std::max<int64_t>(1, call.m) || call.stride_a < 0 || call.stride_b < 0 || call.stride_c < 0)
    return {"leading dimensions or strides cuBLAS checks", {}};
  int64_t c_extent = 0;  // elements of one batch of C, first to last
  if (__builtin_mul_overflow(call.n - 1, call.ldc, &c_extent) || __builtin_add_overflow(c_extent, call.m, &c_extent))
    return {"sizes cuBLAS checks", {}};
  if (call.batch > 1 && call.stride_c < c_extent)
    return {"batches of C that overlap, which fastgemm does not write", {}};
  if (const char *refusal = size_refusal(call.m, call.n, call.k, call.batch)) return {refusal, {}};
  if (call.alpha == nullptr || call.beta == nullptr) return {"a null scalar, which cuBLAS checks", {}};
  static const auto get_pointer_mode =
      real_function<decltype(&cublasGetPointerMode_v2)>(Library::cublas, "cublasGetPointerMode_v2");
  static const auto get_math_mode = real_function<decltype(&cublasGetMathMode)>(Library::cublas, "cublasGetMathMode");
  static const auto get_stream = real_function<decltype(&cublasGetStream_v2)>(Library::cublas, "cublasGetStream_v2");
  if (get_pointer_mode == nullptr || get_math_mode == nullptr || get_stream == nullptr)
    return {"the process's cuBLAS lacks the handle's queries", {}};
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  cublasMath_t math_mode = CUBLAS_DEFAULT_MATH;
  Forwarding forwarding;
  if (get_pointer_mode(call.handle, &pointer_mode) != CUBLAS_STATUS_SUCCESS ||
      get_math_mode(call.handle, &math_mode) != CUBLAS_STATUS_SUCCESS ||
      get_stream(call.handle, &p->stream) != CUBLAS_STATUS_SUCCESS)
    return {"cuBLAS answers for the handle", {}};
  if (pointer_mode != CUBLAS_POINTER_MODE_HOST && pointer_mode != CUBLAS_POINTER_MODE_DEVICE)
    return {"a pointer mode cuBLAS checks", {}};
  if (const char *refusal = math_refusal(math_mode)) return {refusal, {}};
  if (pointer_mode == CUBLAS_POINTER_MODE_DEVICE) {
    // Read where they are, when the product runs: the host never waits for them.
    p->alpha_device = call.alpha, p->beta_device = call.beta;
  } else {
    if (*call.alpha == 0.0f) return {"alpha = 0: C is only scaled", {}};
    p->alpha = *call.alpha, p->beta = *call.beta;
  }
  p->a = call.a, p->lda = call.lda, p->stride_a = call.stride_a;
  p->b = call.b, p->ldb = call.ldb, p->stride_b = call.stride_b;
  p->c = call.c, p->ldc = call.ldc, p->stride_c = call.stride_c;
  return {};
}

template <typename Real>
cublasStatus_t classic(const char *entry, const ClassicCall &call, Real &&real) {
  return route_call(
      entry, [&](Product *p) { return decide_classic(call, p); }, no_epilogue, real);
}

// cublasGemmEx's forms: FP32 throughout, CUBLAS_COMPUTE_32F; any algorithm (for this compute type each computes in
// FP32, which the emulation does to FP32's accuracy).
const char *ex_refusal(cudaDataType a_type, cudaDataType b_type, cudaDataType c_type, cublasComputeType_t compute) {
  if (a_type != CUDA_R_32F || b_type != CUDA_R_32F || c_type != CUDA_R_32F) return "operands other than CUDA_R_32F";
  if (compute != CUBLAS_COMPUTE_32F) return "a compute type other than CUBLAS_COMPUTE_32F";
  return nullptr;
}

// The Ex forms' arguments, whose types ex_refusal checks before any is read as a float.
ClassicCall untyped_call(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
                         int64_t n, int64_t k, int64_t batch, const void *alpha, const void *a, int64_t lda,
                         int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b, const void *beta, void *c,
                         int64_t ldc, int64_t stride_c) {
  return ClassicCall{handle,
                     transa,
                     transb,
                     m,
                     n,
                     k,
                     batch,
                     static_cast<const float *>(alpha),
                     static_cast<const float *>(a),
                     lda,
                     stride_a,
                     static_cast<const float *>(b),
                     ldb,
                     stride_b,
                     static_cast<const float *>(beta),
                     static_cast<float *>(c),
                     ldc,
                     stride_c};
}

template <typename Real>
cublasStatus_t ex(const char *entry, const ClassicCall &call, const char *type_refusal, Real &&real) {
  return route_call(
      entry,
      [&](Product *p) {
        if (type_refusal != nullptr && !settings().pass_all) {
          p->m = call.m, p->n = call.n, p->k = call.k, p->batch = call.batch;
          return Decision{type_refusal, {}};
        }
        return decide_classic(call, p);
      },
      no_epilogue, real);
}

template <typename Real>
cublasStatus_t pointer_arrays(const char *entry, int64_t m, int64_t n, int64_t k, int64_t batch, Real &&real) {
  return route_call(
      entry,
      [&](Product *p) {
        p->m = m, p->n = n, p->k = k, p->batch = batch;
        return Decision{settings().pass_all ? settings().pass_all_reason
                                            : "arrays of addresses in device memory, which the host cannot read "
                                              "without synchronizing",
                        {}};
      },
      no_epilogue, real);
}

template <typename Function>
Function next(const char *name) {
  return real_function<Function>(Library::cublas, name);
}

}  // namespace
}  // namespace fastgemm_cublas

using namespace fastgemm_cublas;

// A real function the process lacks (no cuBLAS loaded) cannot be reached: cuBLAS's status for an unusable library.
#define FASTGEMM_REAL_AS(name, type)                 \
  static const auto real_##name = next<type>(#name); \
  if (real_##name == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED
#define FASTGEMM_REAL(name) FASTGEMM_REAL_AS(name, decltype(&::name))

// C++ sees overloads of these three (taking a cudaDataType compute type): the C functions' types, named.
using GemmExFunction = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                          const void *, const void *, cudaDataType, int, const void *, cudaDataType,
                                          int, const void *, void *, cudaDataType, int, cublasComputeType_t,
                                          cublasGemmAlgo_t);
using GemmStridedBatchedExFunction = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                                        int, const void *, const void *, cudaDataType, int, long long,
                                                        const void *, cudaDataType, int, long long, const void *,
                                                        void *, cudaDataType, int, long long, int, cublasComputeType_t,
                                                        cublasGemmAlgo_t);
using GemmBatchedExFunction = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                 const void *, const void *const *, cudaDataType, int,
                                                 const void *const *, cudaDataType, int, const void *, void *const *,
                                                 cudaDataType, int, int, cublasComputeType_t, cublasGemmAlgo_t);

extern "C" {

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                              int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                              const float *beta, float *C, int ldc) {
  FASTGEMM_REAL(cublasSgemm_v2);
  const ClassicCall call{handle, transa, transb, m, n, k, 1, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0};
  return classic("cublasSgemm_v2", call, [&] {
    return real_cublasSgemm_v2(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  });
}

cublasStatus_t cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
                                 int64_t n, int64_t k, const float *alpha, const float *A, int64_t lda, const float *B,
                                 int64_t ldb, const float *beta, float *C, int64_t ldc) {
  FASTGEMM_REAL(cublasSgemm_v2_64);
  const ClassicCall call{handle, transa, transb, m, n, k, 1, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0};
  return classic("cublasSgemm_v2_64", call, [&] {
    return real_cublasSgemm_v2_64(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  });
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const float *alpha, const float *A, int lda,
                                         long long int strideA, const float *B, int ldb, long long int strideB,
                                         const float *beta, float *C, int ldc, long long int strideC, int batchCount) {
  FASTGEMM_REAL(cublasSgemmStridedBatched);
  const ClassicCall call{handle, transa,  transb, m,   n,       k,    batchCount, alpha, A,
                         lda,    strideA, B,      ldb, strideB, beta, C,          ldc,   strideC};
  return classic("cublasSgemmStridedBatched", call, [&] {
    return real_cublasSgemmStridedBatched(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB,
                                          beta, C, ldc, strideC, batchCount);
  });
}

cublasStatus_t cublasSgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                            int64_t m, int64_t n, int64_t k, const float *alpha, const float *A,
                                            int64_t lda, long long int strideA, const float *B, int64_t ldb,
                                            long long int strideB, const float *beta, float *C, int64_t ldc,
                                            long long int strideC, int64_t batchCount) {
  FASTGEMM_REAL(cublasSgemmStridedBatched_64);
  const ClassicCall call{handle, transa,  transb, m,   n,       k,    batchCount, alpha, A,
                         lda,    strideA, B,      ldb, strideB, beta, C,          ldc,   strideC};
  return classic("cublasSgemmStridedBatched_64", call, [&] {
    return real_cublasSgemmStridedBatched_64(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB,
                                             beta, C, ldc, strideC, batchCount);
  });
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void *alpha, const void *A, cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta, void *C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  FASTGEMM_REAL_AS(cublasGemmEx, GemmExFunction);
  const ClassicCall call =
      untyped_call(handle, transa, transb, m, n, k, 1, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0);
  return ex("cublasGemmEx", call, ex_refusal(Atype, Btype, Ctype, computeType), [&] {
    return real_cublasGemmEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                             computeType, algo);
  });
}

cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
                               int64_t n, int64_t k, const void *alpha, const void *A, cudaDataType Atype, int64_t lda,
                               const void *B, cudaDataType Btype, int64_t ldb, const void *beta, void *C,
                               cudaDataType Ctype, int64_t ldc, cublasComputeType_t computeType,
                               cublasGemmAlgo_t algo) {
  FASTGEMM_REAL(cublasGemmEx_64);
  const ClassicCall call =
      untyped_call(handle, transa, transb, m, n, k, 1, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0);
  return ex("cublasGemmEx_64", call, ex_refusal(Atype, Btype, Ctype, computeType), [&] {
    return real_cublasGemmEx_64(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype,
                                ldc, computeType, algo);
  });
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
                                          int lda, long long int strideA, const void *B, cudaDataType Btype, int ldb,
                                          long long int strideB, const void *beta, void *C, cudaDataType Ctype, int ldc,
                                          long long int strideC, int batchCount, cublasComputeType_t computeType,
                                          cublasGemmAlgo_t algo) {
  FASTGEMM_REAL_AS(cublasGemmStridedBatchedEx, GemmStridedBatchedExFunction);
  const ClassicCall call = untyped_call(handle, transa, transb, m, n, k, batchCount, alpha, A, lda, strideA, B, ldb,
                                        strideB, beta, C, ldc, strideC);
  return ex("cublasGemmStridedBatchedEx", call, ex_refusal(Atype, Btype, Ctype, computeType), [&] {
    return real_cublasGemmStridedBatchedEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype,
                                           ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
  });
}

cublasStatus_t cublasGemmStridedBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                             int64_t m, int64_t n, int64_t k, const void *alpha, const void *A,
                                             cudaDataType Atype, int64_t lda, long long int strideA, const void *B,
                                             cudaDataType Btype, int64_t ldb, long long int strideB, const void *beta,
                                             void *C, cudaDataType Ctype, int64_t ldc, long long int strideC,
                                             int64_t batchCount, cublasComputeType_t computeType,
                                             cublasGemmAlgo_t algo) {
  FASTGEMM_REAL(cublasGemmStridedBatchedEx_64);
  const ClassicCall call = untyped_call(handle, transa, transb, m, n, k, batchCount, alpha, A, lda, strideA, B, ldb,
                                        strideB, beta, C, ldc, strideC);
  return ex("cublasGemmStridedBatchedEx_64", call, ex_refusal(Atype, Btype, Ctype, computeType), [&] {
    return real_cublasGemmStridedBatchedEx_64(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype,
                                              ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType,
                                              algo);
  });
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                  int n, int k, const float *alpha, const float *const Aarray[], int lda,
                                  const float *const Barray[], int ldb, const float *beta, float *const Carray[],
                                  int ldc, int batchCount) {
  FASTGEMM_REAL(cublasSgemmBatched);
  return pointer_arrays("cublasSgemmBatched", m, n, k, batchCount, [&] {
    return real_cublasSgemmBatched(handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray, ldc,
                                   batchCount);
  });
}

cublasStatus_t cublasSgemmBatched_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                     int64_t m, int64_t n, int64_t k, const float *alpha, const float *const Aarray[],
                                     int64_t lda, const float *const Barray[], int64_t ldb, const float *beta,
                                     float *const Carray[], int64_t ldc, int64_t batchCount) {
  FASTGEMM_REAL(cublasSgemmBatched_64);
  return pointer_arrays("cublasSgemmBatched_64", m, n, k, batchCount, [&] {
    return real_cublasSgemmBatched_64(handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray,
                                      ldc, batchCount);
  });
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                   int n, int k, const void *alpha, const void *const Aarray[], cudaDataType Atype,
                                   int lda, const void *const Barray[], cudaDataType Btype, int ldb, const void *beta,
                                   void *const Carray[], cudaDataType Ctype, int ldc, int batchCount,
                                   cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  FASTGEMM_REAL_AS(cublasGemmBatchedEx, GemmBatchedExFunction);
  return pointer_arrays("cublasGemmBatchedEx", m, n, k, batchCount, [&] {
    return real_cublasGemmBatchedEx(handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb,
                                    beta, Carray, Ctype, ldc, batchCount, computeType, algo);
  });
}

cublasStatus_t cublasGemmBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                      int64_t m, int64_t n, int64_t k, const void *alpha, const void *const Aarray[],
                                      cudaDataType Atype, int64_t lda, const void *const Barray[], cudaDataType Btype,
                                      int64_t ldb, const void *beta, void *const Carray[], cudaDataType Ctype,
                                      int64_t ldc, int64_t batchCount, cublasComputeType_t computeType,
                                      cublasGemmAlgo_t algo) {
  FASTGEMM_REAL(cublasGemmBatchedEx_64);
  return pointer_arrays("cublasGemmBatchedEx_64", m, n, k, batchCount, [&] {
    return real_cublasGemmBatchedEx_64(handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb,
                                       beta, Carray, Ctype, ldc, batchCount, computeType, algo);
  });
}

}  // extern "C"
