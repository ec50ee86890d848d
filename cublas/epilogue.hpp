// SPDX-License-Identifier: Apache-2.0
// cuBLASLt's BIAS, RELU and RELU_BIAS epilogues, applied to D once fastgemm has computed alpha op(A) op(B) + beta C in
// it: D := relu?(D + bias), bias broadcast along each column (its length is D's rows), as cuBLASLt does.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace fastgemm_cublas {

// Column-major D (rows x cols, ld), `batch` matrices `stride` apart; bias null for RELU alone, else `bias_stride`
// apart per batch. Enqueued on `stream`; returns the launch's status.
cudaError_t apply_epilogue(float *d, int64_t rows, int64_t cols, int64_t ld, int64_t stride, int64_t batch,
                           const float *bias, int64_t bias_stride, bool relu, cudaStream_t stream);

}  // namespace fastgemm_cublas
