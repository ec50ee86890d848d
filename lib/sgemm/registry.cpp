// SPDX-License-Identifier: Apache-2.0
#include "sgemm/registry.hpp"

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

// FP32-accurate products from INT8 tensor cores (FG_MATH_FP32_EMULATED only), where the scan, the residues and
// the reconstruction around the INT8 products are paid back. On 9.0 (bench/NOTES-emulated.md) the emulation ran
// 1.75x cuBLAS at 3072^3 and 1.6x at 8192 x 1024 x 8192, but 1.0x at 2048^3, 0.77x on 16 batches of 1024^3 and
// 0.4x at 4096 x 4096 x 256, where the reconstruction (m n of them per modulus) outweighs the products: each
// product must be large, and deep. The data-center parts 8.0 and 10.0 lead their FP32 lanes with INT8 tensor
// cores by as much as 9.0 does (30x and more); the others (8.6, 8.9, 12.0) by too little for 7 products.
bool ozaki_int8_measured_faster(const GemmProblem &p, const DeviceInfo &device) {
  constexpr int64_t kMinEdge = 1024, kMinDepth = 1024;
  constexpr double kMinWork = 17179869184.0;  // 2^34 = m n k of 1024 x 2048 x 8192, about 2580^3
  const bool int8_leads = device.arch() == 80 || device.arch() == 90 || device.arch() == 100;
  return p.math == FG_MATH_FP32_EMULATED && int8_leads && p.m >= kMinEdge && p.n >= kMinEdge && p.k >= kMinDepth &&
         static_cast<double>(p.m) * p.n * p.k >= kMinWork;
}

}  // namespace

const SgemmVariant *find_sgemm_variant(fg_sgemm_algo_t id) { return find_variant(kVariants, id); }

Preference<fg_sgemm_algo_t> sgemm_auto_preference(const GemmProblem &problem, const DeviceInfo &device) {
  Preference<fg_sgemm_algo_t> preference;
  if (ozaki_int8_measured_faster(problem, device)) preference.add(FG_SGEMM_OZAKI_INT8);
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
