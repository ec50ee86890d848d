// SPDX-License-Identifier: Apache-2.0
// The third rung: the shared-memory tiles of smem.cu, now read from global memory and written to C 128
// bits at a time, a quarter of the load and store instructions. Each thread moves one chunk of 4
// consecutive elements per operand tile; chunks that straddle the matrix's edge are read element by
// element. 128-bit accesses need 16-byte aligned vectors, which can_implement checks.
#include "sgemm/tile_common.cuh"

namespace fastgemm::detail {
namespace {

Status run_smem_vec4(const GemmProblem &problem, const RunArgs &args) {
  return tiled::run_single_stage<tiled::Order::k_contiguous, tiled::Access::vector>(problem, args);
}

}  // namespace

extern const SgemmVariant smem_vec4_sgemm = {FG_SGEMM_SMEM_VEC4, "smem_vec4", tiled::vector_access_supported,
                                             no_workspace<GemmProblem>, run_smem_vec4};

}  // namespace fastgemm::detail
