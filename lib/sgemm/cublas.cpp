// cuBLAS with FP32 math, for comparison and as AUTO's choice where it is the fastest known. cuBLAS is
// column-major: the row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so B goes first.
// Problems whose every size, leading dimension, stride and count fits in an int go through the 32-bit
// entry points, which programs calling cuBLAS directly use: the same kernels and results, with less host
// work per call than the _64 ones (bench/NOTES-sgemm-fast.md); larger ones through the _64 entry points.
#include <climits>
#include <cstdint>
#include <initializer_list>

#include "core/check.hpp"
#include "sgemm/variant.hpp"

namespace fastgemm::detail {
namespace {

bool fits_int(std::initializer_list<int64_t> values) {
  for (const int64_t value : values) {
    if (value > INT_MAX) return false;
  }
  return true;
}

Status run_cublas(const GemmProblem &p, Context &context) {
  cublasHandle_t handle = nullptr;
  FG_RETURN_IF_ERROR(context.cublas(&handle));
  const cublasOperation_t op_b = p.b.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = p.a.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const bool narrow = fits_int({p.m, p.n, p.k, p.a.ld, p.b.ld, p.ldc, p.a.stride, p.b.stride, p.stride_c, p.batch});
  if (p.batch == 1 && narrow) {
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
    FG_CUBLAS_CHECK(cublasSgemm(handle, op_b, op_a, n, m, k, &p.alpha, p.b.data, static_cast<int>(p.b.ld), p.a.data,
                                static_cast<int>(p.a.ld), &p.beta, p.c, static_cast<int>(p.ldc)));
  } else if (p.batch == 1) {
    FG_CUBLAS_CHECK(cublasSgemm_64(handle, op_b, op_a, p.n, p.m, p.k, &p.alpha, p.b.data, p.b.ld, p.a.data,
                                   p.a.ld, &p.beta, p.c, p.ldc));
  } else if (narrow) {
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
    FG_CUBLAS_CHECK(cublasSgemmStridedBatched(handle, op_b, op_a, n, m, k, &p.alpha, p.b.data, static_cast<int>(p.b.ld),
                                              p.b.stride, p.a.data, static_cast<int>(p.a.ld), p.a.stride, &p.beta,
                                              p.c, static_cast<int>(p.ldc), p.stride_c, static_cast<int>(p.batch)));
  } else {
    FG_CUBLAS_CHECK(cublasSgemmStridedBatched_64(handle, op_b, op_a, p.n, p.m, p.k, &p.alpha, p.b.data, p.b.ld,
                                                 p.b.stride, p.a.data, p.a.ld, p.a.stride, &p.beta, p.c, p.ldc,
                                                 p.stride_c, p.batch));
  }
  return Status::success();
}

}  // namespace

const SgemmVariant cublas_sgemm = {FG_SGEMM_CUBLAS, "cublas", always_implementable, run_cublas};

}  // namespace fastgemm::detail
