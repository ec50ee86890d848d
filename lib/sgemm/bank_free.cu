// The fourth rung: smem_vec4.cu with op(A)'s tile stored as lines along m, transposed on its way into
// shared memory when A's rows run along k. A thread's 8 values of A at one depth are then two 128-bit
// reads from one line instead of reads from 8 lines, and the words a warp reads at once lie on distinct
// banks, where stored along k the two rows it reads share one.
#include "sgemm/tile_common.cuh"

namespace fastgemm::detail {
namespace {

using namespace tiled;

template <bool kATransposed, bool kBTransposed>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) bank_free_sgemm_kernel(const GemmProblem p) {
  constexpr Order kAShared = Order::mn_contiguous;
  __shared__ __align__(16) float a_shared[shared_tile_words(kAShared)];
  __shared__ __align__(16) float b_shared[shared_tile_words(kBShared)];
  for (OutputTile tile = OutputTile::first(); tile.batch < p.batch; tile.advance(p)) {
    auto a = a_loader<kATransposed, kAShared, Access::vector>(p, tile);
    auto b = b_loader<kBTransposed, Access::vector>(p, tile);
    float accumulators[kThreadTile][kThreadTile] = {};
    for (int64_t k0 = 0; k0 < p.k; k0 += kTileK) {
      const int k_extent = tile_extent(p.k, k0, kTileK);
      copy_k_tiles(a, b, k_extent, a_shared, b_shared);
      __syncthreads();
      multiply_tile<kAShared>(a_shared, b_shared, accumulators);
      __syncthreads();  // the next copy overwrites what this multiply reads
      a.next_k_tile();
      b.next_k_tile();
    }
    store_c_tile<true>(p, tile, accumulators);
  }
}

Status run_bank_free(const GemmProblem &problem, Context &context) {
  return launch_tile_kernel(problem, context, [](auto a_transposed, auto b_transposed) {
    return bank_free_sgemm_kernel<decltype(a_transposed)::value, decltype(b_transposed)::value>;
  });
}

}  // namespace

const SgemmVariant bank_free_sgemm = {FG_SGEMM_BANK_FREE, "bank_free", vector_access_supported, run_bank_free};

}  // namespace fastgemm::detail
