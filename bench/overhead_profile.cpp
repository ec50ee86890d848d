// SPDX-License-Identifier: Apache-2.0
// fastgemm-bench overhead --profile: where the host time of each call of a problem goes, by shared object and
// by symbol, from a sampling profile of the same loops as the timed ones.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "gpu.hpp"
#include "overhead.hpp"
#include "text.hpp"

namespace bench {

void profile_calls(SamplingProfile &profile, int loops, const std::string &problem,
                   const std::vector<ProfiledCall> &calls, std::vector<Entry> &entries) {
  struct Result {
    double host_us = 0;
    size_t samples = 0;
    std::vector<SamplingProfile::Count> objects, symbols;
  };
  std::vector<Result> results(calls.size());
  for (size_t c = 0; c < calls.size(); ++c) {
    for (int i = 0; i < 3; ++i) calls[c].call();
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    profile.clear();
    double seconds = 0;
    const int profiled_loops = kProfileLoopFactor * loops;
    for (int loop = 0; loop < profiled_loops; ++loop) {
      const auto begin = std::chrono::steady_clock::now();
      profile.start();
      for (int i = 0; i < kCallsPerLoop; ++i) calls[c].call();
      profile.stop();
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      check_cuda(cudaStreamSynchronize(calls[c].stream), "cudaStreamSynchronize");
    }
    results[c].host_us = 1e6 * seconds / (static_cast<double>(profiled_loops) * kCallsPerLoop);
    results[c].samples = profile.samples();
    results[c].objects = profile.by_object();
    results[c].symbols = profile.top_symbols(200);
  }
  const auto per_call = [](const Result &r, size_t samples) {
    return r.samples == 0 ? 0.0 : r.host_us * static_cast<double>(samples) / static_cast<double>(r.samples);
  };
  const auto samples_of = [](const std::vector<SamplingProfile::Count> &rows, const std::string &object,
                             const std::string &symbol) {
    for (const SamplingProfile::Count &row : rows)
      if (row.object == object && row.symbol == symbol) return row.samples;
    return size_t{0};
  };
  std::printf("\nprofile, %s: host us per call by shared object (%s: %zu samples)\n", problem.c_str(),
              calls[0].name.c_str(), results[0].samples);
  for (size_t c = 0; c < calls.size(); ++c) {
    std::printf("  %-44s %7.3f us/call, %zu samples:", calls[c].name.c_str(), results[c].host_us, results[c].samples);
    for (const SamplingProfile::Count &row : results[c].objects) {
      const double us = per_call(results[c], row.samples);
      if (us >= 0.01) std::printf(" %s %.3f;", row.object.c_str(), us);
      Entry entry{format("profile: %s: %s", calls[c].name.c_str(), row.object.c_str()), problem, "", Cost{}};
      entry.cost.host_us_median = entry.cost.host_us_min = us;
      entries.push_back(std::move(entry));
    }
    std::printf("\n");
  }
  // Each call's symbols against the first call's, by their time per call: what the call adds, and where.
  for (size_t c = 1; c < calls.size(); ++c) {
    struct Excess {
      const SamplingProfile::Count *row;
      double us, base_us;
    };
    std::vector<Excess> excess;
    for (const SamplingProfile::Count &row : results[c].symbols) {
      const double base = per_call(results[0], samples_of(results[0].symbols, row.object, row.symbol));
      excess.push_back({&row, per_call(results[c], row.samples), base});
    }
    std::stable_sort(excess.begin(), excess.end(),
                     [](const Excess &x, const Excess &y) { return x.us - x.base_us > y.us - y.base_us; });
    std::printf("  %s over %s, largest excesses (us per call: this call, %s, difference):\n", calls[c].name.c_str(),
                calls[0].name.c_str(), calls[0].name.c_str());
    for (size_t i = 0; i < excess.size() && i < 12; ++i)
      std::printf("    %-22s %-64s %6.3f %6.3f %+6.3f\n", excess[i].row->object.c_str(), excess[i].row->symbol.c_str(),
                  excess[i].us, excess[i].base_us, excess[i].us - excess[i].base_us);
  }
  std::fflush(stdout);
}

}  // namespace bench
