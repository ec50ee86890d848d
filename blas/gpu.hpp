// SPDX-License-Identifier: Apache-2.0
// The GPU side of libfastgemm_blas: libfastgemm.so, loaded on the first product large enough for the GPU.
#pragma once

#include <cstdint>

namespace fastgemm_blas {

// Whether a product of these sizes goes to the GPU (FASTGEMM_BLAS_MIN_FLOPS, else the default rule).
bool wants_gpu(int64_t m, int64_t n, int64_t k);

// Whether this thread has a handle on a GPU (made on the first call that asks): false without a usable device.
bool gpu_available();

// A validated product with k > 0 and alpha != 0, in the CBLAS values, of a size wants_gpu accepted.
// Returns whether the GPU computed C; false means C is untouched and the CPU must compute it.
bool run_on_gpu(const char *caller, int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha,
                const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

}  // namespace fastgemm_blas
