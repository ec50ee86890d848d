// SPDX-License-Identifier: Apache-2.0
#include "sgemm/pipeline.cuh"
#include "tune/tilings.hpp"

namespace tune {
using fastgemm::detail::pipeline::Tiling;
using T64x64x16s3m4 = Tiling<64, 64, 16, 2, 2, 3, 4>;
using T64x64x16s4m3 = Tiling<64, 64, 16, 2, 2, 4, 3>;
using T64x64x16s3w1 = Tiling<64, 64, 16, 2, 1, 3, 6>;  // 2 warps of 32 x 64, 8 x 8 a thread
using T32x64x16s3 = Tiling<32, 64, 16, 1, 1, 3, 8>;    // 1 warp, 8 x 8 a thread
using T32x32x16s3 = Tiling<32, 32, 16, 1, 1, 3, 12>;   // 1 warp, 8 x 4 a thread
using T16x32x16s3 = Tiling<16, 32, 16, 1, 1, 3, 16>;   // 1 warp, 4 x 4 a thread
using T16x32x16s8 = Tiling<16, 32, 16, 1, 1, 8, 16>;   // FG_SGEMM_SMALL_TILE's
using T16x32x32s4 = Tiling<16, 32, 32, 1, 1, 4, 16>;
using T32x32x16s8 = Tiling<32, 32, 16, 1, 1, 8, 12>;
using T32x64x16s6 = Tiling<32, 64, 16, 1, 1, 6, 8>;
using T64x64x16s6 = Tiling<64, 64, 16, 2, 2, 6, 3>;

void add_small_tilings(std::vector<TilingEntry> &entries) {
  entries.push_back(TUNE_ENTRY(T64x64x16s3m4));
  entries.push_back(TUNE_ENTRY(T64x64x16s4m3));
  entries.push_back(TUNE_ENTRY(T64x64x16s3w1));
  entries.push_back(TUNE_ENTRY(T32x64x16s3));
  entries.push_back(TUNE_ENTRY(T32x32x16s3));
  entries.push_back(TUNE_ENTRY(T16x32x16s3));
  entries.push_back(TUNE_ENTRY(T16x32x16s8));
  entries.push_back(TUNE_ENTRY(T16x32x32s4));
  entries.push_back(TUNE_ENTRY(T32x32x16s8));
  entries.push_back(TUNE_ENTRY(T32x64x16s6));
  entries.push_back(TUNE_ENTRY(T64x64x16s6));
}
}  // namespace tune
