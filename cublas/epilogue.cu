// SPDX-License-Identifier: Apache-2.0
#include "epilogue.hpp"

#include <algorithm>

namespace fastgemm_cublas {
namespace {

constexpr int kThreads = 256;

// One thread an element of a column, the columns of every batch spread over the grid's second dimension. fmaxf, as
// cuBLASLt's ReLU: a NaN becomes 0.
__global__ void bias_relu(float *d, int64_t rows, int64_t cols, int64_t ld, int64_t stride, int64_t batch,
                          const float *bias, int64_t bias_stride, bool relu) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (row >= rows) return;
  for (int64_t column = blockIdx.y; column < cols * batch; column += gridDim.y) {
    const int64_t b = column / cols, j = column % cols;
    float *element = d + b * stride + j * ld + row;
    float value = *element;
    if (bias != nullptr) value += bias[b * bias_stride + row];
    *element = relu ? fmaxf(value, 0.0f) : value;
  }
}

__global__ void scale_product_kernel(float *c, int64_t ldc, int64_t stride_c, const float *product, int64_t m,
                                     int64_t n, int64_t batch, const float *alpha_at, const float *beta_at) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (row >= m) return;
  const float alpha = *alpha_at, beta = *beta_at;
  for (int64_t column = blockIdx.y; column < n * batch; column += gridDim.y) {
    const int64_t b = column / n, j = column % n;
    float *element = c + b * stride_c + j * ldc + row;
    double result = alpha == 0.0f ? 0.0 : static_cast<double>(alpha) * product[(b * n + j) * m + row];
    if (beta != 0.0f) result = fma(static_cast<double>(beta), static_cast<double>(*element), result);
    *element = static_cast<float>(result);
  }
}

dim3 grid_of(int64_t rows, int64_t columns) {
  return dim3(static_cast<unsigned>((rows + kThreads - 1) / kThreads),
              static_cast<unsigned>(std::min<int64_t>(columns, 65535)));
}

}  // namespace

cudaError_t scale_product(float *c, int64_t ldc, int64_t stride_c, const float *product, int64_t m, int64_t n,
                          int64_t batch, const float *alpha, const float *beta, cudaStream_t stream) {
  if ((m + kThreads - 1) / kThreads > 0x7fffffff) return cudaErrorInvalidValue;
  scale_product_kernel<<<grid_of(m, n * batch), kThreads, 0, stream>>>(c, ldc, stride_c, product, m, n, batch, alpha,
                                                                       beta);
  return cudaGetLastError();
}

cudaError_t apply_epilogue(float *d, int64_t rows, int64_t cols, int64_t ld, int64_t stride, int64_t batch,
                           const float *bias, int64_t bias_stride, bool relu, cudaStream_t stream) {
  if ((rows + kThreads - 1) / kThreads > 0x7fffffff) return cudaErrorInvalidValue;
  bias_relu<<<grid_of(rows, cols * batch), kThreads, 0, stream>>>(d, rows, cols, ld, stride, batch, bias, bias_stride,
                                                                  relu);
  return cudaGetLastError();
}

}  // namespace fastgemm_cublas
