// SPDX-License-Identifier: Apache-2.0
#include "vendor.hpp"

#include <string>

#include "gpu.hpp"

namespace bench {

void check_cublas(cublasStatus_t status, const char *call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw BenchError(std::string(call) + " failed: " + cublasGetStatusName(status) + " (" +
                   cublasGetStatusString(status) + ")");
}

VendorBlas::VendorBlas() {
  check_cublas(cublasCreate(&handle_), "cublasCreate");
  const cublasStatus_t math = cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH);
  if (math != CUBLAS_STATUS_SUCCESS) {
    (void)cublasDestroy(handle_);
    check_cublas(math, "cublasSetMathMode");
  }
}

// As with cudaFree: a failure here means the device is already lost, and that has been reported.
VendorBlas::~VendorBlas() { (void)cublasDestroy(handle_); }

VendorBlas &vendor_blas() {
  static VendorBlas blas;
  return blas;
}

}  // namespace bench
