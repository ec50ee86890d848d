// SPDX-License-Identifier: Apache-2.0
// The table of rowmean_matvec variants, AUTO's choice among them, and the entry point capi/ calls.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/context.hpp"
#include "rowmean/variant.hpp"

namespace fastgemm::detail {

// The variant with this id, or nullptr when the build carries none.
const RowmeanVariant *find_rowmean_variant(fg_rowmean_algo_t id);

// AUTO's ordered preference for the problem on the device, fastest first: the fastest algorithms, then staged, which
// runs every problem, then the workspace-free algorithms in their order of speed, for a caller's workspace that holds
// no more. Pure: it reads nothing but its arguments.
Preference<fg_rowmean_algo_t> rowmean_auto_preference(const RowmeanProblem &problem, const DeviceInfo &device);

using RowmeanSelection = Selection<RowmeanProblem, fg_rowmean_algo_t>;

// The variant that runs the problem and the workspace it asks for: the selected algorithm, or, for FG_ROWMEAN_AUTO,
// the first of rowmean_auto_preference that can implement the problem within `limits`.
Status select_rowmean_variant(const RowmeanProblem &problem, const DeviceInfo &device, fg_rowmean_algo_t selected,
                              const AutoLimits &limits, RowmeanSelection *out);

// The workspace the selected algorithm (AUTO resolved) asks for on the problem, or not_supported when it cannot
// run it.
Status rowmean_workspace_bytes(const RowmeanProblem &problem, const DeviceInfo &device, fg_rowmean_algo_t selected,
                               size_t *bytes);

// Runs a canonical problem (L, M, N >= 1) on the context's stream with the selected algorithm, AUTO resolved within
// the context's workspace, and stores the algorithm that ran in *ran.
Status run_rowmean(const RowmeanProblem &problem, Context &context, fg_rowmean_algo_t selected, fg_rowmean_algo_t *ran);

}  // namespace fastgemm::detail
