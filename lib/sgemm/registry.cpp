#include "sgemm/registry.hpp"

namespace fastgemm::detail {

// Each defined in its own file.
extern const SgemmVariant naive_sgemm, smem_sgemm, smem_vec4_sgemm, bank_free_sgemm, double_buffer_sgemm,
    pipelined_sgemm, small_tile_sgemm, split_k_sgemm, cublas_sgemm;

namespace {

// Ladder order, then the comparison. Adding a variant is its name here and in the line above.
const SgemmVariant *const kVariants[] = {
    &naive_sgemm,     &smem_sgemm,       &smem_vec4_sgemm, &bank_free_sgemm, &double_buffer_sgemm,
    &pipelined_sgemm, &small_tile_sgemm, &split_k_sgemm,   &cublas_sgemm,
};

// Where one of the project's kernels was measured faster than cuBLAS called directly, both cold (after an L2
// flush) and hot (calls back to back); the measurements are in bench/NOTES-sgemm-fast.md. Only compute
// capability 9.0 was measured; everything else, there and on every other device, is cuBLAS's.
bool small_tile_measured_faster(const GemmProblem &p, const DeviceInfo &device) {
  constexpr int64_t kSmallOutputs = 384 * 384, kSmallDepth = 1024, kSmallEdge = 16;
  // Multiply-adds a product: single products from 20^3 (16^3 lost cold), batched ones from 32^3 (24^3 x 16
  // lost cold to cuBLAS's batched kernel).
  constexpr int64_t kSmallWork = 20 * 20 * 20, kSmallBatchedWork = 32 * 32 * 32;
  // All batches' outputs together: larger batches fill the device better through cuBLAS.
  return device.arch() == 90 && p.m >= kSmallEdge && p.n >= kSmallEdge && p.m * p.n <= kSmallOutputs / p.batch &&
         p.k <= kSmallDepth && p.m * p.n * p.k >= (p.batch == 1 ? kSmallWork : kSmallBatchedWork);
}

// Wide, shallow single products, where cuBLAS's tiles fill the device poorly.
bool double_buffer_measured_faster(const GemmProblem &p, const DeviceInfo &device) {
  constexpr int64_t kWideEdge = 4096, kShallowDepth = 256;
  return device.arch() == 90 && p.batch == 1 && p.m >= kWideEdge && p.n >= kWideEdge && p.k <= kShallowDepth;
}

}  // namespace

const SgemmVariant *find_sgemm_variant(fg_sgemm_algo_t id) { return find_variant(kVariants, id); }

Preference<fg_sgemm_algo_t> sgemm_auto_preference(const GemmProblem &problem, const DeviceInfo &device) {
  Preference<fg_sgemm_algo_t> preference;
  if (small_tile_measured_faster(problem, device)) preference.add(FG_SGEMM_SMALL_TILE);
  if (double_buffer_measured_faster(problem, device)) preference.add(FG_SGEMM_DOUBLE_BUFFER);
  return preference.add(FG_SGEMM_CUBLAS);
}

fg_sgemm_algo_t choose_sgemm_algo(const GemmProblem &problem, const DeviceInfo &device) {
  const SgemmVariant *variant = first_implementing(kVariants, sgemm_auto_preference(problem, device), problem, device);
  return variant != nullptr ? variant->id : FG_SGEMM_AUTO;
}

Status sgemm_workspace_bytes(const GemmProblem &problem, const DeviceInfo &device, fg_sgemm_algo_t selected,
                             size_t *bytes) {
  return selected_workspace_bytes(kVariants, selected, sgemm_auto_preference, problem, device, bytes);
}

Status run_sgemm(const GemmProblem &problem, Context &context, fg_sgemm_algo_t selected, fg_sgemm_algo_t *ran) {
  return run_selected(kVariants, selected, sgemm_auto_preference, problem, context, ran);
}

}  // namespace fastgemm::detail
