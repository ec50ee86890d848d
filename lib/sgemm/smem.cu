// The second rung: each block computes a 128 x 128 tile of C, staging op(A) and op(B) through shared
// memory 8 deep, and each thread keeps 8 x 8 outputs in registers, so that every value read from shared
// memory feeds 8 multiply-adds. Global memory is read and written 32 bits at a time. op(A)'s tile is
// stored a line of 8 k per row, as a row-major A lies: a thread's 8 values of A at one depth lie on 8
// lines, and the two rows a warp reads at once fall on one bank.
#include "sgemm/tile_common.cuh"

namespace fastgemm::detail {
namespace {

using namespace tiled;

template <bool kATransposed, bool kBTransposed>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) smem_sgemm_kernel(const GemmProblem p) {
  constexpr Order kAShared = Order::k_contiguous;
  __shared__ __align__(16) float a_shared[shared_tile_words(kAShared)];
  __shared__ __align__(16) float b_shared[shared_tile_words(kBShared)];
  for (OutputTile tile = OutputTile::first(); tile.batch < p.batch; tile.advance(p)) {
    auto a = a_loader<kATransposed, kAShared, Access::scalar>(p, tile);
    auto b = b_loader<kBTransposed, Access::scalar>(p, tile);
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
    store_c_tile<false>(p, tile, accumulators);
  }
}

Status run_smem(const GemmProblem &problem, Context &context) {
  return launch_tile_kernel(problem, context, [](auto a_transposed, auto b_transposed) {
    return smem_sgemm_kernel<decltype(a_transposed)::value, decltype(b_transposed)::value>;
  });
}

}  // namespace

const SgemmVariant smem_sgemm = {FG_SGEMM_SMEM, "smem", always_implementable, run_smem};

}  // namespace fastgemm::detail
