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

// C := alpha P + beta C with alpha and beta read from device memory when the kernel runs (cuBLAS's device pointer
// mode): P the product op(A) op(B), dense (m x n, ld m, batches m n apart). Each element is computed in double and
// rounded once; beta == 0 reads no C, alpha == 0 no P (NaN or Inf there never reaches C).
cudaError_t scale_product(float *c, int64_t ldc, int64_t stride_c, const float *product, int64_t m, int64_t n,
                          int64_t batch, const float *alpha, const float *beta, cudaStream_t stream);

}  // namespace fastgemm_cublas
