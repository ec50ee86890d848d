// SPDX-License-Identifier: Apache-2.0
// The fourth rung: smem_vec4.cu with op(A)'s tile stored as lines along m, transposed on its way into
// shared memory when A's rows run along k. A thread's 8 values of A at one depth are then two 128-bit
// reads from one line instead of reads from 8 lines, and the words a warp reads at once lie on distinct
// banks, where stored along k the two rows it reads share one.
#include "sgemm/tile_common.cuh"

namespace fastgemm::detail {
namespace {

Status run_bank_free(const GemmProblem &problem, const RunArgs &args) {
  return tiled::run_single_stage<tiled::Order::mn_contiguous, tiled::Access::vector>(problem, args);
}

}  // namespace

extern const SgemmVariant bank_free_sgemm = {FG_SGEMM_BANK_FREE, "bank_free", tiled::vector_access_supported,
                                             no_workspace<GemmProblem>, run_bank_free};

}  // namespace fastgemm::detail
