// The two ops the bench measures: each turns the command line into a Plan.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "options.hpp"
#include "runner.hpp"

namespace bench {

const AlgoFamily &sgemm_algos();
// Throws UsageError.
Plan make_sgemm_plan(const Options &options);

const AlgoFamily &rowmean_algos();
// Throws UsageError.
Plan make_rowmean_plan(const Options &options);

// `fastgemm-bench overhead`: problems as {m, n, k, batch}, each timed in `loops` loops.
struct OverheadPlan {
  std::vector<std::array<int64_t, 4>> shapes;
  int loops = 0;
};
// Throws UsageError.
OverheadPlan make_overhead_plan(const Options &options);
// Prints the table, writes the requested reports; returns the exit status (0, or 1 after a failure).
int run_overhead(const OverheadPlan &plan, const Options &options, fg_handle_t handle);

}  // namespace bench
