// SPDX-License-Identifier: Apache-2.0
// The tile shapes of the pipelined kernels (see pipeline.cuh), as types the host code can name: the
// variants, AUTO's choice and the tuning tool pick among them.
#pragma once

#include <cstddef>

namespace fastgemm::detail::pipeline {

// A block tile of kBlockM x kBlockN outputs, kDepth deep per k-tile, split among kWarpsM x kWarpsN warps,
// kStages k-tiles in shared memory, at least kMinBlocks blocks per SM (the register budget).
template <int kBlockM_, int kBlockN_, int kDepth_, int kWarpsM_, int kWarpsN_, int kStages_, int kMinBlocks_>
struct Tiling {
  static constexpr int kBlockM = kBlockM_, kBlockN = kBlockN_, kDepth = kDepth_;
  static constexpr int kWarpsM = kWarpsM_, kWarpsN = kWarpsN_;
  static constexpr int kStages = kStages_, kMinBlocks = kMinBlocks_;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kWarpM = kBlockM / kWarpsM, kWarpN = kBlockN / kWarpsN;
  static constexpr int kLanesM = 4, kLanesN = 8;
  static constexpr int kThreadM = kWarpM / kLanesM, kThreadN = kWarpN / kLanesN;
  static constexpr int kBandsM = kThreadM / 4, kBandsN = kThreadN / 4;
  static constexpr int kBandGapM = kWarpM / kBandsM, kBandGapN = kWarpN / kBandsN;
  // Shared tiles are stored [k][mn], each k-line padded by kPad words (see TileCopier).
  static constexpr int kPad = 8;

  static_assert(kThreadM % 4 == 0 && kThreadN % 4 == 0, "a lane owns whole bands of 4");
  static_assert(kBlockM == kWarpsM * kWarpM && kBlockN == kWarpsN * kWarpN, "warps tile the block");
  static_assert(kDepth % 4 == 0, "whole groups of 4 k");
  static_assert(kBlockM * kDepth % (4 * kThreads) == 0 && kBlockN * kDepth % (4 * kThreads) == 0,
                "every thread copies the same number of elements, whole 16-byte chunks where it can");
  static_assert(kStages >= 2, "at least one k-tile in flight during a multiply");

  static constexpr int kStageWords = kDepth * (kBlockM + kPad + kBlockN + kPad);
  static constexpr size_t kSharedBytes = sizeof(float) * kStageWords * kStages;
};

// The tilings the variants use, chosen with fastgemm-tune on the H100 (bench/NOTES-sgemm-fast.md).
// FG_SGEMM_PIPELINED and FG_SGEMM_SPLIT_K: 64 x 128 tiles, 4 warps of 32 x 64, 8 x 8 outputs a thread,
// 4 k-tiles of 16 deep in flight, 3 blocks an SM: the fastest of the tilings tried on most large shapes.
using LargeTiling = Tiling<64, 128, 16, 2, 2, 4, 3>;
// FG_SGEMM_SMALL_TILE: 16 x 32 tiles of one warp, 4 x 4 outputs a thread, 8 k-tiles of 16 in flight: a
// problem of 384^3 has 288 blocks for 132 SMs, and k up to 128 is in flight at once.
using SmallTiling = Tiling<16, 32, 16, 1, 1, 8, 16>;

}  // namespace fastgemm::detail::pipeline
