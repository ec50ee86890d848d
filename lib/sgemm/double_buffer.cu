// The fifth rung: bank_free.cu with two shared-memory stages. While the block multiplies the tiles in one
// stage, each thread's loads of the next k-tile are already in flight into registers; they are stored
// into the other stage after the multiply, so one barrier per k-tile suffices and global memory latency
// hides behind 512 multiply-adds a thread.
#include "sgemm/tile_common.cuh"

namespace fastgemm::detail {
namespace {

using namespace tiled;

template <bool kATransposed, bool kBTransposed>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) double_buffer_sgemm_kernel(const GemmProblem p) {
  constexpr Order kAShared = Order::mn_contiguous;
  __shared__ __align__(16) float a_shared[2][shared_tile_words(kAShared)];
  __shared__ __align__(16) float b_shared[2][shared_tile_words(kBShared)];
  for (OutputTile tile = OutputTile::first(); tile.batch < p.batch; tile.advance(p)) {
    auto a = a_loader<kATransposed, kAShared, Access::vector>(p, tile);
    auto b = b_loader<kBTransposed, Access::vector>(p, tile);
    // Every thread is past the previous output tile's last barrier, after which no stage is read.
    a.copy(tile_extent(p.k, 0, kTileK), a_shared[0]);
    b.copy(tile_extent(p.k, 0, kTileK), b_shared[0]);
    __syncthreads();
    float accumulators[kThreadTile][kThreadTile] = {};
    int stage = 0;
    for (int64_t k0 = 0; k0 < p.k; k0 += kTileK) {
      const bool has_next = k0 + kTileK < p.k;
      float4 a_next, b_next;  // the next k-tile, in flight during this multiply
      if (has_next) {
        a.next_k_tile();
        b.next_k_tile();
        const int next_extent = tile_extent(p.k, k0 + kTileK, kTileK);
        a_next = a.load(next_extent);
        b_next = b.load(next_extent);
      }
      multiply_tile<kAShared>(a_shared[stage], b_shared[stage], accumulators);
      // The other stage was last read by the previous k-tile's multiply, which the barrier at the end of
      // that iteration has seen finished.
      if (has_next) {
        a.store(a_shared[stage ^ 1], a_next);
        b.store(b_shared[stage ^ 1], b_next);
      }
      // Publishes the stores for the next multiply, and keeps the next iteration's stores out of this stage
      // until every thread has finished reading it.
      __syncthreads();
      stage ^= 1;
    }
    store_c_tile<true>(p, tile, accumulators);
  }
}

Status run_double_buffer(const GemmProblem &problem, Context &context) {
  return launch_tile_kernel(problem, context, [](auto a_transposed, auto b_transposed) {
    return double_buffer_sgemm_kernel<decltype(a_transposed)::value, decltype(b_transposed)::value>;
  });
}

}  // namespace

const SgemmVariant double_buffer_sgemm = {FG_SGEMM_DOUBLE_BUFFER, "double_buffer", vector_access_supported,
                                          run_double_buffer};

}  // namespace fastgemm::detail
