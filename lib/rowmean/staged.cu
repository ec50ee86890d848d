// FG_ROWMEAN_STAGED: any L, M and N, in stages through the handle's workspace.
//
// 1. Row means in double (row_sums.cuh), read at the speed of the input. When there are too few rows to keep every SM
//    busy (3 x 100000 x 100 has 300), each row is split into 2^k pieces whose sums are joined afterwards in a fixed
//    order: no atomics, so results are the same bit for bit from run to run.
// 2. The product. When the matrix is read once or stays in L2, warps stream it against the means on FP64 tensor cores
//    (tensor_product.cuh), each warp a 16-row tile over a segment of j; segments, when there are few row tiles to go
//    round, are summed afterwards, again in a fixed order. A matrix that streams from memory against up to 16 batches
//    at a time goes through shared memory instead (streaming_product_kernel), which keeps the memory busy. When the
//    matrix is large and re-read for many batches (L = 4096, N = 16384: a compute-bound 4096 x 16384 x 4096 product),
//    cuBLAS DGEMM does it, on the means in double and, for f32, a double copy of the matrix. Either way the products
//    are exact and summed in double.
#include <type_traits>

#include "core/check.hpp"
#include "core/launch.cuh"
#include "rowmean/row_sums.cuh"
#include "rowmean/tensor_product.cuh"
#include "rowmean/variant.hpp"
#include "rowmean/workspace.hpp"
#include "sgemm/pipeline.cuh"

namespace fastgemm::detail {
namespace {

using pipeline::commit_copies;
using pipeline::copy_chunk;
using pipeline::wait_copies;

constexpr int kStageThreads = 256;
// Blocks of the row-sum kernel resident on an SM (its launch bounds hold it to the registers for that many), so that
// its grid is one full wave: 16 warps with 128 bytes in flight per lane keep the memory system saturated.
constexpr int kRowSumBlocksPerSm = 2;
// Product blocks resident per SM: f64 fragments with four groups take more registers than two blocks leave a thread.
template <typename T, int kGroups>
constexpr int kProductBlocksPerSm = sizeof(T) == 8 && kGroups == 4 ? 1 : 2;
// Row splitting: at least 64 spans per SM (several for every resident warp), pieces of at least this many elements,
// at most 2^6 pieces.
constexpr int64_t kSpansPerSm = 64;
constexpr int64_t kMinPieceLength = 2048;
constexpr int kMaxLog2Pieces = 6;
// Product: enough warp units for a block of 8 warps per SM, segments of at least this many columns, at most 64.
constexpr int64_t kProductWarpsPerSm = 8;
constexpr int64_t kMinSegmentLength = 256;
// How far ahead a product warp fetches a matrix that streams from memory into L2: 8 chunks of 16 columns, 8 KB of f32
// rows per warp in flight beyond its registers.
constexpr int kMatrixPrefetchColumns = 128;
constexpr int64_t kMaxSegments = 64;
// Chunks of matrix rows each product warp keeps loading ahead (32 bytes per lane per f32 chunk, 64 per f64 one): the
// product warps stream the matrix from memory and few of them fit on an SM, so each keeps 64 bytes per lane in flight
// where its registers allow.
template <typename T, int kGroups>
constexpr int kMatrixDepth = (sizeof(T) == 4 && kGroups == 2) || kProductBlocksPerSm<T, kGroups> == 1 ? 2 : 1;

struct ScaledSink {
  double *out;
  double scale;
  __device__ __forceinline__ void operator()(int64_t span, double sum) const { out[span] = sum * scale; }
};

template <typename T>
__global__ void __launch_bounds__(kStageThreads, kRowSumBlocksPerSm)
    row_sums_kernel(const T *input, double *sums, SpanLayout layout, int64_t span_count, SpanReadPlan read,
                    double scale) {
  allow_dependent_launch();
  const int worker = static_cast<int>(blockIdx.x * kStageThreads + threadIdx.x);
  sum_spans(read, input, 0, span_count, layout, worker, static_cast<int>(gridDim.x * kStageThreads),
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

// One warp per (16-row tile, slab of 8 * kGroups batches, segment of j).
template <typename T, int kGroups>
__global__ void __launch_bounds__(kStageThreads, (kProductBlocksPerSm<T, kGroups>))
    product_kernel(const ProductParams<T> p) {
  wait_for_prior_grid();
  allow_dependent_launch();
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t first_unit = (static_cast<int64_t>(blockIdx.x) * kStageThreads + threadIdx.x) / 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kStageThreads / 32);
  const int64_t units = p.row_tiles * p.slabs * p.segments;
  const MatrixOperand<T> matrix{p.matrix, p.L, p.matrix_vector_ok};
  for (int64_t unit = first_unit; unit < units; unit += warps) {
    // Consecutive warps take consecutive row tiles of one slab and segment: the means they share come from L1.
    const int64_t i0 = unit % p.row_tiles * 16;
    const int64_t rest = unit / p.row_tiles;
    const int64_t k0 = rest % p.slabs * (8 * kGroups);
    const int64_t segment = rest / p.slabs;
    const int64_t j_begin = segment * p.segment_length;
    const int64_t j_end = j_begin + p.segment_length < p.L ? j_begin + p.segment_length : p.L;
    const int active = (p.N - k0 + 7) / 8 < kGroups ? static_cast<int>((p.N - k0 + 7) / 8) : kGroups;
    const MeansOperand<double> means{p.means + k0 * p.L, p.L, p.N - k0, p.means_vector_ok};
    double acc[kGroups][4] = {};
    multiply_tile<kGroups, false, kMatrixDepth<T, kGroups>>(acc, matrix, i0, means, active, static_cast<int>(j_begin),
                                                             static_cast<int>(j_end), lane, p.matrix_prefetch);
    if (p.segments == 1)
      store_tile(acc, p.output, p.N, p.L, i0, k0, p.N, active, p.output_pair_ok, lane);
    else
      store_tile(acc, p.segment_sums + segment * p.L * p.N, p.N, p.L, i0, k0, p.N, active, p.segment_pair_ok, lane);
  }
}

// The product for a matrix that streams from memory, for two groups of 8 batches per slab. A block of 8 warps takes
// 128 matrix rows (a 16-row tile per warp) against one slab over one segment of j, and copies both operands into a
// ring of shared-memory stages by cp.async: per stage, 128 bytes of each of the 128 matrix rows and the slab's 16 mean
// vectors over the same columns. The bytes in flight then cost no registers (kStreamStages - 1 stages of 16 KB of
// matrix per block, two blocks per SM), and the means are loaded once per block instead of once per warp, from the
// ring rather than from L1: loading them per warp from L1 put their latency into every chunk, and the product ran at
// half the memory's speed. Fragments are read from shared memory in the layout of multiply_tile; odd rows of each
// operand have their 16-byte units permuted (swizzle) so that a quarter warp, reading rows g and g + 1, hits distinct
// banks.
constexpr int kStreamRowBytes = 128;
// Three stages (two in flight while one is multiplied, 60 KB per f32 block) ran the product of f32 8192 x 2048 x 16 in
// 104 us on the H100, four or five in 107-108 us.
constexpr int kStreamStages = 3;
constexpr int kStreamBlocksPerSm = 2;
constexpr int kStreamTileRows = 16 * (kStageThreads / 32);
constexpr int kStreamBatches = 16;
constexpr int kStreamMatrixBytes = kStreamTileRows * kStreamRowBytes;

template <typename T>
struct StreamStage {
  static constexpr int kColumns = kStreamRowBytes / static_cast<int>(sizeof(T));
  static constexpr int kMeansRowBytes = kColumns * 8;
  static constexpr int kBytes = kStreamMatrixBytes + kStreamBatches * kMeansRowBytes;
  // The unit permutation of odd rows: a lane reads 16-byte unit 4c + t (f32 matrix) or units 8c + 2t and the next
  // (f64 matrix, means) of rows g and g + 1; flipping bit 2 or bit 0 of the unit puts the odd row's units on the banks
  // the even row leaves free.
  static constexpr int kMatrixSwizzle = sizeof(T) == 4 ? 4 : 1;
  static constexpr int kMeansSwizzle = 1;
};

__device__ __forceinline__ int stream_offset(int row, int row_bytes, int unit, int swizzle) {
  return row * row_bytes + ((unit ^ ((row & 1) * swizzle)) * 16);
}

// Four consecutive elements of a swizzled row from 16-byte unit `unit` on: one unit of f32, two of f64.
template <typename T>
__device__ __forceinline__ Quad<T> load_stream_quad(const unsigned char *base, int row, int row_bytes, int unit,
                                                    int swizzle) {
  if constexpr (sizeof(T) == 4) {
    return load_shared_quad(reinterpret_cast<const T *>(base + stream_offset(row, row_bytes, unit, swizzle)));
  } else {
    const double2 low = *reinterpret_cast<const double2 *>(base + stream_offset(row, row_bytes, unit, swizzle));
    const double2 high = *reinterpret_cast<const double2 *>(base + stream_offset(row, row_bytes, unit + 1, swizzle));
    return {{low.x, low.y, high.x, high.y}};
  }
}

template <typename T>
__global__ void __launch_bounds__(kStageThreads, kStreamBlocksPerSm)
    streaming_product_kernel(const ProductParams<T> p) {
  wait_for_prior_grid();
  allow_dependent_launch();
  using Stage = StreamStage<T>;
  constexpr int kGroups = kStreamBatches / 8;
  constexpr int kMatrixUnitsPerRow = kStreamRowBytes / 16;
  constexpr int kMeansUnitsPerRow = Stage::kMeansRowBytes / 16;
  constexpr int kMatrixCopies = kStreamTileRows * kMatrixUnitsPerRow / kStageThreads;
  constexpr int kMeansUnits = kStreamBatches * kMeansUnitsPerRow;
  constexpr int kMeansCopies = (kMeansUnits + kStageThreads - 1) / kStageThreads;
  extern __shared__ __align__(16) unsigned char stream_shared[];
  const int thread = static_cast<int>(threadIdx.x);
  const int lane = thread % 32, warp = thread / 32;
  const int g = lane / 4, t = lane % 4;
  const int64_t units = p.row_tiles * p.slabs * p.segments;
  for (int64_t unit = blockIdx.x; unit < units; unit += gridDim.x) {
    const int64_t row0 = unit % p.row_tiles * kStreamTileRows;
    const int64_t rest = unit / p.row_tiles;
    const int64_t k0 = rest % p.slabs * kStreamBatches;
    const int64_t segment = rest / p.slabs;
    const int j_begin = static_cast<int>(segment * p.segment_length);
    const int j_end = static_cast<int>(j_begin + p.segment_length < p.L ? j_begin + p.segment_length : p.L);
    const int stages = (j_end - j_begin + Stage::kColumns - 1) / Stage::kColumns;
    // Stage `stage` into its ring slot: matrix rows past L, batches past N and columns past j_end as zeros.
    auto issue = [&](int stage) {
      if (stage < stages) {
        unsigned char *slot = stream_shared + stage % kStreamStages * Stage::kBytes;
        const int column0 = j_begin + stage * Stage::kColumns;
#pragma unroll
        for (int c = 0; c < kMatrixCopies; ++c) {
          const int index = thread + kStageThreads * c;
          const int row = index / kMatrixUnitsPerRow, row_unit = index % kMatrixUnitsPerRow;
          const int column = column0 + row_unit * (16 / static_cast<int>(sizeof(T)));
          const bool valid = row0 + row < p.L && column < j_end;
          const T *source = valid ? p.matrix + (row0 + row) * p.L + column : p.matrix;
          copy_chunk(reinterpret_cast<float *>(slot + stream_offset(row, kStreamRowBytes, row_unit,
                                                                   Stage::kMatrixSwizzle)),
                     reinterpret_cast<const float *>(source), valid ? 16 : 0);
        }
        unsigned char *means_slot = slot + kStreamMatrixBytes;
#pragma unroll
        for (int c = 0; c < kMeansCopies; ++c) {
          const int index = thread + kStageThreads * c;
          if (index < kMeansUnits) {
            const int batch = index / kMeansUnitsPerRow, row_unit = index % kMeansUnitsPerRow;
            const int column = column0 + row_unit * 2;
            const bool valid = k0 + batch < p.N && column < j_end;
            const double *source = valid ? p.means + (k0 + batch) * p.L + column : p.means;
            copy_chunk(reinterpret_cast<float *>(means_slot + stream_offset(batch, Stage::kMeansRowBytes, row_unit,
                                                                           Stage::kMeansSwizzle)),
                       reinterpret_cast<const float *>(source), valid ? 16 : 0);
          }
        }
      }
      commit_copies();
    };
#pragma unroll
    for (int stage = 0; stage < kStreamStages - 1; ++stage) issue(stage);
    const int active = (p.N - k0 + 7) / 8 < kGroups ? static_cast<int>((p.N - k0 + 7) / 8) : kGroups;
    double acc[kGroups][4] = {};
    const int row_low = warp * 16 + g, row_high = row_low + 8;
#pragma unroll 1
    for (int stage = 0; stage < stages; ++stage) {
      wait_copies<kStreamStages - 2>();
      __syncthreads();
      // Every warp is past the previous stage: its slot takes the stage kStreamStages - 1 ahead.
      issue(stage + kStreamStages - 1);
      const unsigned char *slot = stream_shared + stage % kStreamStages * Stage::kBytes;
      const unsigned char *means_slot = slot + kStreamMatrixBytes;
#pragma unroll
      for (int chunk = 0; chunk < Stage::kColumns / 16; ++chunk) {
        // Lane t's four columns chunk * 16 + 4t .. + 3 of rows g and g + 8, and of mean vectors g of each group.
        const int u = (chunk * 4 + t) * static_cast<int>(sizeof(T) / 4);
        const Quad<T> low = load_stream_quad<T>(slot, row_low, kStreamRowBytes, u, Stage::kMatrixSwizzle);
        const Quad<T> high = load_stream_quad<T>(slot, row_high, kStreamRowBytes, u, Stage::kMatrixSwizzle);
#pragma unroll
        for (int group = 0; group < kGroups; ++group) {
          if (group >= active) continue;
          const Quad<double> b = load_stream_quad<double>(means_slot, group * 8 + g, Stage::kMeansRowBytes,
                                                          chunk * 8 + 2 * t, Stage::kMeansSwizzle);
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const double a[4] = {static_cast<double>(low.v[2 * half]), static_cast<double>(high.v[2 * half]),
                                 static_cast<double>(low.v[2 * half + 1]), static_cast<double>(high.v[2 * half + 1])};
            const double bb[2] = {b.v[2 * half], b.v[2 * half + 1]};
            mma_16x8x8(acc[group], a, bb);
          }
        }
      }
    }
    // The ring is empty and every warp is done with it before the next unit fills it again.
    wait_copies<0>();
    __syncthreads();
    const int64_t i0 = row0 + warp * 16;
    if (p.segments == 1)
      store_tile(acc, p.output, p.N, p.L, i0, k0, p.N, active, p.output_pair_ok, lane);
    else
      store_tile(acc, p.segment_sums + segment * p.L * p.N, p.N, p.L, i0, k0, p.N, active, p.segment_pair_ok, lane);
  }
}

template <typename T>
__global__ void join_segments_kernel(const double *segment_sums, T *output, int64_t count, int64_t segments) {
  wait_for_prior_grid();
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double sum = 0.0;
    for (int64_t segment = 0; segment < segments; ++segment) sum += segment_sums[segment * count + index];
    output[index] = static_cast<T>(sum);
  }
}

template <typename From, typename To>
__global__ void convert_kernel(const From *from, To *to, int64_t count) {
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x)
    to[index] = static_cast<To>(from[index]);
}

template <typename From, typename To>
Status convert(const From *from, To *to, int64_t count, cudaStream_t stream) {
  return launch(convert_kernel<From, To>, dim3(capped_grid(ceil_div(count, kStageThreads), INT32_MAX)),
                dim3(kStageThreads), 0, stream, from, to, count);
}

// Rows are split while there are fewer spans than kSpansPerSm per SM and the pieces stay long.
int choose_log2_pieces(int64_t rows, int64_t M, const DeviceInfo &device) {
  const int64_t wanted = kSpansPerSm * device.sm_count;
  int log2_pieces = 0;
  while (log2_pieces < kMaxLog2Pieces && (rows << log2_pieces) < wanted &&
         (M >> (log2_pieces + 1)) >= kMinPieceLength)
    ++log2_pieces;
  return log2_pieces;
}

struct ProductPlan {
  bool tensor_cores = true;  // false: cuBLAS DGEMM
  bool matrix_streams = false;  // the matrix is read from memory (once or twice), not from L2
  bool streaming = false;    // streaming_product_kernel: blocks of kStreamTileRows rows, operands staged by cp.async
  int groups = 4;            // batches per warp unit / 8
  int64_t row_tiles = 0, slabs = 0, segments = 1, segment_length = 0;
};

// matrix_vector_ok: the matrix is 16-byte aligned with rows of whole 16-byte units.
ProductPlan plan_product(const RowmeanProblem &p, const DeviceInfo &device, bool matrix_vector_ok) {
  ProductPlan plan;
  // Four groups of 8 batches per warp halve the matrix reads against two; f64 fragments of four groups leave room for
  // one block of 8 warps per SM only, too few to hide the latency of the means' loads, so f64 takes two.
  plan.groups = p.N <= 16 || p.dtype == FG_F64 ? 2 : 4;
  // Every slab reads the whole matrix: from memory once or twice, or from L2 when it fits with room to spare.
  const int64_t matrix_bytes = p.L * p.L * element_size(p.dtype);
  const bool matrix_in_l2 = matrix_bytes * 4 <= static_cast<int64_t>(device.l2_bytes);
  plan.matrix_streams = !matrix_in_l2;
  plan.streaming = plan.matrix_streams && plan.groups == 2 && matrix_vector_ok && device.arch() >= 80;
  const int64_t tile_rows = plan.streaming ? kStreamTileRows : 16;
  plan.row_tiles = ceil_div(p.L, tile_rows);
  plan.slabs = ceil_div(p.N, 8 * plan.groups);
  plan.tensor_cores = plan.slabs <= 2 || matrix_in_l2;
  // Units enough for a block of 8 warps per SM (a warp each), or, streaming, for a wave of kStreamBlocksPerSm blocks
  // per SM at least 7/8 full (f32 8192 x 2048 x 16: 256 units of 128 rows x 2048 columns for 264 places took 104 us,
  // 512 of 1024 columns 108 us).
  const int64_t wanted = plan.streaming ? kStreamBlocksPerSm * device.sm_count * 7 / 8
                                        : kProductWarpsPerSm * device.sm_count;
  while (plan.segments < kMaxSegments && plan.row_tiles * plan.slabs * plan.segments < wanted &&
         p.L >= plan.segments * 2 * kMinSegmentLength)
    plan.segments *= 2;
  plan.segment_length = ceil_div(ceil_div(p.L, plan.segments), 16) * 16;
  return plan;
}

template <typename T, int kGroups>
Status launch_product(const ProductParams<T> &params, bool overlap, cudaStream_t stream) {
  const int64_t units = params.row_tiles * params.slabs * params.segments;
  return launch_dependent(overlap, product_kernel<T, kGroups>,
                          dim3(capped_grid(ceil_div(units, kStageThreads / 32), INT32_MAX)), dim3(kStageThreads), 0,
                          stream, params);
}

template <typename T>
Status launch_streaming_product(const ProductParams<T> &params, bool overlap, cudaStream_t stream) {
  const int64_t units = params.row_tiles * params.slabs * params.segments;
  constexpr int kSharedBytes = kStreamStages * StreamStage<T>::kBytes;
  FG_CUDA_CHECK(cudaFuncSetAttribute(streaming_product_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     kSharedBytes));
  return launch_dependent(overlap, streaming_product_kernel<T>, dim3(capped_grid(units, INT32_MAX)),
                          dim3(kStageThreads), kSharedBytes, stream, params);
}

template <typename T>
Status launch_product(const ProductParams<T> &params, int groups, bool streaming, bool overlap, cudaStream_t stream) {
  if (streaming) return launch_streaming_product<T>(params, overlap, stream);
  return groups == 4 ? launch_product<T, 4>(params, overlap, stream) : launch_product<T, 2>(params, overlap, stream);
}

template <typename T>
Status run_typed(const RowmeanProblem &p, Context &context) {
  const DeviceInfo &device = context.device();
  const cudaStream_t stream = context.stream();
  const T *input = static_cast<const T *>(p.input);
  const T *matrix = static_cast<const T *>(p.matrix);
  T *output = static_cast<T *>(p.output);
  const int64_t rows = p.N * p.L;
  const double inverse_m = 1.0 / static_cast<double>(p.M);

  const int log2_pieces = choose_log2_pieces(rows, p.M, device);
  const int pieces = 1 << log2_pieces;
  const int64_t vector_width = 16 / static_cast<int64_t>(sizeof(T));
  // Pieces start on a vector boundary whenever rows do.
  const int64_t piece_length =
      pieces == 1 ? p.M : ceil_div(ceil_div(p.M, pieces), vector_width) * vector_width;
  const SpanLayout layout{p.M, piece_length, log2_pieces};
  const SpanReadPlan read = plan_span_read(p.input, p.dtype, layout);
  const int64_t span_count = rows * pieces;
  const bool matrix_vector_ok =
      reinterpret_cast<uintptr_t>(matrix) % 16 == 0 && p.L % (16 / static_cast<int64_t>(sizeof(T))) == 0;
  const ProductPlan product = plan_product(p, device, matrix_vector_ok);
  constexpr bool f32 = std::is_same_v<T, float>;
  // The kernels after the row sums start by programmatic dependent launch where the device has it.
  const bool overlap = device.arch() >= 90;

  WorkspaceCarver carver;
  const size_t means_at = carver.take(rows * 8);
  const size_t piece_sums_at = pieces > 1 ? carver.take(span_count * 8) : 0;
  const size_t segment_sums_at =
      product.tensor_cores && product.segments > 1 ? carver.take(product.segments * p.L * p.N * 8) : 0;
  const size_t matrix_copy_at = !product.tensor_cores && f32 ? carver.take(p.L * p.L * 8) : 0;
  const size_t output_copy_at = !product.tensor_cores && f32 ? carver.take(p.L * p.N * 8) : 0;
  void *workspace = nullptr;
  FG_RETURN_IF_ERROR(context.workspace(carver.bytes, &workspace));
  char *base = static_cast<char *>(workspace);
  double *means = reinterpret_cast<double *>(base + means_at);

  const SpanReadShape shape = kSpanReadShapes[read.shape];
  const int64_t spans_per_block_round =
      static_cast<int64_t>(spans_per_lane(shape, read.vector)) * (kStageThreads / shape.lanes);
  const int64_t row_sum_blocks = ceil_div(span_count, spans_per_block_round);
  const int64_t max_row_sum_blocks = static_cast<int64_t>(kRowSumBlocksPerSm) * device.sm_count;
  const dim3 row_sum_grid(static_cast<unsigned>(row_sum_blocks < max_row_sum_blocks ? row_sum_blocks
                                                                                     : max_row_sum_blocks));
  if (pieces == 1) {
    FG_RETURN_IF_ERROR(launch(row_sums_kernel<T>, row_sum_grid, dim3(kStageThreads), 0, stream, input, means, layout,
                              span_count, read, inverse_m));
  } else {
    double *piece_sums = reinterpret_cast<double *>(base + piece_sums_at);
    FG_RETURN_IF_ERROR(launch(row_sums_kernel<T>, row_sum_grid, dim3(kStageThreads), 0, stream, input, piece_sums,
                              layout, span_count, read, 1.0));
    FG_RETURN_IF_ERROR(launch_dependent(overlap, join_pieces_kernel,
                                        dim3(capped_grid(ceil_div(rows, kStageThreads), INT32_MAX)),
                                        dim3(kStageThreads), 0, stream, static_cast<const double *>(piece_sums), means,
                                        rows, pieces, inverse_m));
  }

  if (product.tensor_cores) {
    ProductParams<T> params;
    params.matrix = matrix;
    params.means = means;
    params.output = output;
    params.segment_sums = reinterpret_cast<double *>(base + segment_sums_at);
    params.L = p.L;
    params.N = p.N;
    params.row_tiles = product.row_tiles;
    params.slabs = product.slabs;
    params.segments = product.segments;
    params.segment_length = product.segment_length;
    params.matrix_prefetch = product.matrix_streams ? kMatrixPrefetchColumns : 0;
    params.matrix_vector_ok = matrix_vector_ok;
    params.means_vector_ok = p.L % 2 == 0;
    params.output_pair_ok = reinterpret_cast<uintptr_t>(output) % (2 * sizeof(T)) == 0 && p.N % 2 == 0;
    params.segment_pair_ok = p.N % 2 == 0;
    FG_RETURN_IF_ERROR(launch_product(params, product.groups, product.streaming, overlap, stream));
    if (product.segments == 1) return Status::success();
    const int64_t count = p.L * p.N;
    return launch_dependent(overlap, join_segments_kernel<T>,
                            dim3(capped_grid(ceil_div(count, kStageThreads), INT32_MAX)), dim3(kStageThreads), 0,
                            stream, static_cast<const double *>(params.segment_sums), output, count,
                            product.segments);
  }

  // In cuBLAS's column-major terms the row-major L x N output is the N x L matrix means * matrix^T.
  cublasHandle_t handle = nullptr;
  FG_RETURN_IF_ERROR(context.cublas(&handle));
  const double one = 1.0, zero = 0.0;
  if constexpr (std::is_same_v<T, double>) {
    FG_CUBLAS_CHECK(cublasDgemm_64(handle, CUBLAS_OP_T, CUBLAS_OP_N, p.N, p.L, p.L, &one, means, p.L, matrix, p.L,
                                   &zero, output, p.N));
  } else {
    double *matrix_copy = reinterpret_cast<double *>(base + matrix_copy_at);
    double *output_copy = reinterpret_cast<double *>(base + output_copy_at);
    FG_RETURN_IF_ERROR(convert(matrix, matrix_copy, p.L * p.L, stream));
    FG_CUBLAS_CHECK(cublasDgemm_64(handle, CUBLAS_OP_T, CUBLAS_OP_N, p.N, p.L, p.L, &one, means, p.L, matrix_copy,
                                   p.L, &zero, output_copy, p.N));
    FG_RETURN_IF_ERROR(convert(static_cast<const double *>(output_copy), output, p.L * p.N, stream));
  }
  return Status::success();
}

Status run_staged(const RowmeanProblem &p, Context &context) {
  return p.dtype == FG_F64 ? run_typed<double>(p, context) : run_typed<float>(p, context);
}

}  // namespace

const RowmeanVariant staged_rowmean = {FG_ROWMEAN_STAGED, "staged", any_rowmean_shape, run_staged};

}  // namespace fastgemm::detail
