// SPDX-License-Identifier: Apache-2.0
// cuBLAS for comparison: gemv (the input as an (N*L) x M matrix times a vector of 1/M) for the means,
// then gemm for matrix * means^T. In cuBLAS's column-major terms the row-major output (L x N) is the
// column-major N x L matrix means * matrix^T.
#include "core/check.hpp"
#include "core/dtype.hpp"
#include "core/launch.cuh"
#include "rowmean/variant.hpp"

namespace fastgemm::detail {
namespace {

template <typename T>
__global__ void fill_kernel(T *values, int64_t count, T value) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    values[i] = value;
}

cublasStatus_t gemv(cublasHandle_t h, int64_t m, int64_t n, const float *alpha, const float *A, int64_t lda,
                    const float *x, const float *beta, float *y) {
  return cublasSgemv_64(h, CUBLAS_OP_T, m, n, alpha, A, lda, x, 1, beta, y, 1);
}
cublasStatus_t gemv(cublasHandle_t h, int64_t m, int64_t n, const double *alpha, const double *A, int64_t lda,
                    const double *x, const double *beta, double *y) {
  return cublasDgemv_64(h, CUBLAS_OP_T, m, n, alpha, A, lda, x, 1, beta, y, 1);
}
cublasStatus_t gemm(cublasHandle_t h, int64_t m, int64_t n, int64_t k, const float *alpha, const float *A, int64_t lda,
                    const float *B, int64_t ldb, const float *beta, float *C, int64_t ldc) {
  return cublasSgemm_64(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
cublasStatus_t gemm(cublasHandle_t h, int64_t m, int64_t n, int64_t k, const double *alpha, const double *A,
                    int64_t lda, const double *B, int64_t ldb, const double *beta, double *C, int64_t ldc) {
  return cublasDgemm_64(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

// The means first, then the vector of ones, 256-byte aligned.
int64_t ones_offset(const RowmeanProblem &p) { return ceil_div(p.N * p.L * element_size(p.dtype), 256) * 256; }

size_t cublas_workspace_bytes(const RowmeanProblem &p, const DeviceInfo &) {
  return static_cast<size_t>(ones_offset(p) + element_size(p.dtype) * p.M);
}

template <typename T>
Status run_typed(const RowmeanProblem &p, const RunArgs &args) {
  const int64_t rows = p.N * p.L;
  T *means = static_cast<T *>(args.workspace);
  T *ones = reinterpret_cast<T *>(static_cast<char *>(args.workspace) + ones_offset(p));
  FG_RETURN_IF_ERROR(
      launch(fill_kernel<T>, dim3(capped_grid(ceil_div(p.M, 256))), dim3(256), 0, args.stream, ones, p.M, T(1)));
  cublasHandle_t handle = args.cublas;
  const T inverse_m = T(1) / static_cast<T>(p.M), one = T(1), zero = T(0);
  // Column-major, the input is M x rows with leading dimension M; its transpose times ones is the sums.
  FG_CUBLAS_CHECK(gemv(handle, p.M, rows, &inverse_m, static_cast<const T *>(p.input), p.M, ones, &zero, means));
  FG_CUBLAS_CHECK(gemm(handle, p.N, p.L, p.L, &one, means, p.L, static_cast<const T *>(p.matrix), p.L, &zero,
                       static_cast<T *>(p.output), p.N));
  return Status::success();
}

Status run_cublas(const RowmeanProblem &p, const RunArgs &args) {
  return dispatch_dtype(p.dtype, [&](auto zero) { return run_typed<decltype(zero)>(p, args); });
}

}  // namespace

extern const RowmeanVariant cublas_rowmean = {
    FG_ROWMEAN_CUBLAS, "cublas", accepts_any_problem<RowmeanProblem>, cublas_workspace_bytes,
    run_cublas,        0,        always_uses_cublas<RowmeanProblem>};

}  // namespace fastgemm::detail
