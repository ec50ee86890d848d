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

}  // namespace

cudaError_t apply_epilogue(float *d, int64_t rows, int64_t cols, int64_t ld, int64_t stride, int64_t batch,
                           const float *bias, int64_t bias_stride, bool relu, cudaStream_t stream) {
  const int64_t row_blocks = (rows + kThreads - 1) / kThreads;
  if (row_blocks > 0x7fffffff) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(row_blocks), static_cast<unsigned>(std::min<int64_t>(cols * batch, 65535)));
  bias_relu<<<grid, kThreads, 0, stream>>>(d, rows, cols, ld, stride, batch, bias, bias_stride, relu);
  return cudaGetLastError();
}

}  // namespace fastgemm_cublas
