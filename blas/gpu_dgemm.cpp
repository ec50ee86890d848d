// SPDX-License-Identifier: Apache-2.0
// The double-precision path: libfastgemm_blas_dgemm.so (blas/dgemm/dgemm_host.h says why it is a library of its
// own), opened on the first double-precision product the GPU takes, as libfastgemm.so is for single precision. Its
// fastgemm_blas_dgemm_host takes operands in any memory (host arrays of any size, device memory too) and computes in
// FP64 on the tiles of the host engine that fg_sgemm_host uses (its own tiles at the drop-in's reproducible setting,
// cuBLAS's DGEMM otherwise).
#include <atomic>
#include <string>

#include "blas/dgemm/dgemm_host.h"
#include "gpu.hpp"
#include "gpu_handles.hpp"
#include "preload/loading.hpp"

namespace fastgemm_blas {
namespace {

struct DoubleLibrary : GpuLibrary<fastgemm_blas_dgemm_t> {
  decltype(&fastgemm_blas_dgemm_host) gemm_host = nullptr;
};

const DoubleLibrary *double_library() {
  static const DoubleLibrary *const loaded = load_gpu_library<DoubleLibrary>(
      FASTGEMM_BLAS_DGEMM_LIBRARY, "fastgemm_blas_dgemm_", "DGEMM",
      [](void *library, DoubleLibrary *gpu, std::string *missing) {
        fastgemm_preload::bind(library, "fastgemm_blas_dgemm_host", &gpu->gemm_host, missing);
      });
  return loaded;
}

const GpuLibrary<fastgemm_blas_dgemm_t> *double_handles() { return double_library(); }

std::atomic<bool> g_cpu_only{false};
thread_local ThreadHandle<fastgemm_blas_dgemm_t> t_handle(double_handles, &g_cpu_only, "DGEMM");

}  // namespace

template <>
bool gpu_available<double>() {
  return t_handle.get() != nullptr;
}

bool run_on_gpu(const char *caller, int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, double alpha,
                const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
  const fastgemm_blas_dgemm_t handle = t_handle.get();
  if (handle == nullptr) return false;
  const DoubleLibrary &gpu = *double_library();
  const fg_status_t status = gpu.gemm_host(handle, static_cast<fg_layout_t>(layout), static_cast<fg_op_t>(transa),
                                           static_cast<fg_op_t>(transb), m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  return gpu_product_done<fastgemm_blas_dgemm_t>(gpu, caller, m, n, k, "fastgemm_blas_dgemm_host", status, beta == 0.0);
}

}  // namespace fastgemm_blas
