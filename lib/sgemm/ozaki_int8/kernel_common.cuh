// SPDX-License-Identifier: Apache-2.0
// What the kernels of FG_SGEMM_OZAKI_INT8 share: their block size and grid limit, and the reading of the operands'
// addresses and the scalars where a kept graph's call gives them at run time (LiveOperands).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/problem.hpp"
#include "sgemm/ozaki_int8/kernels.hpp"

namespace fastgemm::detail::ozaki {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
// Enough blocks to fill the device several times over; the kernels loop over the rest.
constexpr int64_t kMaxBlocks = 65536;

__host__ __device__ constexpr int64_t divide_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The problem as this launch computes it: its addresses and scalars, read from p.live where given.
__device__ __forceinline__ GemmProblem live_problem(GemmProblem p) {
  if (p.live != nullptr) {
    const LiveOperands live = *p.live;
    p.a.data = live.a;
    p.b.data = live.b;
    p.c = live.c;
    p.alpha = live.alpha;
    p.beta = live.beta;
  }
  return p;
}

// The lines as this launch reads them.
__device__ __forceinline__ Lines live_lines(Lines lines) {
  if (lines.live_data != nullptr) lines.data = *lines.live_data;
  return lines;
}

// A line's facts in 32-bit words: the kernels copy them a word a thread.
static_assert(sizeof(LineFacts) % sizeof(uint32_t) == 0, "the facts are copied in words");
constexpr int kFactWords = static_cast<int>(sizeof(LineFacts) / sizeof(uint32_t));

// constants.scale_target[count] for a count that differs between threads (a thread a count), without indexing the
// constants by a register (which would copy a kernel parameter's constants to local memory).
__device__ __forceinline__ double scale_target_at(const CertificateConstants &constants, int count) {
  double target = 0.0;
#pragma unroll
  for (int at = kMinModuli; at <= kMaxModuli; ++at)
    if (count == at) target = constants.scale_target[at];
  return target;
}

}  // namespace fastgemm::detail::ozaki
