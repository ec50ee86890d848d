// SPDX-License-Identifier: Apache-2.0
// FG_SGEMM_SPLIT_K: for products whose C has too few tiles to fill the device and whose k is long
// (256 x 256 x 16384, say), k is cut into slices of whole k-tiles, each slice's product over a C tile is
// one block's work, and a second kernel sums the slices' partial products with alpha and beta applied.
// The tiles are FG_SGEMM_PIPELINED's; the split count comes from the device's SM count and the problem
// (split_k_count).
#include "sgemm/split_k.cuh"

namespace fastgemm::detail {
namespace pipeline {

__global__ void sum_partials_kernel(const GemmProblem p, int64_t splits, Partials partials) {
  const int64_t vectors_per_row = partials.padded_n / 4;
  const int64_t vectors = p.batch * p.m * vectors_per_row;
  const int64_t slice = p.batch * p.m * partials.padded_n;
  for (int64_t v = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; v < vectors;
       v += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = v / vectors_per_row;  // over batch * m
    const int64_t col = v % vectors_per_row * 4;
    const float *in = partials.data + row * partials.padded_n + col;
    float4 sum = *reinterpret_cast<const float4 *>(in);
    for (int64_t s = 1; s < splits; ++s) {
      const float4 part = *reinterpret_cast<const float4 *>(in + s * slice);
      sum = make_float4(sum.x + part.x, sum.y + part.y, sum.z + part.z, sum.w + part.w);
    }
    const int64_t batch = row / p.m;
    float *c = p.c + batch * p.stride_c + row % p.m * p.ldc + col;
    const float sums[4] = {sum.x, sum.y, sum.z, sum.w};
    for (int j = 0; j < 4 && col + j < p.n; ++j) c[j] = tiled::epilogue_value(p, sums[j], c + j);
  }
}

}  // namespace pipeline

namespace {

using SplitKTiling = pipeline::LargeTiling;

// How many slices of k the problem is cut into on the device (1: none).
int64_t split_k_count(const GemmProblem &p, const DeviceInfo &device) {
  const int64_t tiles = p.batch * ceil_div(p.m, SplitKTiling::kBlockM) * ceil_div(p.n, SplitKTiling::kBlockN);
  // Enough blocks for two waves of the device, with at least kMinSliceDepth of k in each slice.
  constexpr int64_t kMinSliceDepth = 256;
  const int64_t wanted = ceil_div(2 * static_cast<int64_t>(device.sm_count), tiles);
  const int64_t most = p.k / kMinSliceDepth;
  const int64_t splits = wanted < most ? wanted : most;
  return splits < 1 ? 1 : (splits > 64 ? 64 : splits);
}

size_t split_k_workspace_bytes(const GemmProblem &problem, const DeviceInfo &device) {
  return pipeline::split_workspace_bytes<SplitKTiling>(problem, split_k_count(problem, device));
}

Status run_split_k(const GemmProblem &problem, const RunArgs &args) {
  return pipeline::run_split<SplitKTiling>(problem, args.stream, args.workspace, split_k_count(problem, *args.device));
}

}  // namespace

extern const SgemmVariant split_k_sgemm = {FG_SGEMM_SPLIT_K, "split_k", pipeline::pipelined_supported<SplitKTiling>,
                                           split_k_workspace_bytes, run_split_k};

}  // namespace fastgemm::detail
