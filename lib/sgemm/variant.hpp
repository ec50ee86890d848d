// SPDX-License-Identifier: Apache-2.0
// SGEMM's algorithms follow the variant protocol (core/variant.hpp) over the canonical GemmProblem. Each is defined
// in its own file as `extern const SgemmVariant name = {...}` and listed in registry.cpp's table.
//
// A GemmProblem's LiveOperands (core/problem.hpp) are given by the emulation (FG_SGEMM_OZAKI_INT8) to the graph it
// keeps for a call outside a capture: its own kernels read the addresses and the scalars there, and the FP32 products
// it captures into that graph are given them too. Of those, cuBLAS's (FG_SGEMM_CUBLAS) reads the scalars there, and
// the addresses where `live_addresses` (cublas.hpp); the other variants read the problem's own values, so the
// emulation captures their products again for other operands.
#pragma once

#include "core/problem.hpp"
#include "core/variant.hpp"
#include "fastgemm/fastgemm.h"
#include "sgemm/emulation_report.hpp"

namespace fastgemm::detail {

using SgemmVariant = Variant<GemmProblem, fg_sgemm_algo_t>;

// RunArgs::fallback of SGEMM's emulation: the variant that computes the problem in FP32 where the emulation declines
// its operands on the device, AUTO's choice among those that need no workspace and read no operand (so that it can
// run on any operands, inside the emulation's graph), chosen by the registry when it may choose the emulation.
struct FallbackVariant {
  const SgemmVariant *variant = nullptr;
};

// RunArgs::report of SGEMM: the emulation, the one variant that reports, tells there what it chose for the product
// (fg_get_last_sgemm_emulation); the others leave it as it is.
struct VariantReport {
  EmulationReport *emulation = nullptr;  // never nullptr in a report handed to a variant
};

// Enqueues the problem in FP32 on args.stream with args.fallback's variant (args.cublas where that variant calls
// cuBLAS), and stores its id in *algo: the emulation's branch for operands it declines.
Status run_fp32_fallback(const GemmProblem &problem, const RunArgs &args, fg_sgemm_algo_t *algo);

}  // namespace fastgemm::detail
