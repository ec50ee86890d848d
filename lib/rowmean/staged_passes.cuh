// SPDX-License-Identifier: Apache-2.0
// The two passes of FG_ROWMEAN_STAGED (staged.cu): the row means into the workspace (staged_means.cu), then the
// product over them (staged_product.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/device.hpp"
#include "core/problem.hpp"
#include "core/status.hpp"
#include "rowmean/row_sums.cuh"

namespace fastgemm::detail::staged {

constexpr int kBlockThreads = 256;

// Pass 1: the means of the N * L rows, in double. Rows too few to keep every SM busy are split into 2^log2_pieces
// pieces each (spans), summed apart and joined afterwards.
struct MeansPlan {
  int log2_pieces = 0;
  SpanLayout layout;
  int64_t span_count = 0;
};

MeansPlan plan_means(const RowmeanProblem &p, const DeviceInfo &device);

// means: N * L doubles; piece_sums: span_count doubles, used when rows are split. Where `overlap`, the join of the
// pieces starts by programmatic dependent launch.
template <typename T>
Status launch_means(const RowmeanProblem &p, const MeansPlan &plan, double *means, double *piece_sums, bool overlap,
                    const DeviceInfo &device, cudaStream_t stream);

// Pass 2: output = matrix * means^T.
template <typename T>
struct ProductParams {
  const T *matrix;
  const double *means;  // N x L, dense
  T *output;
  double *segment_sums;  // segments x L x N, when segments > 1
  int64_t L, N;
  int64_t row_tiles, slabs, segments, segment_length;
  int matrix_prefetch;  // columns ahead of the chunk in use whose matrix lines are fetched into L2; 0: none
  bool matrix_vector_ok, means_vector_ok, output_pair_ok, segment_pair_ok;
};

struct ProductPlan {
  bool tensor_cores = true;     // false: cuBLAS DGEMM
  bool matrix_streams = false;  // the matrix is read from memory (once or twice), not from L2
  bool streaming = false;       // streaming_product_kernel: blocks of kStreamTileRows rows, operands staged by cp.async
  int groups = 4;               // batches per warp unit / 8
  int64_t row_tiles = 0, slabs = 0, segments = 1, segment_length = 0;
  int matrix_prefetch = 0;  // ProductParams::matrix_prefetch
};

// matrix_vector_ok: the matrix is 16-byte aligned with rows of whole 16-byte units.
ProductPlan plan_product(const RowmeanProblem &p, const DeviceInfo &device, bool matrix_vector_ok);

// The product on tensor cores (plan.tensor_cores), and the join of its segments when there are several. Where
// `overlap`, every kernel starts by programmatic dependent launch.
template <typename T>
Status launch_product(const ProductParams<T> &params, const ProductPlan &plan, bool overlap, cudaStream_t stream);

}  // namespace fastgemm::detail::staged
