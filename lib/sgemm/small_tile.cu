// SPDX-License-Identifier: Apache-2.0
// FG_SGEMM_SMALL_TILE: the pipelined kernel with 16 x 32 tiles of one warp (4 x 4 outputs a thread) and 8
// k-tiles in flight, for problems whose C has too few large tiles to give every SM work: 256 x 256 is 8
// tiles of 64 x 128 for 132 SMs, and 128 small ones, each with all of k = 128 in flight at once.
#include "sgemm/pipeline.cuh"

namespace fastgemm::detail {
namespace {

Status run_small_tile(const GemmProblem &problem, const RunArgs &args) {
  return pipeline::run_pipelined<pipeline::SmallTiling>(problem, args.stream);
}

}  // namespace

extern const SgemmVariant small_tile_sgemm = {FG_SGEMM_SMALL_TILE, "small_tile",
                                              pipeline::pipelined_supported<pipeline::SmallTiling>,
                                              no_workspace<GemmProblem>, run_small_tile};

}  // namespace fastgemm::detail
