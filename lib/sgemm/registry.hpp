// SPDX-License-Identifier: Apache-2.0
// The table of SGEMM variants this build carries, AUTO's choice among them, and the one entry point
// capi/ calls with a canonical problem.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "core/context.hpp"
#include "sgemm/variant.hpp"

namespace fastgemm::detail {

// The variant with this id, or nullptr when the build carries none.
const SgemmVariant *find_sgemm_variant(fg_sgemm_algo_t id);

// AUTO's ordered preference for the problem on the device, fastest first; it ends with cuBLAS, which runs every
// problem with no workspace of its own. Pure: it reads nothing but its arguments.
Preference<fg_sgemm_algo_t> sgemm_auto_preference(const GemmProblem &problem, const DeviceInfo &device);

using SgemmSelection = Selection<GemmProblem, fg_sgemm_algo_t>;

// The variant that runs the problem and the workspace it asks for: the selected algorithm, or, for FG_SGEMM_AUTO, the
// first of sgemm_auto_preference that can implement the problem within `limits`. A forced algorithm that cannot
// honour the problem's FG_REPRODUCIBLE_SHAPE is refused, never replaced.
Status select_sgemm_variant(const GemmProblem &problem, const DeviceInfo &device, fg_sgemm_algo_t selected,
                            const AutoLimits &limits, SgemmSelection *out);

// The workspace the selected algorithm (AUTO resolved) asks for on the problem, or not_supported when it cannot
// run it.
Status sgemm_workspace_bytes(const GemmProblem &problem, const DeviceInfo &device, fg_sgemm_algo_t selected,
                             size_t *bytes);

// Runs a canonical problem (m, n, k, batch >= 1, alpha != 0) on the context's stream with the selected algorithm,
// AUTO resolved within the context's workspace, and stores the algorithm that ran in *ran. An emulating variant
// reports to `report` (may be nullptr); where it chooses on the device, *ran is the emulation and the report says
// what the device chose, once it has.
Status run_sgemm(const GemmProblem &problem, Context &context, fg_sgemm_algo_t selected, EmulationReport *report,
                 fg_sgemm_algo_t *ran);

// C := beta * C over the problem's C (the k == 0 or alpha == 0 case); beta == 0 writes zeros without
// reading C.
Status scale_c(const GemmProblem &problem, cudaStream_t stream);

}  // namespace fastgemm::detail
