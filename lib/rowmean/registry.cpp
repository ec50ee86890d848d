#include "rowmean/registry.hpp"

#include "core/variant_table.hpp"

namespace fastgemm::detail {
namespace {

const RowmeanVariant *const kVariants[] = {
    &single_block_rowmean, &block_per_batch_rowmean, &coalesced_rowmean, &two_pass_rowmean,
    &fused_rowmean,        &staged_rowmean,          &cublas_rowmean,
};

// AUTO's preferences, fastest first for each kind of shape; the last entry of each accepts every shape.
// A row of M values costs M * element size bytes of input and feeds L multiply-adds of the product:
//  - heavy product (at least half a multiply-add per input byte) and full-rate FP64: fused, which hides the product
//    behind the read where a tile's means fit on chip (and runs the staged path where they do not), when there are
//    batches enough for every SM to overlap two tiles of its narrowest width; with fewer, most SMs would sit idle
//    or read without overlap, and staged, which spreads both passes over every SM, is faster.
//  - heavy product (at least 1/32 multiply-add per byte) where FP64 runs at a small fraction of FP32: cuBLAS, whose
//    product is FP32.
//  - otherwise: staged, whose product pass is small next to its read.
const fg_rowmean_algo_t kHeavyProductPreference[] = {FG_ROWMEAN_FUSED};
const fg_rowmean_algo_t kSlowFp64Preference[] = {FG_ROWMEAN_CUBLAS};
const fg_rowmean_algo_t kLightProductPreference[] = {FG_ROWMEAN_STAGED};

// Batches in the fused algorithm's narrowest tile, and tiles each SM needs to overlap reading with the product.
constexpr int64_t kFusedNarrowestTile = 8;
constexpr int64_t kFusedTilesPerSm = 2;

// The data-centre parts, whose FP64 (and FP64 tensor cores from 8.0 on) runs at half the FP32 rate or better.
bool has_full_rate_fp64(const DeviceInfo &device) {
  const int arch = device.arch();
  return arch == 60 || arch == 70 || arch == 80 || arch == 90 || arch == 100;
}

}  // namespace

const RowmeanVariant *find_rowmean_variant(fg_rowmean_algo_t id) { return find_variant(kVariants, id); }

fg_rowmean_algo_t choose_rowmean_algo(const RowmeanProblem &problem, const DeviceInfo &device) {
  const int64_t row_bytes = problem.M * element_size(problem.dtype);
  if (has_full_rate_fp64(device)) {
    const bool batches_fill_gpu = problem.N >= kFusedNarrowestTile * kFusedTilesPerSm * device.sm_count;
    if (2 * problem.L >= row_bytes && batches_fill_gpu)
      return choose_variant(kVariants, kHeavyProductPreference, problem, device);
  } else if (32 * problem.L >= row_bytes) {
    return choose_variant(kVariants, kSlowFp64Preference, problem, device);
  }
  return choose_variant(kVariants, kLightProductPreference, problem, device);
}

Status run_rowmean(const RowmeanProblem &problem, Context &context, fg_rowmean_algo_t selected, fg_rowmean_algo_t *ran) {
  const fg_rowmean_algo_t id =
      selected == FG_ROWMEAN_AUTO ? choose_rowmean_algo(problem, context.device()) : selected;
  const RowmeanVariant *variant = nullptr;
  FG_RETURN_IF_ERROR(implementing_variant(kVariants, id, problem, context.device(), &variant));
  FG_RETURN_IF_ERROR(variant->run(problem, context));
  *ran = id;
  return Status::success();
}

}  // namespace fastgemm::detail
