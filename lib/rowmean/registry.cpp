#include "rowmean/registry.hpp"

#include "core/variant_table.hpp"

namespace fastgemm::detail {
namespace {

const RowmeanVariant *const kVariants[] = {
    &two_pass_rowmean,
    &cublas_rowmean,
};

// Fastest first; the last entry accepts every shape.
const fg_rowmean_algo_t kAutoPreference[] = {FG_ROWMEAN_CUBLAS, FG_ROWMEAN_TWO_PASS};

}  // namespace

const RowmeanVariant *find_rowmean_variant(fg_rowmean_algo_t id) { return find_variant(kVariants, id); }

fg_rowmean_algo_t choose_rowmean_algo(const RowmeanProblem &problem, const DeviceInfo &device) {
  return choose_variant(kVariants, kAutoPreference, problem, device);
}

Status run_rowmean(const RowmeanProblem &problem, Context &context, fg_rowmean_algo_t selected) {
  const fg_rowmean_algo_t id =
      selected == FG_ROWMEAN_AUTO ? choose_rowmean_algo(problem, context.device()) : selected;
  const RowmeanVariant *variant = nullptr;
  FG_RETURN_IF_ERROR(implementing_variant(kVariants, id, problem, context.device(), &variant));
  return variant->run(problem, context);
}

}  // namespace fastgemm::detail
