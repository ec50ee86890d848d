#include "sgemm/registry.hpp"

#include "core/variant_table.hpp"

namespace fastgemm::detail {
namespace {

// Ladder order, then the comparison. Adding a variant is one line here.
const SgemmVariant *const kVariants[] = {
    &naive_sgemm,
    &smem_sgemm,
    &smem_vec4_sgemm,
    &bank_free_sgemm,
    &double_buffer_sgemm,
    &pipelined_sgemm,
    &small_tile_sgemm,
    &split_k_sgemm,
    &cublas_sgemm,
};

// AUTO's preference outside the measured table below, fastest first; the last entry accepts every
// problem, so AUTO always finds one.
const fg_sgemm_algo_t kAutoPreference[] = {FG_SGEMM_CUBLAS, FG_SGEMM_NAIVE};

// AUTO's table: where one of the project's kernels was measured faster than cuBLAS on a device
// (fastgemm-tune and fastgemm-bench, bench/NOTES-sgemm-fast.md). Measured on the H100 (compute
// capability 9.0): FG_SGEMM_SMALL_TILE beats cuBLAS on single products of at most 384 x 384 outputs with
// k up to 1024 (1.28x at 128^3, 1.16x at 256^3, 1.10x at 384^3) and loses from 512^3 on (0.92x); every
// other shape of the suite ran faster with cuBLAS, so it stays cuBLAS's, and so does every problem on a
// device nothing was measured on.
fg_sgemm_algo_t measured_choice(const GemmProblem &p, const DeviceInfo &device) {
  if (device.arch() != 90) return FG_SGEMM_AUTO;
  constexpr int64_t kSmallOutputs = 384 * 384, kSmallDepth = 1024;
  if (p.batch == 1 && p.m * p.n <= kSmallOutputs && p.k <= kSmallDepth) return FG_SGEMM_SMALL_TILE;
  return FG_SGEMM_AUTO;
}

}  // namespace

const SgemmVariant *find_sgemm_variant(fg_sgemm_algo_t id) { return find_variant(kVariants, id); }

fg_sgemm_algo_t choose_sgemm_algo(const GemmProblem &problem, const DeviceInfo &device) {
  const fg_sgemm_algo_t measured = measured_choice(problem, device);
  const SgemmVariant *variant = find_variant(kVariants, measured);
  if (variant != nullptr && variant->can_implement(problem, device).ok()) return measured;
  return choose_variant(kVariants, kAutoPreference, problem, device);
}

Status run_sgemm(const GemmProblem &problem, Context &context, fg_sgemm_algo_t selected, fg_sgemm_algo_t *ran) {
  const fg_sgemm_algo_t id = selected == FG_SGEMM_AUTO ? choose_sgemm_algo(problem, context.device()) : selected;
  const SgemmVariant *variant = nullptr;
  FG_RETURN_IF_ERROR(implementing_variant(kVariants, id, problem, context.device(), &variant));
  FG_RETURN_IF_ERROR(variant->run(problem, context));
  *ran = id;
  return Status::success();
}

}  // namespace fastgemm::detail
