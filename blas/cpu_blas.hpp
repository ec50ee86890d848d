// SPDX-License-Identifier: Apache-2.0
// The CPU's SGEMM: the system BLAS, found at run time, for the products the GPU does not take.
#pragma once

#include <cstdint>

#include "common.hpp"

namespace fastgemm_blas {

struct CpuBlas {
  FortranSgemm sgemm = nullptr;                   // nullptr: the library found has no sgemm_
  CblasSgemm cblas_sgemm = nullptr;               // nullptr: cblas_sgemm goes through sgemm (or the own loop)
  void *library = nullptr;                        // where the error handlers are looked up after the program's own
  const char *name = "fastgemm_blas's own loop";  // for the log lines
};

// Looked up on the first call that needs it, once per process: the next definition of sgemm_ or
// cblas_sgemm after this library (the BLAS the program was linked with or preloaded after it), else the
// library FASTGEMM_BLAS_FALLBACK names, else libblas.so.3 (Debian's and Ubuntu's alternatives link, which
// points at the reference BLAS, OpenBLAS, BLIS or ATLAS), else libopenblas.so.0. With none of them both
// pointers are null, and the products run in plain_sgemm.
const CpuBlas &cpu_blas();

// The last resort: column-major, the reference's order of operations.
void plain_sgemm(bool a_trans, bool b_trans, int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                 const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

// A definition of NAME visible to the program (its own, or of a library it loaded globally), else the CPU
// BLAS library's: netlib's error handlers xerbla_ and cblas_xerbla, and CBLAS's RowMajorStrg.
void *error_symbol(const char *name);

}  // namespace fastgemm_blas
