// SPDX-License-Identifier: Apache-2.0
// What FG_SGEMM_CUBLAS's product reads from a GemmProblem's LiveOperands, for the kept graphs that capture it.
#pragma once

#include "core/problem.hpp"

namespace fastgemm::detail {

// Whether cuBLAS's product, given LiveOperands and `live_addresses`, can read the addresses there too, not only alpha
// and beta: its batched entry point over one product, whose arrays of one pointer are the LiveOperands' own fields,
// so that one capture serves every address a launch publishes. One product whose sizes fit cuBLAS's 32-bit entry
// points. That entry point chooses its kernels without the addresses, and not always cublasSgemm's (measured on the
// H100: the same kernels, bits and speed at 4096^3 and 8192^3, but 1.7 times slower at 1024 x 2048 x 8192 and other
// bits at 4097^3): the caller compares the kernels each captures (same_kernels in the emulation's graph_nodes.hpp)
// and takes it only where they are cublasSgemm's.
bool cublas_may_read_live_addresses(const GemmProblem &p);

}  // namespace fastgemm::detail
