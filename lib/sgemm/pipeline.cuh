// SPDX-License-Identifier: Apache-2.0
// What the kernels past the ladder share: a block tile of C split into warp tiles, operand tiles copied
// from global into shared memory by cp.async, several k-tiles deep, with no registers or instructions
// spent on staging them, and an optional split of k over blocks.
//
// A Tiling names the block tile (kBlockM x kBlockN x kDepth), how many warps share it, how many
// k-tiles are in flight (kStages) and how many blocks share an SM. A warp's 32 lanes form 4 rows x 8
// columns; each lane owns kThreadM x kThreadN outputs, as bands of 4 rows (columns) a band gap apart, so
// that the lanes reading one band read consecutive 16-byte words.
//
// Operand tiles are handled in (mn, k) coordinates, as in the ladder: for A, mn is the row of op(A); for
// B, the column of op(B). Both are stored [k][mn], so that a lane reads its values of one depth as
// 128-bit words whatever the operands' layouts: an operand that runs along k is transposed on its way
// in, by single-float asynchronous copies to transposed places (see TileCopier). Single-float copies also
// serve any alignment, so these kernels take every problem. The split of k (its slices' partial sums and
// their reduction) is in split_k.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "core/check.hpp"
#include "core/launch.cuh"
#include "core/problem.hpp"
#include "cuda/async_copy.cuh"
#include "sgemm/pipeline_tilings.hpp"
#include "sgemm/tile_common.cuh"

namespace fastgemm::detail::pipeline {

using tiled::Order;

__device__ __forceinline__ int clamp_bytes(int64_t elements) {
  return elements <= 0 ? 0 : (elements >= 4 ? 16 : static_cast<int>(elements) * 4);
}

// One thread's share of one operand's k-tiles (kMn x kDepth elements each), copied into shared tiles
// stored [k][mn] with kMn + kPad words per k-line, zeros for whatever lies outside the matrix or past the
// k range.
// - Source along mn, kVector: 16-byte chunks; a warp copies 512 consecutive bytes of one k-line.
// - Source along mn, scalar: single floats; a warp copies 128 consecutive bytes. Any alignment.
// - Source along k: single floats, each stored at its transposed place. A warp copies 4 consecutive k of
//   8 consecutive mn (8 segments of 16 bytes; the rest of each 32-byte sector is read by the instruction
//   for the next 4 k, from L1); with the 8-word padding, its 32 stores (k * (kMn + 8) + mn) fall on 32
//   distinct banks. Any alignment.
template <typename T, int kMn, Order kSource, bool kVector>
class TileCopier {
  static constexpr int kWarps = T::kThreads / 32;
  static_assert(!kVector || kSource == Order::mn_contiguous, "16-byte chunks run along mn");

  // A thread's copies, per k-tile, as a step over the tile: unit u of the thread's i-th copy lies at
  // (thread's first mn + mn_step(i), thread's first k + k_step(i)), where a unit is a float or a chunk of
  // 4 along mn, a "line" is kMn / (1 or 4) units along mn and a thread's units tile the k-tile in order.
  // Along k, units are single floats in warp-wide groups of 8 mn x 4 k, the groups numbered along mn
  // first.
  static constexpr int kUnitWidth = kVector ? 4 : 1;
  static constexpr int kLineUnits = kSource == Order::mn_contiguous ? kMn / kUnitWidth : kMn / 8;
  static constexpr int kWorkers = kSource == Order::mn_contiguous ? T::kThreads : kWarps;
  static constexpr int kSteps =
      (kSource == Order::mn_contiguous ? kMn / kUnitWidth * T::kDepth : kMn / 8 * (T::kDepth / 4)) / kWorkers;
  static_assert(kLineUnits % kWorkers == 0 || kWorkers % kLineUnits == 0, "workers tile the lines evenly");
  static_assert(kSteps * kWorkers ==
                    (kSource == Order::mn_contiguous ? kMn / kUnitWidth * T::kDepth : kMn / 8 * (T::kDepth / 4)),
                "every thread copies the same number of units");
  static constexpr int kMnUnit = kSource == Order::mn_contiguous ? kUnitWidth : 8;  // mn per unit (group)
  static constexpr int kKUnit = kSource == Order::mn_contiguous ? 1 : 4;            // k per line of units

  __device__ static constexpr int mn_step(int i) {
    return kLineUnits >= kWorkers ? i % (kLineUnits / kWorkers) * kWorkers * kMnUnit : 0;
  }
  __device__ static constexpr int k_step(int i) {
    return kLineUnits >= kWorkers ? i / (kLineUnits / kWorkers) * kKUnit : i * (kWorkers / kLineUnits) * kKUnit;
  }

 public:
  static constexpr int kPitch = kMn + T::kPad;

  __device__ TileCopier(const GemmOperand &x, int64_t batch, int64_t mn0, int64_t mn_total, int64_t k0, int64_t k_end)
      : ld_(x.ld) {
    const int t = static_cast<int>(threadIdx.x);
    const int worker = kSource == Order::mn_contiguous ? t : t / 32;
    int mn = worker % kLineUnits * kMnUnit, k = worker / kLineUnits * kKUnit;
    if constexpr (kSource == Order::k_contiguous) {
      mn += t % 32 / 4;
      k += t % 4;
    }
    const int64_t mn_left = mn_total - mn0 - mn, k_left = k_end - k0 - k;
    constexpr int64_t kFar = 1 << 30;  // any mn at least this far is "beyond every step"
    mn_left_ = static_cast<int>(mn_left < kFar ? mn_left : kFar);
    k_left_ = k_left;
    shared_offset_ = k * kPitch + mn;
    source_ = x.data + batch * x.stride +
              (kSource == Order::k_contiguous ? (mn0 + mn) * x.ld + k0 + k : (k0 + k) * x.ld + mn0 + mn);
  }

  // Starts the copies of the current k-tile into `shared` and moves on to the next k-tile.
  __device__ void copy(float *shared) {
#pragma unroll
    for (int i = 0; i < kSteps; ++i) {
      const int mn = mn_step(i), k = k_step(i);
      const int64_t offset = kSource == Order::k_contiguous ? mn * ld_ + k : k * ld_ + mn;
      float *destination = shared + shared_offset_ + k * kPitch + mn;
      if constexpr (kVector) {
        const int bytes = k < k_left_ ? clamp_bytes(mn_left_ - mn) : 0;
        // With a source size of 0 nothing is read: the zero-filled chunk needs no valid address.
        copy_chunk(destination, bytes > 0 ? source_ + offset : source_, bytes);
      } else {
        const int bytes = k < k_left_ && mn < mn_left_ ? 4 : 0;
        copy_element(destination, bytes > 0 ? source_ + offset : source_, bytes);
      }
    }
    source_ += kSource == Order::k_contiguous ? T::kDepth : T::kDepth * ld_;
    k_left_ -= T::kDepth;
  }

 private:
  const float *source_;  // the thread's first element of the current k-tile
  int64_t ld_;
  int mn_left_;     // mn of the matrix from the thread's first on (at most 2^30)
  int64_t k_left_;  // k of the matrix (or slice) from the thread's first of the current k-tile on: past 2^30 too
  int shared_offset_;
};

// The lane's kRows values of one depth of a shared tile: bands of 4 consecutive mn, kGap apart, each one
// 128-bit read.
template <int kPitch, int kRows, int kGap>
__device__ __forceinline__ void load_fragment(const float *shared, int first, int k, float (&values)[kRows]) {
#pragma unroll
  for (int band = 0; band < kRows / 4; ++band) {
    const float4 v = *reinterpret_cast<const float4 *>(&shared[k * kPitch + first + band * kGap]);
    values[band * 4 + 0] = v.x;
    values[band * 4 + 1] = v.y;
    values[band * 4 + 2] = v.z;
    values[band * 4 + 3] = v.w;
  }
}

// Which output tile (and which slice of k) a block works on. Tiles are numbered batch by batch; within a
// batch, kGroupRows rows of tiles at a time are walked column by column, so that the blocks running at
// once share the A rows and B columns they read in L2.
struct TileIndex {
  int64_t batch, row0, col0, k_begin, k_end;
};

template <typename T>
__device__ __forceinline__ TileIndex tile_index(const GemmProblem &p, int64_t linear, int64_t splits,
                                                int64_t k_per_split) {
  constexpr int64_t kGroupRows = 8;
  const int64_t tiles_m = (p.m + T::kBlockM - 1) / T::kBlockM, tiles_n = (p.n + T::kBlockN - 1) / T::kBlockN;
  const int64_t split = linear % splits;
  linear /= splits;
  const int64_t per_batch = tiles_m * tiles_n;
  TileIndex t;
  t.batch = linear / per_batch;
  const int64_t in_batch = linear % per_batch;
  const int64_t group = in_batch / (kGroupRows * tiles_n);
  const int64_t first_row = group * kGroupRows;
  const int64_t rows = tiles_m - first_row < kGroupRows ? tiles_m - first_row : kGroupRows;
  const int64_t in_group = in_batch % (kGroupRows * tiles_n);
  t.row0 = (first_row + in_group % rows) * T::kBlockM;
  t.col0 = in_group / rows * T::kBlockN;
  t.k_begin = split * k_per_split;
  t.k_end = t.k_begin + k_per_split < p.k ? t.k_begin + k_per_split : p.k;
  return t;
}

// Where a block's results go: C with alpha and beta applied, or, for a slice of k, the partial sums as
// they are, into a dense workspace of splits x batch products of m x padded_n.
struct Partials {
  float *data = nullptr;  // nullptr: no split, the epilogue writes C
  int64_t padded_n = 0;
};

template <typename T, bool kATransposed, bool kBTransposed, bool kAVector, bool kBVector>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    pipelined_sgemm_kernel(const GemmProblem p, int64_t splits, int64_t k_per_split, Partials partials, bool vector_c) {
  // op(A) transposed runs along m; op(B) not transposed runs along n (see tiled::a_order, b_order).
  constexpr Order kASource = kATransposed ? Order::mn_contiguous : Order::k_contiguous;
  constexpr Order kBSource = kBTransposed ? Order::k_contiguous : Order::mn_contiguous;
  using ACopier = TileCopier<T, T::kBlockM, kASource, kAVector>;
  using BCopier = TileCopier<T, T::kBlockN, kBSource, kBVector>;
  constexpr int kAWords = T::kDepth * ACopier::kPitch, kStageWords = kAWords + T::kDepth * BCopier::kPitch;
  static_assert(sizeof(float) * kStageWords * T::kStages == T::kSharedBytes, "T's shared memory is the stages'");
  constexpr int kM = T::kThreadM, kN = T::kThreadN;
  extern __shared__ __align__(16) float shared[];

  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const int row_first = warp / T::kWarpsN * T::kWarpM + lane / T::kLanesN * 4;
  const int col_first = warp % T::kWarpsN * T::kWarpN + lane % T::kLanesN * 4;
  const int64_t tiles =
      splits * p.batch * ((p.m + T::kBlockM - 1) / T::kBlockM) * ((p.n + T::kBlockN - 1) / T::kBlockN);

  for (int64_t linear = blockIdx.x; linear < tiles; linear += gridDim.x) {
    const TileIndex tile = tile_index<T>(p, linear, splits, k_per_split);
    ACopier a(p.a, tile.batch, tile.row0, p.m, tile.k_begin, tile.k_end);
    BCopier b(p.b, tile.batch, tile.col0, p.n, tile.k_begin, tile.k_end);
    const int k_tiles = static_cast<int>((tile.k_end - tile.k_begin + T::kDepth - 1) / T::kDepth);

    // The first kStages - 1 k-tiles in flight; a group is committed for every stage, empty or not, so
    // that the count of groups pending always says which k-tile has landed.
#pragma unroll
    for (int s = 0; s < T::kStages - 1; ++s) {
      if (s < k_tiles) {
        a.copy(shared + s * kStageWords);
        b.copy(shared + s * kStageWords + kAWords);
      }
      commit_copies();
    }

    float accumulators[kM][kN] = {};
    for (int t = 0; t < k_tiles; ++t) {
      wait_copies<T::kStages - 2>();  // k-tile t has landed, for this thread's copies
      __syncthreads();                // and for every thread's; and stage (t - 1) % kStages is free
      const int refill = t + T::kStages - 1;
      if (refill < k_tiles) {
        float *stage = shared + refill % T::kStages * kStageWords;
        a.copy(stage);
        b.copy(stage + kAWords);
      }
      commit_copies();
      const float *a_tile = shared + t % T::kStages * kStageWords;
      const float *b_tile = a_tile + kAWords;
#pragma unroll
      for (int k = 0; k < T::kDepth; ++k) {
        float a_values[kM], b_values[kN];
        load_fragment<ACopier::kPitch, kM, T::kBandGapM>(a_tile, row_first, k, a_values);
        load_fragment<BCopier::kPitch, kN, T::kBandGapN>(b_tile, col_first, k, b_values);
#pragma unroll
        for (int i = 0; i < kM; ++i)
#pragma unroll
          for (int j = 0; j < kN; ++j) accumulators[i][j] = fmaf(a_values[i], b_values[j], accumulators[i][j]);
      }
    }
    wait_copies<0>();
    __syncthreads();  // the next tile's first copies overwrite stages this one's last multiplies read

    // Epilogue: 4 columns at a time, as one 128-bit access where all 4 lie inside the matrix.
    const int64_t ld = partials.data ? partials.padded_n : p.ldc;
    float *out = partials.data ? partials.data + ((tile.k_begin / k_per_split) * p.batch + tile.batch) * p.m * ld
                               : p.c + tile.batch * p.stride_c;
#pragma unroll
    for (int i = 0; i < kM; ++i) {
      const int64_t row = tile.row0 + row_first + i / 4 * T::kBandGapM + i % 4;
      if (row >= p.m) continue;
#pragma unroll
      for (int band = 0; band < kN / 4; ++band) {
        const int64_t col = tile.col0 + col_first + band * T::kBandGapN;
        float *target = out + row * ld + col;
        const float *sums = &accumulators[i][band * 4];
        if ((partials.data || vector_c) && col + 4 <= p.n) {
          *reinterpret_cast<float4 *>(target) =
              partials.data ? make_float4(sums[0], sums[1], sums[2], sums[3]) : tiled::epilogue_vector(p, sums, target);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j)
            if (col + j < p.n) target[j] = partials.data ? sums[j] : tiled::epilogue_value(p, sums[j], target + j);
        }
      }
    }
  }
}

// Whether kernel T can run the problem on the device: cp.async (compute capability 8.0) and T's shared
// memory. Any alignment and leading dimension work.
template <typename T>
Status pipelined_supported(const GemmProblem &, const DeviceInfo &device) {
  if (device.arch() < 80)
    return Status::failure(StatusCode::not_supported, "needs compute capability 8.0 or newer (cp.async)");
  if (device.smem_per_block_optin < T::kSharedBytes)
    return Status::failure(StatusCode::not_supported,
                           "needs " + std::to_string(T::kSharedBytes) + " bytes of shared memory per block");
  return Status::success();
}

// Whether an operand's 16-byte chunks are aligned: its base, its lines and its batches.
inline bool chunks_aligned(const GemmOperand &x, int64_t batch) {
  return tiled::check_vector_operand(x, batch, "", "", "").ok();
}

using PipelinedKernel = void (*)(GemmProblem, int64_t, int64_t, Partials, bool);

// The kernel for the transposes, with 16-byte copies for each operand that runs along mn and is aligned.
template <typename T, bool kATransposed, bool kBTransposed>
PipelinedKernel pipelined_kernel_for(bool a_vector, bool b_vector) {
  a_vector = a_vector && kATransposed;
  b_vector = b_vector && !kBTransposed;
  if constexpr (kATransposed && !kBTransposed) {
    if (a_vector)
      return b_vector ? pipelined_sgemm_kernel<T, true, false, true, true>
                      : pipelined_sgemm_kernel<T, true, false, true, false>;
    return b_vector ? pipelined_sgemm_kernel<T, true, false, false, true>
                    : pipelined_sgemm_kernel<T, true, false, false, false>;
  } else if constexpr (kATransposed) {
    return a_vector ? pipelined_sgemm_kernel<T, true, true, true, false>
                    : pipelined_sgemm_kernel<T, true, true, false, false>;
  } else if constexpr (!kBTransposed) {
    return b_vector ? pipelined_sgemm_kernel<T, false, false, false, true>
                    : pipelined_sgemm_kernel<T, false, false, false, false>;
  } else {
    return pipelined_sgemm_kernel<T, false, true, false, false>;
  }
}

// Launches kernel T over every output tile (and k slice), one block per tile while the grid allows.
template <typename T>
Status launch_pipelined(const GemmProblem &p, cudaStream_t stream, int64_t splits, int64_t k_per_split,
                        Partials partials) {
  const bool a_vector = chunks_aligned(p.a, p.batch), b_vector = chunks_aligned(p.b, p.batch);
  PipelinedKernel kernel;
  if (p.a.transposed)
    kernel = p.b.transposed ? pipelined_kernel_for<T, true, true>(a_vector, b_vector)
                            : pipelined_kernel_for<T, true, false>(a_vector, b_vector);
  else
    kernel = p.b.transposed ? pipelined_kernel_for<T, false, true>(a_vector, b_vector)
                            : pipelined_kernel_for<T, false, false>(a_vector, b_vector);
  const bool vector_c = chunks_aligned(GemmOperand{p.c, p.ldc, p.stride_c, false}, p.batch);
  // Every launch asks for the same limit, so concurrent launches from several threads agree.
  FG_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(T::kSharedBytes)));
  const int64_t tiles = splits * p.batch * ceil_div(p.m, T::kBlockM) * ceil_div(p.n, T::kBlockN);
  const dim3 grid(capped_grid(tiles, INT32_MAX));
  return launch(kernel, grid, dim3(T::kThreads), T::kSharedBytes, stream, p, splits, k_per_split, partials, vector_c);
}

// The whole product with kernel T, k in one piece (split_k.cuh cuts it into slices).
template <typename T>
Status run_pipelined(const GemmProblem &p, cudaStream_t stream) {
  return launch_pipelined<T>(p, stream, 1, p.k, Partials{});
}

}  // namespace fastgemm::detail::pipeline
