// The two ops the bench measures: each turns the command line into a Plan.
#pragma once

#include "options.hpp"
#include "runner.hpp"

namespace bench {

const AlgoFamily &sgemm_algos();
// Throws UsageError.
Plan make_sgemm_plan(const Options &options);

const AlgoFamily &rowmean_algos();
// Throws UsageError.
Plan make_rowmean_plan(const Options &options);

}  // namespace bench
