// SPDX-License-Identifier: Apache-2.0
// FG_ROWMEAN_RELAY (the relay: the means are relayed from producer to consumer warps through L2): one
// read of the input, the L x L product running beside it, the means passed through L2.
//
// One persistent block per SM holds two kinds of warps that never wait for each other inside the block:
// - Producer warps take read items (a few hundred KB of consecutive rows each) from a ticket counter shared by the
//   grid, sum the rows (row_sums.cuh), write the means to the workspace and add the item's row count to
//   the counter of its slab (kSlabBatches batches).
// - Consumer warps take product tiles (kTileRows matrix rows x one slab's batches) from a second ticket counter in
//   slab order, wait until their slab's counter says all its rows are in, and multiply: matrix and means tiles go
//   from L2 into a ring of shared-memory stages by cp.async, and from there to the FP64 tensor cores. Each warp owns
//   a 32 x 32 output tile, so every operand value a warp loads feeds four multiply-adds per tensor instruction, and
//   the matrix is read from L2 once per slab of 64 batches, not once per few batches as when the means must fit on
//   chip.
// Tickets are handed out in order, and producers wait on nothing, so a consumer waits only for rows that some running
// producer has already taken: the grid cannot deadlock, whatever share of it is resident. Once the read is done the
// consumers still owe the last slab's product: its tiles are split over the columns into parts, summed in a fixed
// order by the block that finishes a row block's last part, so that this tail spreads over the SMs. The block that
// finishes a slab's last tile drops the slab's means from L2 (nothing reads them again), so they are never written
// back to memory.
//
// The read bounds the whole: the product hides almost entirely behind it (bench/NOTES-rowmean.md).
//
// The means are kept in the problem's type (f32 means rounded once, as the fused algorithm does); products of them
// with the matrix are exact in double and summed in double. Requirements, checked by can_implement: compute capability
// 8.0 or later, the matrix 16-byte aligned and L a whole number of 16-byte units, tickets and counts within 32 bits.
#include <string>

#include "core/check.hpp"
#include "core/dtype.hpp"
#include "core/launch.cuh"
#include "cuda/async_copy.cuh"
#include "cuda/cache_hints.cuh"
#include "cuda/warp_roles.cuh"
#include "rowmean/row_sums.cuh"
#include "rowmean/tensor_product.cuh"
#include "rowmean/variant.hpp"
#include "rowmean/workspace.hpp"

namespace fastgemm::detail {
namespace relay {
namespace {

using Roles = WarpRoles<8, 8>;
constexpr int kConsumerThreads = Roles::kConsumerThreads;
constexpr int kRelayThreads = Roles::kThreads;
// Named barrier of the consumer warps (0 is left to __syncthreads, which this kernel does not use).
constexpr int kConsumerBarrier = 1;

// The product tile: kTileRows matrix rows x kSlabBatches batches, 8 warps as 4 (rows) x 2 (batches), each warp
// 32 x 32 outputs (2 x 4 fragments of 16 x 8).
constexpr int kTileRows = 128;
constexpr int kSlabBatches = 64;
constexpr int kWarpRows = 32;
constexpr int kWarpBatches = 32;
constexpr int kWarpRowTiles = kWarpRows / 16;
constexpr int kWarpGroups = kWarpBatches / 8;
// Each stage holds kChunk columns (k) of the tile's matrix rows and of its means rows.
constexpr int kChunk = 32;
constexpr int kStages = 3;
// The last slab's tiles are split into at most this many parts.
constexpr int64_t kMaxParts = 8;
// Read items: about this many bytes of input each, whole rows, never across a slab.
constexpr int64_t kItemBytes = 256 * 1024;

__device__ __forceinline__ void consumer_barrier() { Roles::sync_consumers(kConsumerBarrier); }

// Stage rows (one matrix row or one batch's means) are kChunk elements, in steps of 8 columns: 32 bytes (f32) or 64
// (f64) each. Tensor instruction s of a chunk takes the columns of step s, and lane (g, t) the pair 8s + 2t, 8s + 2t +
// 1 of rows g and g + 8 (matrix) or batch g (means): the mma's reduction index t stands for column 8s + 2t, t + 4 for
// the one after; any order of the sum over columns serves, as long as both operands share it. Step s of row r lies at
// step s ^ (r mod W), W = 128 bytes / step bytes, so that the rows of one shared-memory phase (4 rows of 32 bytes for
// f32, 2 of 64 for f64) fall on distinct banks.
template <typename T>
struct StageLayout {
  static constexpr int kSteps = kChunk / 8;
  static constexpr int kStepBytes = 8 * static_cast<int>(sizeof(T));
  static constexpr int kRowBytes = kSteps * kStepBytes;
  static constexpr int kSwizzleRows = 128 / kStepBytes;
  static constexpr int kUnitsPerStep = kStepBytes / 16;
  static constexpr int kUnitsPerRow = kRowBytes / 16;
  static constexpr int kElementsPerUnit = 16 / static_cast<int>(sizeof(T));
  static constexpr int kMatrixBytes = kTileRows * kRowBytes;
  static constexpr int kStageBytes = (kTileRows + kSlabBatches) * kRowBytes;
  static_assert(kSteps % kSwizzleRows == 0, "a row spans whole 128-byte windows");

  // Byte offset of 16-byte unit u of row r.
  __device__ static int unit_offset(int row, int unit) {
    return row * kRowBytes + ((unit / kUnitsPerStep) ^ (row % kSwizzleRows)) * kStepBytes + (unit % kUnitsPerStep) * 16;
  }
  // Byte offset of lane t's pair in step s of row r.
  __device__ static int pair_offset(int row, int step, int t) {
    return row * kRowBytes + (step ^ (row % kSwizzleRows)) * kStepBytes + t * 2 * static_cast<int>(sizeof(T));
  }
};

template <typename T>
struct RelayParams {
  const T *input;
  const T *matrix;
  T *output;
  T *means;            // N x L, dense: the means of batch k at means + k * L
  unsigned *counters;  // [0]: read tickets, [1]: product tickets, [2 + s]: rows of slab s read so far, then one
                       // count of finished parts per row block of the last slab, then one count of finished tiles
                       // per slab
  double *partials;    // the last slab's parts: [row block][part][kTileRows x kSlabBatches]
  int64_t L, M, N;
  int64_t slabs, row_blocks;
  int64_t parts;  // the last slab's tiles are split over the columns into this many parts
  int64_t item_rows, items_per_slab;
  double inverse_m;
  SpanReadPlan read;
  bool output_pair_ok;
};

template <typename T>
struct GlobalMeansSink {
  T *means;
  double inverse_m;
  __device__ __forceinline__ void operator()(int64_t row, double sum) const {
    means[row] = static_cast<T>(sum * inverse_m);
  }
};

// The means of rows [first, first + count), by one warp. Its own function, with its arguments in registers, so that the
// read keeps a register allocation of its own.
template <typename T>
__device__ __noinline__ void sum_item(SpanReadPlan read, const T *input, int64_t first, int64_t count, int64_t M,
                                      T *means, double inverse_m) {
  sum_spans(read, input, first, count, SpanLayout{M, M, 0}, static_cast<int>(threadIdx.x) % 32, 32,
            GlobalMeansSink<T>{means + first, inverse_m});
}

// The producer warps' loop: read items until none is left.
template <typename T>
__device__ __forceinline__ void produce(const RelayParams<T> &p) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t items = p.slabs * p.items_per_slab;
  for (;;) {
    unsigned ticket = 0;
    if (lane == 0) ticket = atomicAdd(&p.counters[0], 1u);
    const int64_t item = __shfl_sync(0xffffffffu, ticket, 0);
    if (item >= items) return;
    const int64_t slab = item / p.items_per_slab;
    const int64_t slab_end = (slab + 1) * kSlabBatches < p.N ? (slab + 1) * kSlabBatches * p.L : p.N * p.L;
    const int64_t first = slab * kSlabBatches * p.L + item % p.items_per_slab * p.item_rows;
    const int64_t count = slab_end - first < p.item_rows ? slab_end - first : p.item_rows;
    if (count <= 0) continue;
    sum_item(p.read, p.input, first, count, p.M, p.means, p.inverse_m);
    // Every lane's means are visible GPU-wide before the count that announces them.
    __threadfence();
    __syncwarp();
    if (lane == 0) atomicAdd(&p.counters[2 + slab], static_cast<unsigned>(count));
  }
}

// One consumer thread's share of the copies that fill a stage: kCopies 16-byte units, all at the same unit `part` of
// their rows, which are kRowStride apart (the first kMatrixCopies in the matrix tile, the rest in the means tile).
// Addresses are set up once per tile; rows past L or N, and columns past L, are zero-filled.
template <typename T>
struct StageCopier {
  using Layout = StageLayout<T>;
  static constexpr int kRowStride = kConsumerThreads / Layout::kUnitsPerRow;
  static constexpr int kMatrixCopies = kTileRows / kRowStride;
  static constexpr int kCopies = kMatrixCopies + kSlabBatches / kRowStride;
  static_assert(kConsumerThreads % Layout::kUnitsPerRow == 0 && kTileRows % kRowStride == 0 &&
                    kSlabBatches % kRowStride == 0 && kRowStride % Layout::kSwizzleRows == 0,
                "every copy of a thread has the same unit and swizzle");

  const T *matrix_row;  // the first matrix row's unit at column 0 (the matrix itself when that row is past L)
  const T *means_row;
  int64_t row_stride_elements;  // kRowStride rows
  int64_t column;               // the unit's first column at chunk 0
  int64_t L;
  unsigned valid_rows;  // bit i: copy i's row exists
  int shared_offset;    // of copy 0 in a stage

  __device__ StageCopier(const T *matrix, const T *means, int64_t L, int64_t N, int64_t row0, int64_t batch0,
                         int consumer)
      : row_stride_elements(kRowStride * L), L(L) {
    const int row = consumer / Layout::kUnitsPerRow, part = consumer % Layout::kUnitsPerRow;
    column = part * Layout::kElementsPerUnit;
    shared_offset = Layout::unit_offset(row, part);
    valid_rows = 0;
#pragma unroll
    for (int i = 0; i < kCopies; ++i) {
      const bool in_matrix = i < kMatrixCopies;
      const int64_t source_row = (in_matrix ? row0 : batch0 - kTileRows) + row + i * kRowStride;
      if (source_row < (in_matrix ? L : N)) valid_rows |= 1u << i;
    }
    matrix_row = (valid_rows & 1u) != 0 ? matrix + (row0 + row) * L + column : matrix;
    means_row = (valid_rows >> kMatrixCopies & 1u) != 0 ? means + (batch0 + row) * L + column : means;
  }

  __device__ __forceinline__ void copy(unsigned char *stage, int64_t chunk) const {
    const int64_t offset = chunk * kChunk;
    const bool column_ok = column + offset < L;
#pragma unroll
    for (int i = 0; i < kCopies; ++i) {
      const bool in_matrix = i < kMatrixCopies;
      const bool valid = column_ok && (valid_rows >> i & 1u) != 0;
      const int index = in_matrix ? i : i - kMatrixCopies;
      const T *source = (in_matrix ? matrix_row : means_row) + (valid ? index * row_stride_elements + offset : 0);
      copy_chunk(reinterpret_cast<float *>(stage + shared_offset + i * kRowStride * Layout::kRowBytes),
                 reinterpret_cast<const float *>(source), valid ? 16 : 0);
    }
  }
};

// One product tile: output rows [row0, row0 + kTileRows) x batches [batch0, batch0 + kSlabBatches).
// Sums over column chunks [chunk_begin, chunk_end) only; partial != nullptr: the sums go there, kTileRows x
// kSlabBatches doubles, instead of to the output.
template <typename T>
__device__ __forceinline__ void multiply_tile_staged(const RelayParams<T> &p, unsigned char *stages, int64_t row0,
                                                     int64_t batch0, int64_t chunk_begin, int64_t chunk_end,
                                                     double *partial, int consumer) {
  using Layout = StageLayout<T>;
  const int warp = consumer / 32, lane = consumer % 32;
  const int g = lane / 4, t = lane % 4;
  const int warp_row = (warp % (kTileRows / kWarpRows)) * kWarpRows;
  const int warp_batch = (warp / (kTileRows / kWarpRows)) * kWarpBatches;
  const int64_t chunks = chunk_end - chunk_begin;

  const StageCopier<T> copier(p.matrix, p.means, p.L, p.N, row0, batch0, consumer);
  double acc[kWarpRowTiles][kWarpGroups][4] = {};
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < chunks) copier.copy(stages + s * Layout::kStageBytes, chunk_begin + s);
    commit_copies();
  }
#pragma unroll 1
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    wait_copies<kStages - 2>();
    // The chunk is in for every consumer thread, and every warp is past the chunk before: its stage may be refilled.
    consumer_barrier();
    const int64_t ahead = chunk + kStages - 1;
    if (ahead < chunks) copier.copy(stages + (ahead % kStages) * Layout::kStageBytes, chunk_begin + ahead);
    commit_copies();

    const unsigned char *stage = stages + (chunk % kStages) * Layout::kStageBytes;
    const unsigned char *means = stage + Layout::kMatrixBytes;
#pragma unroll
    for (int step = 0; step < Layout::kSteps; ++step) {
      double b[kWarpGroups][2];
#pragma unroll
      for (int group = 0; group < kWarpGroups; ++group) {
        const int row = warp_batch + group * 8 + g;
        const T *pair = reinterpret_cast<const T *>(means + Layout::pair_offset(row, step, t));
        b[group][0] = static_cast<double>(pair[0]);
        b[group][1] = static_cast<double>(pair[1]);
      }
#pragma unroll
      for (int tile = 0; tile < kWarpRowTiles; ++tile) {
        const int low_row = warp_row + tile * 16 + g;
        const T *low = reinterpret_cast<const T *>(stage + Layout::pair_offset(low_row, step, t));
        const T *high = reinterpret_cast<const T *>(stage + Layout::pair_offset(low_row + 8, step, t));
        const double a[4] = {static_cast<double>(low[0]), static_cast<double>(high[0]), static_cast<double>(low[1]),
                             static_cast<double>(high[1])};
#pragma unroll
        for (int group = 0; group < kWarpGroups; ++group) mma_16x8x8(acc[tile][group], a, b[group]);
      }
    }
  }
  wait_copies<0>();
#pragma unroll
  for (int tile = 0; tile < kWarpRowTiles; ++tile) {
    if (partial == nullptr)
      store_tile<kWarpGroups>(acc[tile], p.output, p.N, p.L, row0 + warp_row + tile * 16, batch0 + warp_batch, p.N,
                              kWarpGroups, p.output_pair_ok, lane);
    else
      store_tile<kWarpGroups>(acc[tile], partial, kSlabBatches, kTileRows, warp_row + tile * 16, warp_batch,
                              kSlabBatches, kWarpGroups, true, lane);
  }
}

// The last slab's row block `block`, once all its parts are in: the parts summed in order, to the output.
template <typename T>
__device__ __forceinline__ void join_parts(const RelayParams<T> &p, int64_t block, int consumer) {
  constexpr int kPartElements = kTileRows * kSlabBatches;
  const double *parts = p.partials + block * p.parts * kPartElements;
  const int64_t row0 = block * kTileRows, batch0 = (p.slabs - 1) * kSlabBatches;
  for (int index = consumer; index < kPartElements; index += kConsumerThreads) {
    const int64_t row = row0 + index / kSlabBatches, batch = batch0 + index % kSlabBatches;
    if (row >= p.L || batch >= p.N) continue;
    double sum = 0.0;
    for (int64_t part = 0; part < p.parts; ++part) sum += __ldcg(parts + part * kPartElements + index);
    p.output[row * p.N + batch] = static_cast<T>(sum);
  }
}

// The consumer warps' loop: product tiles in ticket order until none is left.
template <typename T>
__device__ __forceinline__ void consume(const RelayParams<T> &p, unsigned char *stages, unsigned *ticket_slot) {
  const int consumer = Roles::consumer_thread();
  // Whole tiles of every slab but the last, then the last slab's row blocks in parts.
  const int64_t whole_tiles = (p.slabs - 1) * p.row_blocks;
  const int64_t tiles = whole_tiles + p.row_blocks * p.parts;
  const int64_t chunks = (p.L + kChunk - 1) / kChunk;
  unsigned *part_counts = p.counters + 2 + p.slabs;
  unsigned *slab_tiles = part_counts + p.row_blocks;
  unsigned *last_slot = ticket_slot + 1;
  for (;;) {
    if (consumer == 0) *ticket_slot = atomicAdd(&p.counters[1], 1u);
    consumer_barrier();
    const int64_t tile = *ticket_slot;
    if (tile >= tiles) return;
    const bool split = tile >= whole_tiles;
    const int64_t slab = split ? p.slabs - 1 : tile / p.row_blocks;
    const int64_t block = split ? (tile - whole_tiles) / p.parts : tile % p.row_blocks;
    const int64_t part = split ? (tile - whole_tiles) % p.parts : 0;
    const int64_t batch0 = slab * kSlabBatches;
    if (consumer == 0) {
      const int64_t batches = p.N - batch0 < kSlabBatches ? p.N - batch0 : kSlabBatches;
      const unsigned wanted = static_cast<unsigned>(batches * p.L);
      while (load_acquire(&p.counters[2 + slab]) < wanted) __nanosleep(256);
    }
    // The slab's means are in; every consumer thread is also past its read of the ticket slot.
    consumer_barrier();
    double *partial = split ? p.partials + (block * p.parts + part) * (kTileRows * kSlabBatches) : nullptr;
    const int64_t tile_parts = split ? p.parts : 1;
    multiply_tile_staged(p, stages, block * kTileRows, batch0, part * chunks / tile_parts,
                         (part + 1) * chunks / tile_parts, partial, consumer);
    if (split) {
      // The part is visible GPU-wide before it is counted; whoever counts the last part joins them.
      __threadfence();
      consumer_barrier();
      if (consumer == 0) *ticket_slot = atomicAdd(&part_counts[block], 1u) + 1 == p.parts ? 1u : 0u;
      consumer_barrier();
      if (*ticket_slot != 0) {
        __threadfence();
        join_parts(p, block, consumer);
        // Nobody reads the parts again: they leave L2 without being written back.
        consumer_barrier();
        discard_l2_lines(p.partials + block * p.parts * (kTileRows * kSlabBatches),
                         p.parts * kTileRows * kSlabBatches * static_cast<int64_t>(sizeof(double)), consumer,
                         kConsumerThreads);
      }
    }
    // Every warp is done with the stages (and the ticket slot) before the next tile's first copies land in them.
    consumer_barrier();
    // The block whose tile (or part) is the slab's last to finish drops the slab's means from L2: nobody reads them
    // again, and writing them back to memory would take bandwidth from the read.
    const unsigned slab_units = static_cast<unsigned>(split ? p.row_blocks * p.parts : p.row_blocks);
    if (consumer == 0) *last_slot = atomicAdd(&slab_tiles[slab], 1u) + 1 == slab_units ? 1u : 0u;
    consumer_barrier();
    if (*last_slot != 0) {
      const int64_t batches = p.N - batch0 < kSlabBatches ? p.N - batch0 : kSlabBatches;
      discard_l2_lines(p.means + batch0 * p.L, batches * p.L * static_cast<int64_t>(sizeof(T)), consumer,
                       kConsumerThreads);
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(kRelayThreads, 1) relay_kernel(const RelayParams<T> p) {
  extern __shared__ __align__(128) unsigned char shared_storage[];
  unsigned *ticket_slot = reinterpret_cast<unsigned *>(shared_storage + kStages * StageLayout<T>::kStageBytes);
  if (Roles::producer())
    produce(p);
  else
    consume(p, shared_storage, ticket_slot);
}

size_t shared_bytes(fg_dtype_t dtype) {
  const size_t stage = dtype == FG_F64 ? StageLayout<double>::kStageBytes : StageLayout<float>::kStageBytes;
  return kStages * stage + 16;
}

// Read items and product tiles: tickets and row counts are 32-bit.
struct RelayPlan {
  int64_t slabs, row_blocks, item_rows, items_per_slab, parts;
};

RelayPlan plan_relay(const RowmeanProblem &p, const DeviceInfo &device) {
  RelayPlan plan;
  plan.slabs = ceil_div(p.N, kSlabBatches);
  plan.row_blocks = ceil_div(p.L, kTileRows);
  const int64_t row_bytes = p.M * element_size(p.dtype);
  const int64_t slab_rows = kSlabBatches * p.L;
  plan.item_rows = kItemBytes / row_bytes > 1 ? kItemBytes / row_bytes : 1;
  if (plan.item_rows > slab_rows) plan.item_rows = slab_rows;
  plan.items_per_slab = ceil_div(slab_rows, plan.item_rows);
  // Once the read is done only the last slab's product is left: its tiles are split over the columns, so that its
  // parts keep about two per SM busy for a fraction of a tile's time, at least two chunks each.
  const int64_t chunks = ceil_div(p.L, kChunk);
  plan.parts = ceil_div(2 * static_cast<int64_t>(device.sm_count), plan.row_blocks);
  if (plan.parts > kMaxParts) plan.parts = kMaxParts;
  if (plan.parts > chunks / 2) plan.parts = chunks / 2;
  if (plan.parts < 1) plan.parts = 1;
  return plan;
}

// The workspace's arrays: the means, the last slab's parts, the counters.
struct RelayWorkspace {
  size_t means_at, partials_at, counters_at, bytes;
  int64_t counters;
};

RelayWorkspace carve_workspace(const RowmeanProblem &p, const RelayPlan &plan) {
  RelayWorkspace layout;
  layout.counters = 2 + 2 * plan.slabs + plan.row_blocks;
  WorkspaceCarver carver;
  layout.means_at = carver.take(p.N * p.L * element_size(p.dtype));
  layout.partials_at = carver.take(plan.row_blocks * plan.parts * kTileRows * kSlabBatches * 8);
  layout.counters_at = carver.take(layout.counters * static_cast<int64_t>(sizeof(unsigned)));
  layout.bytes = carver.bytes;
  return layout;
}

Status refuse(const std::string &condition) { return Status::failure(StatusCode::not_supported, condition); }

Status can_implement_relay(const RowmeanProblem &p, const DeviceInfo &device) {
  if (device.arch() < 80) return refuse("needs compute capability 8.0 or newer (cp.async, FP64 tensor cores)");
  if (reinterpret_cast<uintptr_t>(p.matrix) % 16 != 0) return refuse("the matrix must be 16-byte aligned");
  const int64_t unit_elements = 16 / element_size(p.dtype);
  if (p.L % unit_elements != 0)
    return refuse("L = " + std::to_string(p.L) + " must be a multiple of " + std::to_string(unit_elements) +
                  " (matrix rows of whole 16-byte units)");
  if (shared_bytes(p.dtype) > device.smem_per_block_optin)
    return refuse("needs " + std::to_string(shared_bytes(p.dtype)) +
                  " bytes of shared memory per block, the device has " + std::to_string(device.smem_per_block_optin));
  const RelayPlan plan = plan_relay(p, device);
  if (plan.slabs * plan.items_per_slab >= UINT32_MAX || (plan.slabs + plan.parts) * plan.row_blocks >= UINT32_MAX ||
      kSlabBatches * p.L >= UINT32_MAX)
    return refuse("the problem has more read items, product tiles or rows per slab than 32-bit tickets count");
  return Status::success();
}

size_t relay_workspace_bytes(const RowmeanProblem &p, const DeviceInfo &device) {
  return carve_workspace(p, plan_relay(p, device)).bytes;
}

template <typename T>
Status run_typed(const RowmeanProblem &p, const RunArgs &args) {
  const DeviceInfo &device = *args.device;
  const RelayPlan plan = plan_relay(p, device);
  RelayParams<T> params;
  set_one_pass_params<T>(params, p);
  params.slabs = plan.slabs;
  params.row_blocks = plan.row_blocks;
  params.item_rows = plan.item_rows;
  params.items_per_slab = plan.items_per_slab;
  params.parts = plan.parts;
  params.output_pair_ok = reinterpret_cast<uintptr_t>(p.output) % (2 * sizeof(T)) == 0 && p.N % 2 == 0;

  const RelayWorkspace layout = carve_workspace(p, plan);
  char *base = static_cast<char *>(args.workspace);
  params.means = reinterpret_cast<T *>(base + layout.means_at);
  params.partials = reinterpret_cast<double *>(base + layout.partials_at);
  params.counters = reinterpret_cast<unsigned *>(base + layout.counters_at);
  const cudaStream_t stream = args.stream;
  FG_CUDA_CHECK(cudaMemsetAsync(params.counters, 0, static_cast<size_t>(layout.counters) * sizeof(unsigned), stream));

  auto *kernel = relay_kernel<T>;
  const size_t bytes = shared_bytes(p.dtype);
  FG_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  return launch(kernel, dim3(static_cast<unsigned>(device.sm_count)), dim3(kRelayThreads), bytes, stream, params);
}

Status run_relay(const RowmeanProblem &p, const RunArgs &args) {
  return dispatch_dtype(p.dtype, [&](auto zero) { return run_typed<decltype(zero)>(p, args); });
}

}  // namespace
}  // namespace relay

// FG_ROWMEAN_PIPELINED is the same value, its former name.
extern const RowmeanVariant relay_rowmean = {FG_ROWMEAN_RELAY, "relay", relay::can_implement_relay,
                                             relay::relay_workspace_bytes, relay::run_relay};

}  // namespace fastgemm::detail
