// SPDX-License-Identifier: Apache-2.0
// Row means of the N x L x M input into a dense (N*L) vector, for the two-pass algorithm, which keeps the
// means in a workspace: one warp per row, lanes walking the row with stride 32 so that a warp's loads
// are contiguous, sums in double, a shuffle tree at the end.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "core/problem.hpp"
#include "core/status.hpp"

namespace fastgemm::detail {

// means[r] = (1/M) * sum_m input[r * M + m] for r < rows, enqueued on `stream`.
template <typename T>
Status row_means(const T *input, T *means, int64_t rows, int64_t M, cudaStream_t stream);

}  // namespace fastgemm::detail
