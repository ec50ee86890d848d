// SPDX-License-Identifier: Apache-2.0
// The pipelined kernel's tilings fastgemm-tune compares, each compiled in one of tilings_*.cu.
#pragma once

#include <cstdint>
#include <vector>

#include "core/context.hpp"
#include "core/problem.hpp"
#include "core/status.hpp"

namespace tune {

struct TilingEntry {
  const char *name;
  int block_m, block_n;
  fastgemm::detail::Status (*supported)(const fastgemm::detail::GemmProblem &, const fastgemm::detail::DeviceInfo &);
  fastgemm::detail::Status (*run)(const fastgemm::detail::GemmProblem &, fastgemm::detail::Context &, int64_t splits);
};

void add_large_tilings(std::vector<TilingEntry> &entries);
void add_small_tilings(std::vector<TilingEntry> &entries);

}  // namespace tune

// One entry for tiling type T, named by its parameters.
#define TUNE_ENTRY(T)                                                                             \
  tune::TilingEntry {                                                                             \
#T, T::kBlockM, T::kBlockN, fastgemm::detail::pipeline::pipelined_supported < T>,             \
        [](const fastgemm::detail::GemmProblem &p, fastgemm::detail::Context &c,                  \
           int64_t splits) { return fastgemm::detail::pipeline::run_pipelined<T>(p, c, splits); } \
  }
