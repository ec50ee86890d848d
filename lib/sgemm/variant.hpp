// SPDX-License-Identifier: Apache-2.0
// SGEMM's algorithms follow the variant protocol (core/variant.hpp) over the canonical GemmProblem. Each is defined
// in its own file as `extern const SgemmVariant name = {...}` and listed in registry.cpp's table.
#pragma once

#include "core/problem.hpp"
#include "core/variant.hpp"
#include "fastgemm/fastgemm.h"

namespace fastgemm::detail {

using SgemmVariant = Variant<GemmProblem, fg_sgemm_algo_t>;

// RunArgs::fallback of SGEMM's emulation: the variant that computes the problem in FP32 where the emulation declines
// its operands on the device, AUTO's choice among those that need no workspace and read no operand (so that it can
// run on any operands, inside the emulation's graph), chosen by the registry when it may choose the emulation.
struct FallbackVariant {
  const SgemmVariant *variant = nullptr;
};

// Enqueues the problem in FP32 on args.stream with args.fallback's variant (args.cublas where that variant calls
// cuBLAS), and stores its id in *algo: the emulation's branch for operands it declines.
Status run_fp32_fallback(const GemmProblem &problem, const RunArgs &args, fg_sgemm_algo_t *algo);

}  // namespace fastgemm::detail
