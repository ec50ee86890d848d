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
    &cublas_sgemm,
};

// AUTO's preference, fastest first; the last entry accepts every problem, so AUTO always finds one.
const fg_sgemm_algo_t kAutoPreference[] = {FG_SGEMM_CUBLAS, FG_SGEMM_NAIVE};

}  // namespace

const SgemmVariant *find_sgemm_variant(fg_sgemm_algo_t id) { return find_variant(kVariants, id); }

fg_sgemm_algo_t choose_sgemm_algo(const GemmProblem &problem, const DeviceInfo &device) {
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
