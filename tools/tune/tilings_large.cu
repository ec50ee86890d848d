// SPDX-License-Identifier: Apache-2.0
#include "sgemm/pipeline.cuh"
#include "tune/tilings.hpp"

namespace tune {
using fastgemm::detail::pipeline::Tiling;
// Tiling<block m, block n, depth, warps m, warps n, stages, min blocks per SM>
using T128x128x16s4m2 = Tiling<128, 128, 16, 4, 2, 4, 2>;
using T128x128x16s4m1 = Tiling<128, 128, 16, 4, 2, 4, 1>;
using T128x128x16s3m2 = Tiling<128, 128, 16, 4, 2, 3, 2>;
using T128x128x32s3m1 = Tiling<128, 128, 32, 4, 2, 3, 1>;
using T128x128x8s4m2 = Tiling<128, 128, 8, 4, 2, 4, 2>;
using T128x64x16s4m3 = Tiling<128, 64, 16, 4, 1, 4, 3>;
using T64x128x16s4m3 = Tiling<64, 128, 16, 2, 2, 4, 3>;  // FG_SGEMM_PIPELINED's and FG_SGEMM_SPLIT_K's

void add_large_tilings(std::vector<TilingEntry> &entries) {
  entries.push_back(TUNE_ENTRY(T128x128x16s4m2));
  entries.push_back(TUNE_ENTRY(T128x128x16s4m1));
  entries.push_back(TUNE_ENTRY(T128x128x16s3m2));
  entries.push_back(TUNE_ENTRY(T128x128x32s3m1));
  entries.push_back(TUNE_ENTRY(T128x128x8s4m2));
  entries.push_back(TUNE_ENTRY(T128x64x16s4m3));
  entries.push_back(TUNE_ENTRY(T64x128x16s4m3));
}
}  // namespace tune
