// SPDX-License-Identifier: Apache-2.0
// The second rung: each block computes a 128 x 128 tile of C, staging op(A) and op(B) through shared
// memory 8 deep, and each thread keeps 8 x 8 outputs in registers, so that every value read from shared
// memory feeds 8 multiply-adds. Global memory is read and written 32 bits at a time. op(A)'s tile is
// stored a line of 8 k per row, as a row-major A lies: a thread's 8 values of A at one depth lie on 8
// lines, and the two rows a warp reads at once fall on one bank.
#include "sgemm/tile_common.cuh"

namespace fastgemm::detail {
namespace {

Status run_smem(const GemmProblem &problem, const RunArgs &args) {
  return tiled::run_single_stage<tiled::Order::k_contiguous, tiled::Access::scalar>(problem, args);
}

}  // namespace

extern const SgemmVariant smem_sgemm = {FG_SGEMM_SMEM, "smem", accepts_any_problem<GemmProblem>,
                                        no_workspace<GemmProblem>, run_smem};

}  // namespace fastgemm::detail
