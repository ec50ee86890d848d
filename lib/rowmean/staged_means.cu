// SPDX-License-Identifier: Apache-2.0
// The means pass of FG_ROWMEAN_STAGED: row sums in double (row_sums.cuh), read at the speed of the input. When there
// are too few rows to keep every SM busy (3 x 100000 x 100 has 300), each row is split into 2^k pieces whose sums are
// joined afterwards in a fixed order: no atomics, so results are the same bit for bit from run to run.
#include "core/launch.cuh"
#include "rowmean/staged_passes.cuh"

namespace fastgemm::detail::staged {
namespace {

// Blocks of the row-sum kernel resident on an SM (its launch bounds hold it to the registers for that many), so that
// its grid is one full wave: 16 warps with 128 bytes in flight per lane keep the memory system saturated.
constexpr int kRowSumBlocksPerSm = 2;
// Row splitting: at least 64 spans per SM (several for every resident warp), pieces of at least this many elements,
// at most 2^6 pieces.
constexpr int64_t kSpansPerSm = 64;
constexpr int64_t kMinPieceLength = 2048;
constexpr int kMaxLog2Pieces = 6;

struct ScaledSink {
  double *out;
  double scale;
  __device__ __forceinline__ void operator()(int64_t span, double sum) const { out[span] = sum * scale; }
};

template <typename T>
__global__ void __launch_bounds__(kBlockThreads, kRowSumBlocksPerSm)
    row_sums_kernel(const T *input, double *sums, SpanLayout layout, int64_t span_count, SpanReadPlan read,
                    double scale) {
  allow_dependent_launch();
  const int worker = static_cast<int>(blockIdx.x * kBlockThreads + threadIdx.x);
  sum_spans(read, input, 0, span_count, layout, worker, static_cast<int>(gridDim.x * kBlockThreads),
            ScaledSink{sums, scale});
}

__global__ void join_pieces_kernel(const double *piece_sums, double *means, int64_t rows, int pieces,
                                   double inverse_m) {
  wait_for_prior_grid();
  allow_dependent_launch();
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < rows;
       row += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double *sums = piece_sums + row * pieces;
    double sum = 0.0;
    for (int piece = 0; piece < pieces; ++piece) sum += sums[piece];
    means[row] = sum * inverse_m;
  }
}

// Rows are split while there are fewer spans than kSpansPerSm per SM and the pieces stay long.
int choose_log2_pieces(int64_t rows, int64_t M, const DeviceInfo &device) {
  const int64_t wanted = kSpansPerSm * device.sm_count;
  int log2_pieces = 0;
  while (log2_pieces < kMaxLog2Pieces && (rows << log2_pieces) < wanted && (M >> (log2_pieces + 1)) >= kMinPieceLength)
    ++log2_pieces;
  return log2_pieces;
}

}  // namespace

MeansPlan plan_means(const RowmeanProblem &p, const DeviceInfo &device) {
  MeansPlan plan;
  const int64_t rows = p.N * p.L;
  plan.log2_pieces = choose_log2_pieces(rows, p.M, device);
  const int pieces = 1 << plan.log2_pieces;
  const int64_t vector_width = 16 / element_size(p.dtype);
  // Pieces start on a vector boundary whenever rows do.
  const int64_t piece_length = pieces == 1 ? p.M : ceil_div(ceil_div(p.M, pieces), vector_width) * vector_width;
  plan.layout = SpanLayout{p.M, piece_length, plan.log2_pieces};
  plan.span_count = rows * pieces;
  return plan;
}

template <typename T>
Status launch_means(const RowmeanProblem &p, const MeansPlan &plan, double *means, double *piece_sums, bool overlap,
                    const DeviceInfo &device, cudaStream_t stream) {
  const T *input = static_cast<const T *>(p.input);
  const int64_t rows = p.N * p.L;
  const double inverse_m = 1.0 / static_cast<double>(p.M);
  const SpanReadPlan read = plan_span_read(p.input, p.dtype, plan.layout);
  const SpanReadShape shape = kSpanReadShapes[read.shape];
  const int64_t spans_per_block_round =
      static_cast<int64_t>(spans_per_lane(shape, read.vector)) * (kBlockThreads / shape.lanes);
  const int64_t row_sum_blocks = ceil_div(plan.span_count, spans_per_block_round);
  const int64_t max_row_sum_blocks = static_cast<int64_t>(kRowSumBlocksPerSm) * device.sm_count;
  const dim3 row_sum_grid(
      static_cast<unsigned>(row_sum_blocks < max_row_sum_blocks ? row_sum_blocks : max_row_sum_blocks));
  if (plan.log2_pieces == 0)
    return launch(row_sums_kernel<T>, row_sum_grid, dim3(kBlockThreads), 0, stream, input, means, plan.layout,
                  plan.span_count, read, inverse_m);
  FG_RETURN_IF_ERROR(launch(row_sums_kernel<T>, row_sum_grid, dim3(kBlockThreads), 0, stream, input, piece_sums,
                            plan.layout, plan.span_count, read, 1.0));
  return launch_dependent(overlap, join_pieces_kernel, dim3(capped_grid(ceil_div(rows, kBlockThreads), INT32_MAX)),
                          dim3(kBlockThreads), 0, stream, static_cast<const double *>(piece_sums), means, rows,
                          1 << plan.log2_pieces, inverse_m);
}

template Status launch_means<float>(const RowmeanProblem &, const MeansPlan &, double *, double *, bool,
                                    const DeviceInfo &, cudaStream_t);
template Status launch_means<double>(const RowmeanProblem &, const MeansPlan &, double *, double *, bool,
                                     const DeviceInfo &, cudaStream_t);

}  // namespace fastgemm::detail::staged
