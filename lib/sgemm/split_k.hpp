// The split-K variant's tile shape and split count, shared with AUTO's choice and the tests.
#pragma once

#include <cstdint>

#include "core/device.hpp"
#include "core/problem.hpp"
#include "sgemm/pipeline_tilings.hpp"

namespace fastgemm::detail {

using SplitKTiling = pipeline::LargeTiling;

// How many slices of k FG_SGEMM_SPLIT_K cuts the problem into on the device (1: none).
int64_t split_k_count(const GemmProblem &p, const DeviceInfo &device);

}  // namespace fastgemm::detail
