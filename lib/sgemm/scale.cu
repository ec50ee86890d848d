// SPDX-License-Identifier: Apache-2.0
// C := beta * C, the whole product when k == 0 or alpha == 0.
#include "core/launch.cuh"
#include "sgemm/registry.hpp"

namespace fastgemm::detail {
namespace {

constexpr int kTileCols = 32, kTileRows = 8;

__global__ void scale_kernel(float *c, int64_t rows, int64_t cols, int64_t ldc, int64_t stride_c, int64_t batch,
                             float beta) {
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kTileCols + threadIdx.x;
  if (col >= cols) return;
  for (int64_t b = blockIdx.z; b < batch; b += gridDim.z)
    for (int64_t row = static_cast<int64_t>(blockIdx.y) * kTileRows + threadIdx.y; row < rows;
         row += static_cast<int64_t>(gridDim.y) * kTileRows) {
      float *element = c + b * stride_c + row * ldc + col;
      *element = beta == 0.0f ? 0.0f : beta * *element;
    }
}

}  // namespace

Status scale_c(const GemmProblem &p, cudaStream_t stream) {
  if (p.beta == 1.0f) return Status::success();
  const dim3 block(kTileCols, kTileRows);
  const dim3 grid(capped_grid(ceil_div(p.n, kTileCols), INT32_MAX), capped_grid(ceil_div(p.m, kTileRows)),
                  capped_grid(p.batch));
  return launch(scale_kernel, grid, block, 0, stream, p.c, p.m, p.n, p.ldc, p.stride_c, p.batch, p.beta);
}

}  // namespace fastgemm::detail
