// SPDX-License-Identifier: Apache-2.0
// The split of k over blocks, for any of pipeline.cuh's tilings (FG_SGEMM_SPLIT_K's, and every tiling that
// fastgemm-tune sweeps): k is cut into slices of whole k-tiles, each slice's partial products go into the
// workspace, and sum_partials_kernel (split_k.cu) sums them into C with alpha and beta applied.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "core/launch.cuh"
#include "core/problem.hpp"
#include "core/status.hpp"
#include "sgemm/pipeline.cuh"

namespace fastgemm::detail::pipeline {

// C = alpha * (sum of the splits' partial products) + beta * C, 4 columns per thread.
__global__ void sum_partials_kernel(const GemmProblem p, int64_t splits, Partials partials);

// `splits` slices of k for kernel T, each a whole number of k-tiles, none empty.
struct KSlices {
  int64_t splits = 1, k_per_split = 0;
};

template <typename T>
KSlices slice_k(const GemmProblem &p, int64_t splits) {
  KSlices slices;
  slices.k_per_split = ceil_div(ceil_div(p.k, splits), T::kDepth) * T::kDepth;
  slices.splits = ceil_div(p.k, slices.k_per_split);
  return slices;
}

// The workspace run_split<T>(p, ..., splits) uses: the slices' partial products, or nothing when k is in one piece.
template <typename T>
size_t split_workspace_bytes(const GemmProblem &p, int64_t splits) {
  if (splits <= 1) return 0;
  return sizeof(float) * slice_k<T>(p, splits).splits * p.batch * p.m * (ceil_div(p.n, 4) * 4);
}

// The whole product with kernel T: k in one piece when splits is 1, else in `splits` slices summed afterwards
// through `workspace`, of split_workspace_bytes<T>(p, splits) bytes.
template <typename T>
Status run_split(const GemmProblem &p, cudaStream_t stream, void *workspace, int64_t splits) {
  if (splits <= 1) return run_pipelined<T>(p, stream);
  const KSlices slices = slice_k<T>(p, splits);
  Partials partials;
  partials.data = static_cast<float *>(workspace);
  partials.padded_n = ceil_div(p.n, 4) * 4;
  FG_RETURN_IF_ERROR(launch_pipelined<T>(p, stream, slices.splits, slices.k_per_split, partials));
  const int64_t vectors = p.batch * p.m * (partials.padded_n / 4);
  return launch(sum_partials_kernel, dim3(capped_grid(ceil_div(vectors, 256), INT32_MAX)), dim3(256), 0, stream, p,
                slices.splits, partials);
}

}  // namespace fastgemm::detail::pipeline
