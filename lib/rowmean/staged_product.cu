// SPDX-License-Identifier: Apache-2.0
// The product pass of FG_ROWMEAN_STAGED: warps stream the matrix against the means on FP64 tensor cores
// (tensor_product.cuh), or, for a matrix that streams from memory against few batches, blocks stage both operands in
// shared memory first (streaming_product_kernel); segments of j, when there are several, are joined in a fixed order.
#include "core/check.hpp"
#include "core/launch.cuh"
#include "cuda/async_copy.cuh"
#include "rowmean/staged_passes.cuh"
#include "rowmean/tensor_product.cuh"

namespace fastgemm::detail::staged {
namespace {

// Product blocks resident per SM: f64 fragments with four groups take more registers than two blocks leave a thread.
template <typename T, int kGroups>
constexpr int kProductBlocksPerSm = sizeof(T) == 8 && kGroups == 4 ? 1 : 2;
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

// One warp per (16-row tile, slab of 8 * kGroups batches, segment of j).
template <typename T, int kGroups>
__global__ void __launch_bounds__(kBlockThreads, (kProductBlocksPerSm<T, kGroups>))
    product_kernel(const ProductParams<T> p) {
  wait_for_prior_grid();
  allow_dependent_launch();
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t first_unit = (static_cast<int64_t>(blockIdx.x) * kBlockThreads + threadIdx.x) / 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kBlockThreads / 32);
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
constexpr int kStreamTileRows = 16 * (kBlockThreads / 32);
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
__global__ void __launch_bounds__(kBlockThreads, kStreamBlocksPerSm)
    streaming_product_kernel(const ProductParams<T> p) {
  wait_for_prior_grid();
  allow_dependent_launch();
  using Stage = StreamStage<T>;
  constexpr int kGroups = kStreamBatches / 8;
  constexpr int kMatrixUnitsPerRow = kStreamRowBytes / 16;
  constexpr int kMeansUnitsPerRow = Stage::kMeansRowBytes / 16;
  constexpr int kMatrixCopies = kStreamTileRows * kMatrixUnitsPerRow / kBlockThreads;
  constexpr int kMeansUnits = kStreamBatches * kMeansUnitsPerRow;
  constexpr int kMeansCopies = (kMeansUnits + kBlockThreads - 1) / kBlockThreads;
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
          const int index = thread + kBlockThreads * c;
          const int row = index / kMatrixUnitsPerRow, row_unit = index % kMatrixUnitsPerRow;
          const int column = column0 + row_unit * (16 / static_cast<int>(sizeof(T)));
          const bool valid = row0 + row < p.L && column < j_end;
          const T *source = valid ? p.matrix + (row0 + row) * p.L + column : p.matrix;
          copy_chunk(
              reinterpret_cast<float *>(slot + stream_offset(row, kStreamRowBytes, row_unit, Stage::kMatrixSwizzle)),
              reinterpret_cast<const float *>(source), valid ? 16 : 0);
        }
        unsigned char *means_slot = slot + kStreamMatrixBytes;
#pragma unroll
        for (int c = 0; c < kMeansCopies; ++c) {
          const int index = thread + kBlockThreads * c;
          if (index < kMeansUnits) {
            const int batch = index / kMeansUnitsPerRow, row_unit = index % kMeansUnitsPerRow;
            const int column = column0 + row_unit * 2;
            const bool valid = k0 + batch < p.N && column < j_end;
            const double *source = valid ? p.means + (k0 + batch) * p.L + column : p.means;
            copy_chunk(reinterpret_cast<float *>(
                           means_slot + stream_offset(batch, Stage::kMeansRowBytes, row_unit, Stage::kMeansSwizzle)),
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

template <typename T, int kGroups>
Status launch_tensor_product(const ProductParams<T> &params, bool overlap, cudaStream_t stream) {
  const int64_t units = params.row_tiles * params.slabs * params.segments;
  return launch_dependent(overlap, product_kernel<T, kGroups>,
                          dim3(capped_grid(ceil_div(units, kBlockThreads / 32), INT32_MAX)), dim3(kBlockThreads), 0,
                          stream, params);
}

template <typename T>
Status launch_streaming_product(const ProductParams<T> &params, bool overlap, cudaStream_t stream) {
  const int64_t units = params.row_tiles * params.slabs * params.segments;
  constexpr int kSharedBytes = kStreamStages * StreamStage<T>::kBytes;
  FG_CUDA_CHECK(
      cudaFuncSetAttribute(streaming_product_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
  return launch_dependent(overlap, streaming_product_kernel<T>, dim3(capped_grid(units, INT32_MAX)),
                          dim3(kBlockThreads), kSharedBytes, stream, params);
}

}  // namespace

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
  const int64_t wanted =
      plan.streaming ? kStreamBlocksPerSm * device.sm_count * 7 / 8 : kProductWarpsPerSm * device.sm_count;
  while (plan.segments < kMaxSegments && plan.row_tiles * plan.slabs * plan.segments < wanted &&
         p.L >= plan.segments * 2 * kMinSegmentLength)
    plan.segments *= 2;
  plan.segment_length = ceil_div(ceil_div(p.L, plan.segments), 16) * 16;
  plan.matrix_prefetch = plan.matrix_streams ? kMatrixPrefetchColumns : 0;
  return plan;
}

template <typename T>
Status launch_product(const ProductParams<T> &params, const ProductPlan &plan, bool overlap, cudaStream_t stream) {
  const Status product = plan.streaming     ? launch_streaming_product<T>(params, overlap, stream)
                         : plan.groups == 4 ? launch_tensor_product<T, 4>(params, overlap, stream)
                                            : launch_tensor_product<T, 2>(params, overlap, stream);
  FG_RETURN_IF_ERROR(product);
  if (plan.segments == 1) return Status::success();
  const int64_t count = params.L * params.N;
  return launch_dependent(overlap, join_segments_kernel<T>,
                          dim3(capped_grid(ceil_div(count, kBlockThreads), INT32_MAX)), dim3(kBlockThreads), 0, stream,
                          static_cast<const double *>(params.segment_sums), params.output, count, plan.segments);
}

template Status launch_product<float>(const ProductParams<float> &, const ProductPlan &, bool, cudaStream_t);
template Status launch_product<double>(const ProductParams<double> &, const ProductPlan &, bool, cudaStream_t);

}  // namespace fastgemm::detail::staged
