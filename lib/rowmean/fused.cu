// SPDX-License-Identifier: Apache-2.0
// FG_ROWMEAN_FUSED: one pass over the input, the L x L product overlapped with the read.
//
// One persistent block per SM takes tiles of kTileBatches batches in turn. Its producer warps sum the tile's rows
// (row_sums.cuh) into one of two shared-memory buffers of means while its consumer warps multiply the previous
// tile's means by the matrix on FP64 tensor cores (tensor_product.cuh), reading the matrix from L2, and write the
// tile's output columns. Named barriers pass each buffer from producers to consumers ("full") and back ("empty"),
// so that reading a tile overlaps the product of the one before; on the last tile, with nothing left to read, the
// producers join in.
//
// The means stay on chip, so the input is read once and nothing but the output is written. The price is shared
// memory: two tiles of at least 8 batches' means must fit, which bounds L (about 3600 for f32, 1800 for f64 with
// 227 KB per block); beyond that the algorithm refuses the problem, and AUTO passes the means through memory. The means
// are kept in the problem's type: f32 means are rounded once to f32 (their sums and the product are double), which is
// what lets two tiles of 24 f32 batches of L = 1024 fit.
#include <string>

#include "core/check.hpp"
#include "core/dtype.hpp"
#include "core/launch.cuh"
#include "cuda/warp_roles.cuh"
#include "rowmean/fused.hpp"
#include "rowmean/row_sums.cuh"
#include "rowmean/tensor_product.cuh"
#include "rowmean/variant.hpp"

namespace fastgemm::detail {
namespace {

constexpr int kProducerWarps = 8;
constexpr int kConsumerWarps = 8;
using Roles = WarpRoles<kProducerWarps, kConsumerWarps>;
constexpr int kProducerThreads = Roles::kProducerThreads;
constexpr int kFusedThreads = Roles::kThreads;
// Named barrier ids; 0 belongs to __syncthreads. Buffer b uses kFullBarrier + b and kEmptyBarrier + b.
constexpr int kFullBarrier = 1;
constexpr int kEmptyBarrier = 3;
// Tile widths tried, widest first: wider tiles read the matrix from L2 fewer times.
constexpr int kTileBatchChoices[] = {64, 32, 24, 16, 8};
constexpr int kNarrowestTile = 8;
// Chunks of matrix rows each consumer warp keeps loading ahead (from L2) while it multiplies: 32 bytes per lane.
template <typename T>
constexpr int kMatrixDepth = sizeof(T) == 4 ? 2 : 1;

template <typename T>
struct FusedParams {
  const T *input;
  const T *matrix;
  T *output;
  int64_t L, M, N;
  int64_t tiles;     // ceil(N / tile batches)
  int64_t means_ld;  // elements between two batches' means in a shared-memory buffer
  double inverse_m;
  SpanReadPlan read;
  bool matrix_vector_ok;  // 16-byte loads of matrix rows apply
  bool output_pair_ok;    // output pairs (k, k + 1), k even, are 2-element aligned
};

// Row q of a tile (batch q / L, row q % L) goes to means[batch * ld + q % L]. An f32 mean that is not finite (an
// infinity or NaN in the input, or a sum past the f32 range) stamps the buffer with the tile's number: the consumers
// then multiply that tile with converted means rather than scaled ones (see scaled_double), so that infinities and
// NaNs reach the output as they would through any product.
template <typename T>
struct SharedMeansSink {
  T *means;
  unsigned *stamp;
  unsigned tile_stamp;
  unsigned L;
  int64_t ld;
  double inverse_m;
  __device__ __forceinline__ void operator()(int64_t row, double sum) const {
    const unsigned q = static_cast<unsigned>(row);
    const unsigned batch = q / L;
    const T mean = static_cast<T>(sum * inverse_m);
    means[batch * ld + (q - batch * L)] = mean;
    if constexpr (sizeof(T) == 4) {
      if (!isfinite(mean)) *stamp = tile_stamp;
    }
  }
};

// The producers' part and the consumers' part are separate functions so that each gets its own register allocation
// within the 128 registers a thread of this block has; only a few loop values stay live across the calls.

// The means of batches [k_begin, k_begin + width) into `means`, by the producer warps.
template <typename T>
__device__ __noinline__ void produce_means(const T *input, int64_t L, int64_t M, SpanReadPlan read, double inverse_m,
                                           int64_t means_ld, T *means, unsigned *stamp, unsigned tile_stamp,
                                           int64_t k_begin, int width) {
  const SharedMeansSink<T> sink{means, stamp, tile_stamp, static_cast<unsigned>(L), means_ld, inverse_m};
  sum_spans(read, input, k_begin * L, width * L, SpanLayout{M, M, 0}, static_cast<int>(threadIdx.x), kProducerThreads,
            sink);
}

// Output columns [k_begin, k_begin + width) from the tile's means: units of 16 matrix rows x one slab of 8 * kGroups
// batches, shared out among `helpers` warps, this one being number `helper`. kScaledMeans: f32 means, all finite, enter
// the tensor cores as scaled_double.
template <typename T, int kTileBatches, int kGroups, bool kScaledMeans>
__device__ __noinline__ void multiply_means(MatrixOperand<T> matrix, T *output, int64_t N, bool output_pair_ok,
                                            const T *means, int64_t means_ld, int64_t k_begin, int width, int helper,
                                            int helpers) {
  constexpr int kSlabBatches = 8 * kGroups;
  constexpr int kSlabs = kTileBatches / kSlabBatches;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t units = (matrix.L + 15) / 16 * kSlabs;
  for (int64_t unit = helper; unit < units; unit += helpers) {
    const int64_t i0 = unit / kSlabs * 16;
    const int first = static_cast<int>(unit % kSlabs) * kSlabBatches;
    if (first >= width) continue;
    const int active = (width - first + 7) / 8 < kGroups ? (width - first + 7) / 8 : kGroups;
    const MeansOperand<T> slab{means + first * means_ld, means_ld, kSlabBatches, true};
    double acc[kGroups][4] = {};
    multiply_tile<kGroups, true, kMatrixDepth<T>, kScaledMeans>(acc, matrix, i0, slab, active, 0,
                                                                static_cast<int>(matrix.L), lane);
    if constexpr (kScaledMeans) {
#pragma unroll
      for (int group = 0; group < kGroups; ++group)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[group][e] *= kMeansScale;
    }
    store_tile(acc, output, N, matrix.L, i0, k_begin + first, k_begin + width, active, output_pair_ok, lane);
  }
}

template <typename T, int kTileBatches, int kGroups>
__global__ void __launch_bounds__(kFusedThreads, 1) fused_kernel(const FusedParams<T> p) {
  static_assert(kTileBatches % (8 * kGroups) == 0, "a tile is a whole number of slabs");
  extern __shared__ __align__(16) unsigned char shared_storage[];
  T *buffers = reinterpret_cast<T *>(shared_storage);
  const int64_t buffer_elements = kTileBatches * p.means_ld;
  // Each buffer's stamp: the number (from 1) of the last tile of this block whose f32 means were not all finite.
  unsigned *stamps = reinterpret_cast<unsigned *>(buffers + 2 * buffer_elements);
  // The columns past L of every buffer row must read as zero; the producers only ever write columns below L.
  for (int64_t index = threadIdx.x; index < 2 * buffer_elements; index += kFusedThreads) buffers[index] = T(0);
  if (threadIdx.x < 2) stamps[threadIdx.x] = 0;
  __syncthreads();

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const bool producer = warp < kProducerWarps;
  const int64_t block_tiles = (p.tiles - blockIdx.x + gridDim.x - 1) / gridDim.x;
  for (int64_t t = 0; t < block_tiles; ++t) {
    const int64_t k_begin = (blockIdx.x + t * gridDim.x) * kTileBatches;
    const int width = static_cast<int>(p.N - k_begin < kTileBatches ? p.N - k_begin : kTileBatches);
    const int buffer = static_cast<int>(t % 2);
    T *means = buffers + buffer * buffer_elements;
    const bool last = t + 1 == block_tiles;
    if (producer) {
      // Buffer b was last filled two tiles ago; the consumers say when they are done with it.
      if (t >= 2) Roles::sync_all(kEmptyBarrier + buffer);
      produce_means(p.input, p.L, p.M, p.read, p.inverse_m, p.means_ld, means, stamps + buffer,
                    static_cast<unsigned>(t + 1), k_begin, width);
      if (!last) {
        Roles::arrive_all(kFullBarrier + buffer);
        continue;
      }
    }
    // The consumers, and on the last tile (nothing left to read) the producers as well.
    Roles::sync_all(kFullBarrier + buffer);
    const int helper = last ? warp : warp - kProducerWarps;
    const int helpers = last ? kProducerWarps + kConsumerWarps : kConsumerWarps;
    const MatrixOperand<T> matrix{p.matrix, p.L, p.matrix_vector_ok};
    // The stamp is read before this buffer is handed back, and written again only after it is handed back.
    if (sizeof(T) == 4 && stamps[buffer] != static_cast<unsigned>(t + 1))
      multiply_means<T, kTileBatches, kGroups, sizeof(T) == 4>(matrix, p.output, p.N, p.output_pair_ok, means,
                                                               p.means_ld, k_begin, width, helper, helpers);
    else
      multiply_means<T, kTileBatches, kGroups, false>(matrix, p.output, p.N, p.output_pair_ok, means, p.means_ld,
                                                      k_begin, width, helper, helpers);
    // Only buffers that will be filled again are handed back, so that no barrier is left half-arrived.
    if (!producer && t + 2 < block_tiles) Roles::arrive_all(kEmptyBarrier + buffer);
  }
}

// Means rows are padded so that the fragment loads of 8 consecutive batches fall in distinct shared-memory banks:
// f32 rows an odd multiple of 64 bytes apart, f64 rows 16 bytes past a multiple of 128; both keep 16-byte alignment
// and at least round_up(L, 16) columns.
int64_t means_ld(fg_dtype_t dtype, int64_t L) {
  return dtype == FG_F64 ? ceil_div(L, 16) * 16 + 2 : ceil_div(L, 32) * 32 + 16;
}

// Two buffers of means, then their two stamps.
size_t shared_bytes(fg_dtype_t dtype, int64_t L, int tile_batches) {
  return static_cast<size_t>(2 * tile_batches * means_ld(dtype, L) * element_size(dtype)) + 2 * sizeof(unsigned);
}

// The widest tile that fits and still leaves every SM at least two tiles to overlap. f32 tiles of 24 batches are left
// out: their consumer warps take three groups of 8 batches, which the 128 registers a thread has here hold only with
// more spilling than two, and they ran slower than tiles of 16 (bench/NOTES-rowmean.md), whose slabs of 16 batches
// read the matrix from L2 as often per batch as those of wider tiles.
int choose_tile_batches(const RowmeanProblem &p, const DeviceInfo &device) {
  for (int tile_batches : kTileBatchChoices) {
    if (p.dtype == FG_F32 && tile_batches == 24) continue;
    if (shared_bytes(p.dtype, p.L, tile_batches) <= device.smem_per_block_optin &&
        ceil_div(p.N, tile_batches) >= 2 * static_cast<int64_t>(device.sm_count))
      return tile_batches;
  }
  return kNarrowestTile;
}

bool means_fit_on_chip(const RowmeanProblem &p, const DeviceInfo &device) {
  return shared_bytes(p.dtype, p.L, kNarrowestTile) <= device.smem_per_block_optin;
}

Status can_implement_fused(const RowmeanProblem &p, const DeviceInfo &device) {
  if (means_fit_on_chip(p, device)) return Status::success();
  return Status::failure(StatusCode::not_supported, "two tiles of " + std::to_string(kNarrowestTile) +
                                                        " batches' means at L = " + std::to_string(p.L) + " need " +
                                                        std::to_string(shared_bytes(p.dtype, p.L, kNarrowestTile)) +
                                                        " bytes of shared memory, the device has " +
                                                        std::to_string(device.smem_per_block_optin) + " per block");
}

// The shared-memory limit is an attribute of the kernel, shared by every thread that launches it: each sets
// it to the device's largest, the same value from all of them, so that no thread's setting can undercut
// another's launch of a wider tile.
template <typename T, int kTileBatches, int kGroups>
Status launch_fused(const FusedParams<T> &params, size_t bytes, int grid, const DeviceInfo &device,
                    cudaStream_t stream) {
  auto *kernel = fused_kernel<T, kTileBatches, kGroups>;
  FG_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(device.smem_per_block_optin)));
  return launch(kernel, dim3(grid), dim3(kFusedThreads), bytes, stream, params);
}

template <typename T>
Status run_typed(const RowmeanProblem &p, const RunArgs &args) {
  const DeviceInfo &device = *args.device;
  const int tile_batches = choose_tile_batches(p, device);
  FusedParams<T> params;
  set_one_pass_params<T>(params, p);
  params.tiles = ceil_div(p.N, tile_batches);
  params.means_ld = means_ld(p.dtype, p.L);
  params.matrix_vector_ok = reinterpret_cast<uintptr_t>(p.matrix) % 16 == 0 && p.L % (16 / sizeof(T)) == 0;
  params.output_pair_ok = reinterpret_cast<uintptr_t>(p.output) % (2 * sizeof(T)) == 0 && p.N % 2 == 0;
  const size_t bytes = shared_bytes(p.dtype, p.L, tile_batches);
  const int grid = static_cast<int>(params.tiles < device.sm_count ? params.tiles : device.sm_count);
  const cudaStream_t stream = args.stream;
  // Batches per warp-level unit: as many as the 128 registers of a thread allow (the block holds 512 threads on one
  // SM), so that each matrix load feeds more tensor-core work. f64 fragments take twice the registers: one group of
  // 8, the slabs of a row tile then share its matrix rows through L1.
  constexpr int kWide = sizeof(T) == 4 ? 2 : 1;
  switch (tile_batches) {
    case 64: return launch_fused<T, 64, kWide>(params, bytes, grid, device, stream);
    case 32: return launch_fused<T, 32, kWide>(params, bytes, grid, device, stream);
    case 24: return launch_fused < T, 24, sizeof(T) == 4 ? 3 : 1 > (params, bytes, grid, device, stream);
    case 16: return launch_fused<T, 16, kWide>(params, bytes, grid, device, stream);
    default: return launch_fused<T, 8, 1>(params, bytes, grid, device, stream);
  }
}

}  // namespace

int fused_tile_batches(const RowmeanProblem &p, const DeviceInfo &device) {
  return means_fit_on_chip(p, device) ? choose_tile_batches(p, device) : 0;
}

namespace {

Status run_fused(const RowmeanProblem &p, const RunArgs &args) {
  return dispatch_dtype(p.dtype, [&](auto zero) { return run_typed<decltype(zero)>(p, args); });
}

}  // namespace

extern const RowmeanVariant fused_rowmean = {FG_ROWMEAN_FUSED, "fused", can_implement_fused,
                                             no_workspace<RowmeanProblem>, run_fused};

}  // namespace fastgemm::detail
