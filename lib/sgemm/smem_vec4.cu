// The third rung: the shared-memory tiles of smem.cu, now read from global memory and written to C 128
// bits at a time, a quarter of the load and store instructions. Each thread moves one chunk of 4
// consecutive elements per operand tile; chunks that straddle the matrix's edge are read element by
// element. 128-bit accesses need 16-byte aligned vectors, which can_implement checks.
#include "sgemm/tile_common.cuh"

namespace fastgemm::detail {
namespace {

using namespace tiled;

template <bool kATransposed, bool kBTransposed>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) smem_vec4_sgemm_kernel(const GemmProblem p) {
  constexpr Order kAShared = Order::k_contiguous;
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

Status run_smem_vec4(const GemmProblem &problem, Context &context) {
  return launch_tile_kernel(problem, context, [](auto a_transposed, auto b_transposed) {
    return smem_vec4_sgemm_kernel<decltype(a_transposed)::value, decltype(b_transposed)::value>;
  });
}

}  // namespace

const SgemmVariant smem_vec4_sgemm = {FG_SGEMM_SMEM_VEC4, "smem_vec4", vector_access_supported, run_smem_vec4};

}  // namespace fastgemm::detail
