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

// AUTO's table: where one of the project's kernels was measured faster than cuBLAS called directly on a
// device, both cold (after an L2 flush) and hot (calls back to back), with fastgemm-bench --mode both
// (bench/NOTES-sgemm-fast.md). On the H100 (compute capability 9.0):
// - FG_SGEMM_SMALL_TILE on products of at most 384 x 384 outputs in all batches together, k up to 1024,
//   m and n at least 16 and at least 32^3 multiply-adds a product: 1.09-1.65x cold and 1.5-2.3x hot from
//   32^3 to 384^3 and on 64^3 in batches of 16. Below 32^3 (0.90x cold at 8^3), with m or n under 16
//   (0.67x at 1 x 8192 x 1024), from 512^3 on (0.93x cold) and on larger batches (0.65x at 64^3 x 1024)
//   cuBLAS is faster.
// - FG_SGEMM_DOUBLE_BUFFER on single products with m and n of at least 4096 and k up to 256, where cuBLAS's
//   tiles fill the device poorly: 1.05x both ways at 4096 x 4096 x 256.
// Every other shape measured ran faster with cuBLAS, so it stays cuBLAS's, and so does every problem on a
// device nothing was measured on.
fg_sgemm_algo_t measured_choice(const GemmProblem &p, const DeviceInfo &device) {
  if (device.arch() != 90) return FG_SGEMM_AUTO;
  constexpr int64_t kSmallOutputs = 384 * 384, kSmallDepth = 1024, kSmallEdge = 16, kSmallWork = 32 * 32 * 32;
  if (p.m >= kSmallEdge && p.n >= kSmallEdge && p.m * p.n <= kSmallOutputs / p.batch && p.k <= kSmallDepth &&
      p.m * p.n * p.k >= kSmallWork) {
    return FG_SGEMM_SMALL_TILE;
  }
  constexpr int64_t kWideEdge = 4096, kShallowDepth = 256;
  if (p.batch == 1 && p.m >= kWideEdge && p.n >= kWideEdge && p.k <= kShallowDepth) return FG_SGEMM_DOUBLE_BUFFER;
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
