// SPDX-License-Identifier: Apache-2.0
#include "products.hpp"

#include <climits>

#include "error_measures.hpp"
#include "vendor.hpp"

namespace bench {
namespace {

cublasStatus_t gemm(cublasHandle_t handle, cublasOperation_t first_op, cublasOperation_t second_op, int rows, int cols,
                    int depth, const float *first, int first_ld, const float *second, int second_ld, float *c,
                    int ldc) {
  const float one = 1.0f, zero = 0.0f;
  return cublasSgemm(handle, first_op, second_op, rows, cols, depth, &one, first, first_ld, second, second_ld, &zero, c,
                     ldc);
}

cublasStatus_t gemm(cublasHandle_t handle, cublasOperation_t first_op, cublasOperation_t second_op, int rows, int cols,
                    int depth, const double *first, int first_ld, const double *second, int second_ld, double *c,
                    int ldc) {
  const double one = 1.0, zero = 0.0;
  return cublasDgemm(handle, first_op, second_op, rows, cols, depth, &one, first, first_ld, second, second_ld, &zero, c,
                     ldc);
}

cublasStatus_t gemm_batched(cublasHandle_t handle, cublasOperation_t first_op, cublasOperation_t second_op, int rows,
                            int cols, int depth, const float *first, int first_ld, long long first_stride,
                            const float *second, int second_ld, long long second_stride, float *c, int ldc,
                            long long c_stride, int batch) {
  const float one = 1.0f, zero = 0.0f;
  return cublasSgemmStridedBatched(handle, first_op, second_op, rows, cols, depth, &one, first, first_ld, first_stride,
                                   second, second_ld, second_stride, &zero, c, ldc, c_stride, batch);
}

cublasStatus_t gemm_batched(cublasHandle_t handle, cublasOperation_t first_op, cublasOperation_t second_op, int rows,
                            int cols, int depth, const double *first, int first_ld, long long first_stride,
                            const double *second, int second_ld, long long second_stride, double *c, int ldc,
                            long long c_stride, int batch) {
  const double one = 1.0, zero = 0.0;
  return cublasDgemmStridedBatched(handle, first_op, second_op, rows, cols, depth, &one, first, first_ld, first_stride,
                                   second, second_ld, second_stride, &zero, c, ldc, c_stride, batch);
}

// cuBLAS is column-major: the row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T.
template <typename T>
void product(const GemmShape &s, const T *a, const T *b, T *c, const char *single_name, const char *batched_name) {
  if (s.m > INT_MAX || s.n > INT_MAX || s.k > INT_MAX || s.batch > INT_MAX) {
    throw BenchError("the direct cuBLAS call takes sizes up to INT_MAX");
  }
  const LeadingDimensions ld = leading_dimensions(s);
  const bool row_major = s.layout == FG_ROW_MAJOR;
  const T *first = row_major ? b : a;
  const T *second = row_major ? a : b;
  const fg_op_t first_op = row_major ? s.transb : s.transa;
  const fg_op_t second_op = row_major ? s.transa : s.transb;
  const int rows = static_cast<int>(row_major ? s.n : s.m), cols = static_cast<int>(row_major ? s.m : s.n);
  const int first_ld = static_cast<int>(row_major ? ld.b : ld.a);
  const int second_ld = static_cast<int>(row_major ? ld.a : ld.b);
  const auto op = [](fg_op_t t) { return t == FG_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T; };
  cublasHandle_t handle = vendor_blas().get();
  if (s.batch == 1) {
    check_cublas(gemm(handle, op(first_op), op(second_op), rows, cols, static_cast<int>(s.k), first, first_ld, second,
                      second_ld, c, static_cast<int>(ld.c)),
                 single_name);
    return;
  }
  const long long first_stride = row_major ? s.k * s.n : s.m * s.k;
  const long long second_stride = row_major ? s.m * s.k : s.k * s.n;
  check_cublas(gemm_batched(handle, op(first_op), op(second_op), rows, cols, static_cast<int>(s.k), first, first_ld,
                            first_stride, second, second_ld, second_stride, c, static_cast<int>(ld.c), s.m * s.n,
                            static_cast<int>(s.batch)),
               batched_name);
}

}  // namespace

LeadingDimensions leading_dimensions(const GemmShape &s) {
  const bool ta = s.transa != FG_OP_N;
  const bool tb = s.transb != FG_OP_N;
  if (s.layout == FG_ROW_MAJOR) return {ta ? s.m : s.k, tb ? s.k : s.n, s.n};
  return {ta ? s.k : s.m, tb ? s.n : s.k, s.m};
}

int64_t a_elements(const GemmShape &s) { return s.m * s.k * s.batch; }
int64_t b_elements(const GemmShape &s) { return s.k * s.n * s.batch; }
int64_t c_elements(const GemmShape &s) { return s.m * s.n * s.batch; }

void cublas_product(const GemmShape &shape, const float *a, const float *b, float *c) {
  product(shape, a, b, c, "cublasSgemm", "cublasSgemmStridedBatched");
}

void cublas_product(const GemmShape &shape, const double *a, const double *b, double *c) {
  product(shape, a, b, c, "cublasDgemm", "cublasDgemmStridedBatched");
}

void double_products(const GemmShape &shape, const float *a, const float *b, double *exact, double *absolute) {
  DeviceBuffer wide_a(static_cast<size_t>(a_elements(shape)) * sizeof(double));
  DeviceBuffer wide_b(static_cast<size_t>(b_elements(shape)) * sizeof(double));
  if (exact != nullptr) {
    widen(a, wide_a.as<double>(), a_elements(shape), false);
    widen(b, wide_b.as<double>(), b_elements(shape), false);
    cublas_product(shape, wide_a.as<double>(), wide_b.as<double>(), exact);
  }
  widen(a, wide_a.as<double>(), a_elements(shape), true);
  widen(b, wide_b.as<double>(), b_elements(shape), true);
  cublas_product(shape, wide_a.as<double>(), wide_b.as<double>(), absolute);
  // The widened copies are freed on return: the products must have read them by then.
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the FP64 products");
}

}  // namespace bench
