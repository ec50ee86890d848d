// SPDX-License-Identifier: Apache-2.0
#include "sgemm/registry.hpp"

#include <string>

#include "core/dispatch.hpp"
#include "tuning/tuning.hpp"

namespace fastgemm::detail {

// Each defined in its own file.
extern const SgemmVariant naive_sgemm, smem_sgemm, smem_vec4_sgemm, bank_free_sgemm, double_buffer_sgemm,
    pipelined_sgemm, small_tile_sgemm, split_k_sgemm, ozaki_int8_sgemm, cublas_sgemm;

namespace {

// Ladder order, then the comparison. Adding a variant is its name here and in the line above.
const SgemmVariant *const kVariants[] = {
    &naive_sgemm,     &smem_sgemm,       &smem_vec4_sgemm, &bank_free_sgemm,  &double_buffer_sgemm,
    &pipelined_sgemm, &small_tile_sgemm, &split_k_sgemm,   &ozaki_int8_sgemm, &cublas_sgemm,
};

// Where one of the project's kernels was measured faster than cuBLAS called directly, both cold (after an L2
// flush) and hot (calls back to back), by the architecture's table (lib/tuning/tuning.hpp); everything else, there
// and on every other device, is cuBLAS's.
bool small_tile_measured_faster(const GemmProblem &p, const DeviceInfo &device) {
  using namespace tuning;
  return arch_tuning(device.arch()).small_tile_shapes && p.m >= kSmallTileEdge && p.n >= kSmallTileEdge &&
         p.m * p.n <= kSmallTileOutputs / p.batch && p.k <= kSmallTileDepth &&
         p.m * p.n * p.k >= (p.batch == 1 ? kSmallTileWork : kSmallTileBatchedWork);
}

bool double_buffer_measured_faster(const GemmProblem &p, const DeviceInfo &device) {
  using namespace tuning;
  return arch_tuning(device.arch()).double_buffer_shapes && p.batch == 1 && p.m >= kDoubleBufferWideEdge &&
         p.n >= kDoubleBufferWideEdge && p.k <= kDoubleBufferShallowDepth;
}

// FP32-accurate products from INT8 tensor cores (FG_MATH_FP32_EMULATED only), where the architecture's INT8 leads
// and the scan, the residues and the reconstruction around the INT8 products are paid back (large and deep
// products, or strided batches of them).
bool ozaki_int8_measured_faster(const GemmProblem &p, const DeviceInfo &device) {
  return p.math == FG_MATH_FP32_EMULATED && tuning::arch_tuning(device.arch()).emulation &&
         tuning::emulation_size(p.m, p.n, p.k, p.batch) == tuning::EmulationSize::pays;
}

// FG_REPRODUCIBLE_SHAPE: the kernels that compute each element as acc = 0, acc = fma(a_l, b_l, acc) for l in
// order, then the one epilogue of tile_common.cuh; fastest first. Their tiles pad k with zeros, and
// fma(0, 0, acc) == acc except for acc == -0, which the epilogue turns into +0 in every one of them, so the
// padding (8 deep for the ladder, 16 for the pipelined tilings, none for naive) changes no bit. A split of k
// depends on m and n; cuBLAS promises no order; the emulation is another arithmetic.
// Without cuBLAS and split_k to fall back on, the order is the single kernels' on the H100
// (bench/NOTES-sgemm-fast.md): double_buffer (16-byte aligned operands) leads at large sizes, and small_tile
// wherever pipelined's 64 x 128 tiles leave most SMs idle or lie mostly outside C.
Preference<fg_sgemm_algo_t> shape_reproducible_preference(const GemmProblem &problem, const DeviceInfo &device) {
  const auto tiles = [&](int64_t tile_m, int64_t tile_n) {
    return problem.batch * ((problem.m + tile_m - 1) / tile_m) * ((problem.n + tile_n - 1) / tile_n);
  };
  Preference<fg_sgemm_algo_t> preference;
  const bool narrow = problem.m < 128 && problem.n < 128;
  if (small_tile_measured_faster(problem, device) || narrow || 2 * tiles(64, 128) < device.sm_count)
    preference.add(FG_SGEMM_SMALL_TILE);
  if (double_buffer_measured_faster(problem, device) || tiles(128, 128) >= device.sm_count)
    preference.add(FG_SGEMM_DOUBLE_BUFFER);
  // pipelined needs cp.async (8.0); before it, double_buffer needs 16-byte aligned operands, smem none.
  return preference.add(FG_SGEMM_PIPELINED).add(FG_SGEMM_DOUBLE_BUFFER).add(FG_SGEMM_SMEM).add(FG_SGEMM_NAIVE);
}

const char *why_not_shape_reproducible(fg_sgemm_algo_t id) {
  switch (id) {
    case FG_SGEMM_SPLIT_K: return "its split of k depends on m, n and the batch";
    case FG_SGEMM_OZAKI_INT8: return "it emulates FP32 with INT8 products, not the FP32 sequence";
    case FG_SGEMM_CUBLAS: return "cuBLAS chooses its kernel, and its order of summation, by the shape";
    default: return nullptr;
  }
}

// A forced algorithm that cannot honour FG_REPRODUCIBLE_SHAPE is refused, never replaced.
Status check_reproducible(const GemmProblem &problem, fg_sgemm_algo_t selected) {
  if (problem.reproducibility != FG_REPRODUCIBLE_SHAPE || selected == FG_SGEMM_AUTO) return Status::success();
  const char *why = why_not_shape_reproducible(selected);
  if (why == nullptr) return Status::success();
  const SgemmVariant *variant = find_variant(kVariants, selected);
  return Status::failure(StatusCode::not_supported, std::string("algorithm ") +
                                                        (variant != nullptr ? variant->name : "unknown") +
                                                        " cannot run with FG_REPRODUCIBLE_SHAPE: " + why);
}

// RunArgs::fallback (sgemm/variant.hpp): AUTO's choice for the problem in FP32 among the variants that need no
// workspace and read no operand.
Status select_fp32_fallback(const GemmProblem &problem, const DeviceInfo &device, FallbackVariant *out) {
  GemmProblem plain = problem;
  plain.math = FG_MATH_FP32;
  AutoLimits limits;
  limits.workspace_limit = 0;
  limits.avoided_flags = kInspectsOperands;
  SgemmSelection selection;
  FG_RETURN_IF_ERROR(
      select_variant(kVariants, FG_SGEMM_AUTO, sgemm_auto_preference, plain, device, limits, &selection));
  out->variant = selection.variant;
  return Status::success();
}

}  // namespace

const SgemmVariant *find_sgemm_variant(fg_sgemm_algo_t id) { return find_variant(kVariants, id); }

// cuBLAS ends every preference: it runs every problem and asks for no workspace of its own (with a caller's workspace
// it is handed what the workspace holds), so it is also the fastest algorithm that fits any caller's workspace. The
// other workspace-free algorithms (naive up to pipelined, small_tile) are faster only where they come first.
Preference<fg_sgemm_algo_t> sgemm_auto_preference(const GemmProblem &problem, const DeviceInfo &device) {
  if (problem.reproducibility == FG_REPRODUCIBLE_SHAPE) return shape_reproducible_preference(problem, device);
  Preference<fg_sgemm_algo_t> preference;
  if (ozaki_int8_measured_faster(problem, device)) preference.add(FG_SGEMM_OZAKI_INT8);
  if (small_tile_measured_faster(problem, device)) preference.add(FG_SGEMM_SMALL_TILE);
  if (double_buffer_measured_faster(problem, device)) preference.add(FG_SGEMM_DOUBLE_BUFFER);
  return preference.add(FG_SGEMM_CUBLAS);
}

Status select_sgemm_variant(const GemmProblem &problem, const DeviceInfo &device, fg_sgemm_algo_t selected,
                            const AutoLimits &limits, SgemmSelection *out) {
  FG_RETURN_IF_ERROR(check_reproducible(problem, selected));
  return select_variant(kVariants, selected, sgemm_auto_preference, problem, device, limits, out);
}

Status sgemm_workspace_bytes(const GemmProblem &problem, const DeviceInfo &device, fg_sgemm_algo_t selected,
                             size_t *bytes) {
  SgemmSelection selection;
  FG_RETURN_IF_ERROR(select_sgemm_variant(problem, device, selected, AutoLimits{}, &selection));
  *bytes = selection.workspace_bytes;
  return Status::success();
}

Status run_sgemm(const GemmProblem &problem, Context &context, fg_sgemm_algo_t selected, EmulationReport *report,
                 fg_sgemm_algo_t *ran) {
  FG_RETURN_IF_ERROR(check_reproducible(problem, selected));
  AutoLimits limits;
  limits.workspace_limit = context.workspace_limit();
  // Where the emulation may run (the only variant that chooses on the device), the FP32 variant it falls back on.
  FallbackVariant fallback;
  if (problem.math == FG_MATH_FP32_EMULATED || selected == FG_SGEMM_OZAKI_INT8)
    FG_RETURN_IF_ERROR(select_fp32_fallback(problem, context.device(), &fallback));
  VariantReport reported{report};
  return run_selected(kVariants, selected, sgemm_auto_preference, problem, context, limits,
                      report != nullptr ? &reported : nullptr, ran, fallback.variant != nullptr ? &fallback : nullptr);
}

}  // namespace fastgemm::detail
