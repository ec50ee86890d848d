#include "rowmean/registry.hpp"

#include "core/variant_table.hpp"

namespace fastgemm::detail {
namespace {

const RowmeanVariant *const kVariants[] = {
    &single_block_rowmean, &block_per_batch_rowmean, &coalesced_rowmean, &two_pass_rowmean,
    &fused_rowmean,        &staged_rowmean,          &pipelined_rowmean,    &cublas_rowmean,
};

// AUTO's preferences, fastest first for each kind of shape; the last entry of each accepts every shape.
// A row of M values costs M * element size bytes of input and feeds L multiply-adds of the product.
// Where FP64 runs at full rate:
//  - pipelined, which reads the input once and runs the product beside the read on tiles of 64 batches, for f32 problems
//    whose product is heavy (more than one multiply-add per input byte: L > M * 4), with batches enough for the
//    product to overlap the read (N >= 2048), rows longer than 32 bytes and L up to 2048 (beyond, a product tile takes
//    long enough that staged's cuBLAS DGEMM is faster: 13.5 against 10.2 ms at 4096 x 8 x 16384). On the H100:
//    1024 x 64 x 8192 0.84 ms (fused 1.27, staged 1.37), 1024 x 64 x 2048 0.267 ms (staged 0.314), 2048 x 32 x 4096
//    0.985 ms (staged 1.010).
//  - fused, which reads the input once and keeps the means on chip (and runs the staged path where a tile's means do
//    not fit), when there are batches enough for its narrowest tiles to occupy most SMs and
//     - rows are so short (at most 32 bytes) that staged's round trip of the means through memory would add half the
//       read again (f64 64 x 1 x 1000000: 0.89 ms fused, 1.03 ms staged on the H100), or
//     - the problem is f32 and either the product is light (at most one multiply-add per input byte: its 8 consumer
//       warps per SM keep up with the read) or the fused tiles hold 16 batches or more (f32 1024 x 64 x 8192, 4
//       multiply-adds per byte: 1.26 ms fused, 1.36 ms staged): the consumers fall behind the read there, but by less
//       than staged's second pass costs.
//  - otherwise staged, which spreads the read and then the product over every warp of every SM. f64 means take twice
//    the shared memory of f32 ones, so f64 tiles are narrower: at f64 512 x 512 x 1024 the fused kernel's 128 tiles of
//    8 batches leave 4 of 132 SMs idle and no tile's product overlaps another's read (0.730 ms fused, 0.716 ms staged),
//    and at f64 128 x 4096 x 2048 staged also led (2.765 against 2.810 ms), both in two runs.
// Where FP64 runs at a small fraction of FP32, a heavy product (at least 1/32 multiply-add per byte) goes to cuBLAS,
// whose product is FP32.
const fg_rowmean_algo_t kPipelinedPreference[] = {FG_ROWMEAN_PIPELINED};
const fg_rowmean_algo_t kFusedPreference[] = {FG_ROWMEAN_FUSED};
const fg_rowmean_algo_t kSlowFp64Preference[] = {FG_ROWMEAN_CUBLAS};
const fg_rowmean_algo_t kStagedPreference[] = {FG_ROWMEAN_STAGED};

// The fused algorithm's narrowest tile, and the share of SMs (in quarters) its tiles must occupy.
constexpr int64_t kFusedNarrowestTile = 8;
constexpr int64_t kFusedSmQuarters = 3;
constexpr int64_t kShortRowBytes = 32;
constexpr int kFusedWideTile = 16;
// The pipelined algorithm's range: batches enough to overlap the read (32 slabs of 64), L up to this.
constexpr int64_t kPipelinedMinBatches = 2048;
constexpr int64_t kPipelinedMaxL = 2048;

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
    const int64_t narrowest_tiles = (problem.N + kFusedNarrowestTile - 1) / kFusedNarrowestTile;
    const bool tiles_fill_gpu = 4 * narrowest_tiles >= kFusedSmQuarters * device.sm_count;
    const bool light_product = problem.L <= row_bytes;
    if (problem.dtype == FG_F32 && !light_product && row_bytes > kShortRowBytes && problem.N >= kPipelinedMinBatches &&
        problem.L <= kPipelinedMaxL && pipelined_applies(problem, device))
      return choose_variant(kVariants, kPipelinedPreference, problem, device);
    const bool f32_tiles_pay =
        problem.dtype == FG_F32 && (light_product || fused_tile_batches(problem, device) >= kFusedWideTile);
    if (tiles_fill_gpu && (row_bytes <= kShortRowBytes || f32_tiles_pay))
      return choose_variant(kVariants, kFusedPreference, problem, device);
  } else if (32 * problem.L >= row_bytes) {
    return choose_variant(kVariants, kSlowFp64Preference, problem, device);
  }
  return choose_variant(kVariants, kStagedPreference, problem, device);
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
