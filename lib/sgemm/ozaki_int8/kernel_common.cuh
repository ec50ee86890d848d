// SPDX-License-Identifier: Apache-2.0
// What the kernels of FG_SGEMM_OZAKI_INT8 share: their block size and grid limit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace fastgemm::detail::ozaki {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
// Enough blocks to fill the device several times over; the kernels loop over the rest.
constexpr int64_t kMaxBlocks = 65536;

__host__ __device__ constexpr int64_t divide_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace fastgemm::detail::ozaki
