// SPDX-License-Identifier: Apache-2.0
// The FP64 tiles' product at FG_REPRODUCIBLE_SHAPE: each element of C a function of its row of op(A), its column of
// op(B), k, alpha, beta and its old value alone (shape_reproducible.cu gives the sequence), on devices of compute
// capability 8.0 and later (the FP64 tensor cores' mma); older ones keep cuBLAS's DGEMM.
#pragma once

#include <cuda_runtime_api.h>

#include "core/problem.hpp"
#include "core/status.hpp"

namespace fastgemm::blas_dgemm {

// Whether a device of this compute capability runs shape_reproducible_dgemm.
inline bool shape_reproducible_supported(int compute_capability_major) { return compute_capability_major >= 8; }

// C := alpha op(A) op(B) + beta C (row-major, one product, operands in device memory of the current device), enqueued
// on `stream`; beta == 0 never reads C.
detail::Status shape_reproducible_dgemm(const detail::BasicGemmProblem<double> &problem, cudaStream_t stream);

}  // namespace fastgemm::blas_dgemm
