// SPDX-License-Identifier: Apache-2.0
// What the bench measures: sgemm and rowmean turn the command line into a Plan for the runner; overhead and
// accuracy into plans of their own.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "distributions.hpp"
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
  bool profile = false;  // --profile: also a sampling profile of each problem's loops
};
// Throws UsageError.
OverheadPlan make_overhead_plan(const Options &options);
// Prints the table, writes the requested reports; returns the exit status (0, or 1 after a failure).
int run_overhead(const OverheadPlan &plan, const Options &options, fg_handle_t handle);

// `fastgemm-bench accuracy`: each depth with each distribution, through each fastgemm algorithm (ids) in the
// emulated mode, beside cuBLAS FP32.
struct AccuracyPlan {
  std::vector<int64_t> depths;
  std::vector<Distribution> distributions;
  std::vector<int> algos;
};
// Throws UsageError.
AccuracyPlan make_accuracy_plan(const Options &options);
// Prints the rows and the summary, writes the requested reports; returns the exit status: 0 when every
// fastgemm row met the contract (or declined a problem), 1 otherwise.
int run_accuracy(const AccuracyPlan &plan, const Options &options, fg_handle_t handle);

}  // namespace bench
