// SPDX-License-Identifier: Apache-2.0
#include "core/status.hpp"
#include "sgemm/variant.hpp"

namespace fastgemm::detail {

Status run_fp32_fallback(const GemmProblem &problem, const RunArgs &args, fg_sgemm_algo_t *algo) {
  if (args.fallback == nullptr || args.fallback->variant == nullptr)
    return Status::failure(StatusCode::internal_error, "the emulation was given no FP32 variant to fall back on");
  const SgemmVariant &variant = *args.fallback->variant;
  GemmProblem plain = problem;
  plain.math = FG_MATH_FP32;
  RunArgs plain_args;
  plain_args.stream = args.stream;
  plain_args.device = args.device;
  if (variant.uses_cublas != nullptr && variant.uses_cublas(plain, *args.device)) {
    if (args.cublas == nullptr)
      return Status::failure(StatusCode::internal_error, "the FP32 product needs a cuBLAS handle it was not given");
    plain_args.cublas = args.cublas;
  }
  *algo = variant.id;
  return variant.run(plain, plain_args);
}

}  // namespace fastgemm::detail
