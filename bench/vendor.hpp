// SPDX-License-Identifier: Apache-2.0
// cuBLAS called directly, as a program that links it instead of fastgemm calls it: the baseline every
// sgemm ratio is taken to, and the other side of `fastgemm-bench overhead`.
#pragma once

#include <cublas_v2.h>

namespace bench {

// Throw BenchError unless the cuBLAS call succeeded.
void check_cublas(cublasStatus_t status, const char *call);

// A cuBLAS handle on the legacy default stream with FP32 math (no TF32), as fastgemm's FP32 mode.
class VendorBlas {
 public:
  VendorBlas();
  ~VendorBlas();
  VendorBlas(const VendorBlas &) = delete;
  VendorBlas &operator=(const VendorBlas &) = delete;

  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

// The process's one VendorBlas, made on first use: one handle, as an application keeps one.
VendorBlas &vendor_blas();

}  // namespace bench
