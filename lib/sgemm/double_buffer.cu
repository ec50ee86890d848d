// SPDX-License-Identifier: Apache-2.0
// The fifth rung: bank_free.cu with its loads overlapped with the math, at both levels of the memory
// hierarchy. Two shared-memory stages: while the block multiplies the tiles in one, each thread's loads of
// the next k-tile are already in flight into registers, and are stored into the other stage after the
// multiply, so global memory latency hides behind 512 multiply-adds a thread. Two register fragments:
// while a thread multiplies the values of one depth, it reads those of the next depth from shared memory;
// the values of the next k-tile's first depth are read right after the one barrier per k-tile, during the
// last depth's multiply-adds, so no depth waits on shared memory.
#include "sgemm/tile_common.cuh"

namespace fastgemm::detail {
namespace {

using namespace tiled;

template <bool kATransposed, bool kBTransposed>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) double_buffer_sgemm_kernel(const GemmProblem p) {
  constexpr Order kAShared = Order::mn_contiguous;
  __shared__ __align__(16) float a_shared[2][shared_tile_words(kAShared)];
  __shared__ __align__(16) float b_shared[2][shared_tile_words(kBShared)];
  const int64_t k_tiles = (p.k + kTileK - 1) / kTileK;
  const int last_extent = static_cast<int>(p.k - (k_tiles - 1) * kTileK);
  int stage = 1;  // the stage being read
  for (OutputTile tile = OutputTile::first(); tile.batch < p.batch; tile.advance(p)) {
    auto a = a_loader<kATransposed, kAShared, Access::vector>(p, tile);
    auto b = b_loader<kBTransposed, Access::vector>(p, tile);
    // Chosen once per output tile: every full k-tile of an interior tile is read without guards.
    const bool interior = a.inside_at_full_k() && b.inside_at_full_k();
    // Past the previous output tile's last barrier, only the stage it left in `stage` is still read (by
    // the reads after that barrier, whose values go unused), so the first k-tile goes into the other.
    stage ^= 1;
    copy_k_tiles(a, b, k_tiles > 1 ? kTileK : last_extent, a_shared[stage], b_shared[stage]);
    __syncthreads();
    const int row0 = thread_row0(), col0 = thread_col0();
    float a_fragment[2][kThreadTile], b_fragment[2][kThreadTile];
    load_fragment<kAShared>(a_shared[stage], row0, 0, a_fragment[0]);
    load_fragment<kBShared>(b_shared[stage], col0, 0, b_fragment[0]);
    float accumulators[kThreadTile][kThreadTile] = {};
    for (int64_t tiles_left = k_tiles; tiles_left > 0; --tiles_left) {
      // The next k-tile, in flight during this multiply. Past the last one, its extent is 0: nothing is
      // read, and the zeros stored into the other stage are never multiplied.
      a.next_k_tile();
      b.next_k_tile();
      float4 a_next, b_next;
      if (interior && tiles_left > 2) {
        a_next = a.load_inside();
        b_next = b.load_inside();
      } else {
        const int next_extent = tiles_left > 2 ? kTileK : (tiles_left == 2 ? last_extent : 0);
        a_next = a.load(next_extent);
        b_next = b.load(next_extent);
      }
#pragma unroll
      for (int k = 0; k < kTileK; ++k) {
        const int current = k % 2, following = (k + 1) % 2;
        if (k + 1 < kTileK) {
          load_fragment<kAShared>(a_shared[stage], row0, k + 1, a_fragment[following]);
          load_fragment<kBShared>(b_shared[stage], col0, k + 1, b_fragment[following]);
        } else {
          // The other stage was last read before the previous barrier.
          a.store(a_shared[stage ^ 1], a_next);
          b.store(b_shared[stage ^ 1], b_next);
          // Publishes those stores, and keeps the next k-tile's stores out of this stage until every
          // thread has read its last depth.
          __syncthreads();
          stage ^= 1;
          load_fragment<kAShared>(a_shared[stage], row0, 0, a_fragment[following]);
          load_fragment<kBShared>(b_shared[stage], col0, 0, b_fragment[following]);
        }
        accumulate_outer_product(a_fragment[current], b_fragment[current], accumulators);
      }
    }
    store_c_tile<true>(p, tile, accumulators);
  }
}

Status run_double_buffer(const GemmProblem &problem, const RunArgs &args) {
  return launch_tile_kernel(problem, args.stream, [](auto a_transposed, auto b_transposed) {
    return double_buffer_sgemm_kernel<decltype(a_transposed)::value, decltype(b_transposed)::value>;
  });
}

}  // namespace

extern const SgemmVariant double_buffer_sgemm = {FG_SGEMM_DOUBLE_BUFFER, "double_buffer", vector_access_supported,
                                                 no_workspace<GemmProblem>, run_double_buffer};

}  // namespace fastgemm::detail
