// The table of rowmean_matvec variants, AUTO's choice among them, and the entry point capi/ calls.
#pragma once

#include "rowmean/variant.hpp"

namespace fastgemm::detail {

const RowmeanVariant *find_rowmean_variant(fg_rowmean_algo_t id);

// AUTO's choice for the problem on the device. Pure: it reads nothing but its arguments.
fg_rowmean_algo_t choose_rowmean_algo(const RowmeanProblem &problem, const DeviceInfo &device);

// Runs a canonical problem (L, M, N >= 1) with the selected algorithm, AUTO resolved, and stores the
// algorithm that ran in *ran.
Status run_rowmean(const RowmeanProblem &problem, Context &context, fg_rowmean_algo_t selected, fg_rowmean_algo_t *ran);

}  // namespace fastgemm::detail
