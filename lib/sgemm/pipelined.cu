// SPDX-License-Identifier: Apache-2.0
// FG_SGEMM_PIPELINED: the ladder's ideas past the ladder. Each block computes a 64 x 128 tile of C with
// 4 warps of 32 x 64, a thread's 8 x 8 outputs as 2 x 2 bands of 4; operand tiles 16 deep travel from
// global to shared memory by cp.async, 4 k-tiles in flight, with no registers spent on staging them (an
// operand that runs along k is transposed by single-float copies); blocks walk the tiles 8 tile-rows at a
// time for L2 reuse. Any alignment. See pipeline.cuh.
#include "sgemm/pipeline.cuh"

namespace fastgemm::detail {
namespace {

Status run_pipelined_large(const GemmProblem &problem, const RunArgs &args) {
  return pipeline::run_pipelined<pipeline::LargeTiling>(problem, args.stream);
}

}  // namespace

extern const SgemmVariant pipelined_sgemm = {FG_SGEMM_PIPELINED, "pipelined",
                                             pipeline::pipelined_supported<pipeline::LargeTiling>,
                                             no_workspace<GemmProblem>, run_pipelined_large};

}  // namespace fastgemm::detail
