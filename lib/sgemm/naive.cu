// SPDX-License-Identifier: Apache-2.0
// The first rung: one thread per element of C, reading its row of op(A) and column of op(B) straight
// from global memory. Transposes are strides, so one kernel covers every case.
#include "core/launch.cuh"
#include "sgemm/variant.hpp"

namespace fastgemm::detail {
namespace {

constexpr int kTile = 16;

__global__ void naive_sgemm_kernel(GemmProblem p) {
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  if (col >= p.n) return;
  // op(A)[row][i] = a[row * a_row_step + i * a_inner_step]; op(B)[i][col] likewise.
  const int64_t a_row_step = p.a.transposed ? 1 : p.a.ld;
  const int64_t a_inner_step = p.a.transposed ? p.a.ld : 1;
  const int64_t b_inner_step = p.b.transposed ? 1 : p.b.ld;
  const int64_t b_col_step = p.b.transposed ? p.b.ld : 1;
  for (int64_t batch = blockIdx.z; batch < p.batch; batch += gridDim.z) {
    const float *a = p.a.data + batch * p.a.stride;
    const float *b = p.b.data + batch * p.b.stride + col * b_col_step;
    float *c = p.c + batch * p.stride_c + col;
    for (int64_t row = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y; row < p.m;
         row += static_cast<int64_t>(gridDim.y) * kTile) {
      const float *a_row = a + row * a_row_step;
      float sum = 0.0f;
      for (int64_t i = 0; i < p.k; ++i) sum = fmaf(a_row[i * a_inner_step], b[i * b_inner_step], sum);
      float *out = c + row * p.ldc;
      // The tiled kernels' epilogue (tile_common.cuh's epilogue_value), -0 as +0 included: under
      // FG_REPRODUCIBLE_SHAPE every kernel AUTO may pick gives the same bits.
      const float scaled = p.alpha * __fadd_rn(sum, 0.0f);
      *out = p.beta == 0.0f ? scaled : fmaf(p.beta, *out, scaled);
    }
  }
}

Status run_naive(const GemmProblem &problem, const RunArgs &args) {
  const dim3 block(kTile, kTile);
  const dim3 grid(capped_grid(ceil_div(problem.n, kTile), INT32_MAX), capped_grid(ceil_div(problem.m, kTile)),
                  capped_grid(problem.batch));
  return launch(naive_sgemm_kernel, grid, block, 0, args.stream, problem);
}

}  // namespace

extern const SgemmVariant naive_sgemm = {FG_SGEMM_NAIVE, "naive", accepts_any_problem<GemmProblem>,
                                         no_workspace<GemmProblem>, run_naive};

}  // namespace fastgemm::detail
