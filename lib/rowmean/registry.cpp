// SPDX-License-Identifier: Apache-2.0
#include "rowmean/registry.hpp"

#include "core/dispatch.hpp"
#include "rowmean/fused.hpp"
#include "tuning/tuning.hpp"

namespace fastgemm::detail {

// Each defined in its own file.
extern const RowmeanVariant single_block_rowmean, block_per_batch_rowmean, coalesced_rowmean, two_pass_rowmean,
    fused_rowmean, staged_rowmean, relay_rowmean, cublas_rowmean;

namespace {

// Ladder order, then the comparison. Adding a variant is its name here and in the line above.
const RowmeanVariant *const kVariants[] = {
    &single_block_rowmean, &block_per_batch_rowmean, &coalesced_rowmean, &two_pass_rowmean,
    &fused_rowmean,        &staged_rowmean,          &relay_rowmean,     &cublas_rowmean,
};

// The thresholds of AUTO's preference; the measurements behind them are in bench/NOTES-rowmean.md ("AUTO's rules").
// The fused algorithm's narrowest tile, and the share of SMs (in quarters) its tiles must occupy.
constexpr int64_t kFusedNarrowestTile = 8;
constexpr int64_t kFusedSmQuarters = 3;
constexpr int64_t kShortRowBytes = 32;
constexpr int kFusedWideTile = 16;
// The relay's range (FG_ROWMEAN_RELAY): batches enough to overlap the read (32 slabs of 64), L up to this.
constexpr int64_t kRelayMinBatches = 2048;
constexpr int64_t kRelayMaxL = 2048;

bool has_full_rate_fp64(const DeviceInfo &device) { return tuning::arch_tuning(device.arch()).full_rate_fp64; }

}  // namespace

const RowmeanVariant *find_rowmean_variant(fg_rowmean_algo_t id) { return find_variant(kVariants, id); }

// A row of M values costs M * element size bytes of input and feeds L multiply-adds of the product.
// Where FP64 runs at full rate:
//  - the relay (FG_ROWMEAN_RELAY) for f32 problems whose product is heavy (more than one multiply-add per input
//    byte), with batches enough for the product to overlap the read, rows longer than 32 bytes and L up to 2048;
//  - the fused algorithm when its narrowest tiles occupy most SMs and either rows are short (at most 32 bytes) or the
//    problem is f32 and either the product is light or the fused tiles hold 16 batches or more;
//  - the staged algorithm otherwise, and wherever those before it cannot run the problem.
// Where FP64 runs at a small fraction of FP32, a heavy product (at least 1/32 multiply-add per byte) goes to cuBLAS,
// whose product is FP32.
// Then, for a caller's workspace too small for staged's means: the two workspace-free algorithms that keep a batch's
// means on chip, fused and coalesced (block_per_batch and single_block, also workspace-free, were slower than
// coalesced on every measured shape: bench/NOTES-rowmean.md). Both are bound by the input's read, so the one that
// spreads it over more SMs goes first: fused's tiles where they occupy most SMs, otherwise coalesced's block per batch
// (at f32 512 x 1024 x 64, 8 fused tiles would read 128 MB through 8 SMs where coalesced's 64 blocks use 64). Not
// measured yet; coalesced reads the whole matrix once per batch, so beyond fused's range (f32 L > ~3600, f64 L > ~1800)
// with many batches it runs, but far slower than staged would in a workspace that held its means.
Preference<fg_rowmean_algo_t> rowmean_auto_preference(const RowmeanProblem &problem, const DeviceInfo &device) {
  Preference<fg_rowmean_algo_t> preference;
  const int64_t row_bytes = problem.M * element_size(problem.dtype);
  const bool light_product = problem.L <= row_bytes;
  const int64_t narrowest_tiles = (problem.N + kFusedNarrowestTile - 1) / kFusedNarrowestTile;
  const bool tiles_fill_gpu = 4 * narrowest_tiles >= kFusedSmQuarters * device.sm_count;
  if (has_full_rate_fp64(device)) {
    if (problem.dtype == FG_F32 && !light_product && row_bytes > kShortRowBytes && problem.N >= kRelayMinBatches &&
        problem.L <= kRelayMaxL)
      preference.add(FG_ROWMEAN_RELAY);
    const bool f32_tiles_pay =
        problem.dtype == FG_F32 && (light_product || fused_tile_batches(problem, device) >= kFusedWideTile);
    if (tiles_fill_gpu && (row_bytes <= kShortRowBytes || f32_tiles_pay)) preference.add(FG_ROWMEAN_FUSED);
  } else if (32 * problem.L >= row_bytes) {
    preference.add(FG_ROWMEAN_CUBLAS);
  }
  preference.add(FG_ROWMEAN_STAGED);
  if (tiles_fill_gpu) return preference.add(FG_ROWMEAN_FUSED).add(FG_ROWMEAN_COALESCED);
  return preference.add(FG_ROWMEAN_COALESCED).add(FG_ROWMEAN_FUSED);
}

Status select_rowmean_variant(const RowmeanProblem &problem, const DeviceInfo &device, fg_rowmean_algo_t selected,
                              const AutoLimits &limits, RowmeanSelection *out) {
  return select_variant(kVariants, selected, rowmean_auto_preference, problem, device, limits, out);
}

Status rowmean_workspace_bytes(const RowmeanProblem &problem, const DeviceInfo &device, fg_rowmean_algo_t selected,
                               size_t *bytes) {
  RowmeanSelection selection;
  FG_RETURN_IF_ERROR(select_rowmean_variant(problem, device, selected, AutoLimits{}, &selection));
  *bytes = selection.workspace_bytes;
  return Status::success();
}

Status run_rowmean(const RowmeanProblem &problem, Context &context, fg_rowmean_algo_t selected,
                   fg_rowmean_algo_t *ran) {
  AutoLimits limits;
  limits.workspace_limit = context.workspace_limit();
  return run_selected(kVariants, selected, rowmean_auto_preference, problem, context, limits, nullptr, ran);
}

}  // namespace fastgemm::detail
