// SPDX-License-Identifier: Apache-2.0
// The pipelined kernel's tilings fastgemm-tune compares, each compiled in one of tilings_*.cu.
#pragma once

#include <cstdint>
#include <vector>

#include "core/context.hpp"
#include "core/problem.hpp"
#include "core/status.hpp"
#include "sgemm/split_k.cuh"

namespace tune {

struct TilingEntry {
  const char *name;
  int block_m, block_n;
  fastgemm::detail::Status (*supported)(const fastgemm::detail::GemmProblem &, const fastgemm::detail::DeviceInfo &);
  fastgemm::detail::Status (*run)(const fastgemm::detail::GemmProblem &, fastgemm::detail::Context &, int64_t splits);
};

void add_large_tilings(std::vector<TilingEntry> &entries);
void add_small_tilings(std::vector<TilingEntry> &entries);

// Tiling T's product in `splits` slices of k, through the context's workspace.
template <typename T>
fastgemm::detail::Status run_tiling(const fastgemm::detail::GemmProblem &p, fastgemm::detail::Context &context,
                                    int64_t splits) {
  void *workspace = nullptr;
  const size_t bytes = fastgemm::detail::pipeline::split_workspace_bytes<T>(p, splits);
  if (bytes > 0) FG_RETURN_IF_ERROR(context.workspace(bytes, &workspace));
  return fastgemm::detail::pipeline::run_split<T>(p, context.stream(), workspace, splits);
}

}  // namespace tune

// One entry for tiling type T, named by its parameters.
#define TUNE_ENTRY(T)                                                                 \
  tune::TilingEntry {                                                                 \
#T, T::kBlockM, T::kBlockN, fastgemm::detail::pipeline::pipelined_supported < T>, \
        [](const fastgemm::detail::GemmProblem &p, fastgemm::detail::Context &c,      \
           int64_t splits) { return tune::run_tiling<T>(p, c, splits); }              \
  }
