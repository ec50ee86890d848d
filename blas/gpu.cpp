// SPDX-License-Identifier: Apache-2.0
// The drop-in's settings, the rule of what goes to the GPU, and the single-precision path: libfastgemm.so, opened on
// the first single-precision product the GPU takes (gpu_handles.hpp), its fg_sgemm_host and fg_sgemm.
#include "gpu.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime_api.h>

#include "common.hpp"
#include "fastgemm/fastgemm.h"
#include "gpu_handles.hpp"
#include "preload/loading.hpp"

namespace fastgemm_blas {
namespace {

// The default rule: the GPU takes products of at least 2 * 512^3 flops whose every dimension is at least
// 128. Below 512^3 a multi-threaded CPU BLAS finishes within about a millisecond (OpenBLAS runs 0.2
// TFLOPS on the H100 machine's 16 cores), about what the GPU path's synchronization, pinned staging and
// transfers cost; a dimension under 128 makes the product thin, with fewer than about 20 flops per byte
// that crosses PCIe, where the copies alone take longer than the CPU's product.
constexpr double default_min_flops = 2.0 * 512 * 512 * 512;
constexpr int64_t default_min_dimension = 128;

// libfastgemm.so's functions: the handles' (gpu_handles.hpp) and the products'.
struct SingleLibrary : GpuLibrary<fg_handle_t> {
  decltype(&fg_sgemm) sgemm = nullptr;
  decltype(&fg_sgemm_host) sgemm_host = nullptr;
  decltype(&fg_get_stream) get_stream = nullptr;
  decltype(&fg_set_stream) set_stream = nullptr;
};

const SingleLibrary *single_library() {
  static const SingleLibrary *const loaded = load_gpu_library<SingleLibrary>(
      FASTGEMM_SHARED_LIBRARY, "fg_", "SGEMM", [](void *library, SingleLibrary *gpu, std::string *missing) {
        fastgemm_preload::bind(library, "fg_sgemm", &gpu->sgemm, missing);
        fastgemm_preload::bind(library, "fg_sgemm_host", &gpu->sgemm_host, missing);
        fastgemm_preload::bind(library, "fg_get_stream", &gpu->get_stream, missing);
        fastgemm_preload::bind(library, "fg_set_stream", &gpu->set_stream, missing);
      });
  return loaded;
}

const GpuLibrary<fg_handle_t> *single_handles() { return single_library(); }

std::atomic<bool> g_cpu_only{false};
thread_local ThreadHandle<fg_handle_t> t_handle(single_handles, &g_cpu_only, "SGEMM");

bool on_device(const CudaRuntime &cuda, const void *pointer, int device) {
  cudaPointerAttributes attributes = {};
  if (cuda.pointer_attributes(&attributes, pointer) != cudaSuccess) {
    (void)cuda.get_last_error();
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice && attributes.device == device;
}

}  // namespace

const Settings &settings() {
  static const Settings read = [] {
    Settings s;
    s.min_flops = default_min_flops;
    const char *log = std::getenv("FASTGEMM_LOG");
    s.log = log != nullptr && std::strcmp(log, "1") == 0;
    const char *text = std::getenv("FASTGEMM_BLAS_MIN_FLOPS");
    if (text != nullptr && *text != '\0') {
      if (fastgemm_preload::read_min_flops(text, &s.min_flops)) {
        s.default_rule = false;
      } else if (s.log) {
        std::fprintf(stderr, "fastgemm_blas: FASTGEMM_BLAS_MIN_FLOPS=%s is no number >= 0; the default rule applies\n",
                     text);
      }
    }
    s.devices = std::getenv("FASTGEMM_BLAS_DEVICES");
    s.fallback = std::getenv("FASTGEMM_BLAS_FALLBACK");
    return s;
  }();
  return read;
}

bool wants_gpu(int64_t m, int64_t n, int64_t k) {
  const Settings &s = settings();
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (flops < s.min_flops) return false;
  return !s.default_rule || std::min({m, n, k}) >= default_min_dimension;
}

template <>
bool gpu_available<float>() {
  return t_handle.get() != nullptr;
}

bool run_on_gpu(const char *caller, int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha,
                const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  const fg_handle_t handle = t_handle.get();
  if (handle == nullptr) return false;
  const SingleLibrary &gpu = *single_library();
  const auto fl = static_cast<fg_layout_t>(layout);
  const auto ta = static_cast<fg_op_t>(transa), tb = static_cast<fg_op_t>(transb);
  // Operands all in the handle's device's memory go to fg_sgemm; any other mix to fg_sgemm_host.
  const int device = t_handle.device();
  const bool all_device =
      device >= 0 && on_device(gpu.cuda, A, device) && on_device(gpu.cuda, B, device) && on_device(gpu.cuda, C, device);
  fg_status_t status = FG_STATUS_SUCCESS;
  cudaStream_t stream = nullptr;
  if (all_device) {
    status = gpu.sgemm(handle, fl, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    if (status == FG_STATUS_SUCCESS && gpu.get_stream(handle, &stream) == FG_STATUS_SUCCESS &&
        gpu.cuda.stream_synchronize(stream) != cudaSuccess)
      status = FG_STATUS_CUDA_ERROR;
  } else {
    status = gpu.sgemm_host(handle, fl, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  }
  return gpu_product_done<fg_handle_t>(gpu, caller, m, n, k, all_device ? "fg_sgemm" : "fg_sgemm_host", status,
                                       beta == 0.0f);
}

void *float_product_state() { return t_handle.get(); }

fg_status_t float_device_product(void *state, cudaStream_t stream, fg_op_t transa, fg_op_t transb, int64_t m, int64_t n,
                                 int64_t k, float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                                 float beta, float *C, int64_t ldc) {
  const auto handle = static_cast<fg_handle_t>(state);
  const SingleLibrary &gpu = *single_library();
  cudaStream_t previous = nullptr;
  fg_status_t status = gpu.get_stream(handle, &previous);
  if (status != FG_STATUS_SUCCESS) return status;
  if (previous != stream && (status = gpu.set_stream(handle, stream)) != FG_STATUS_SUCCESS) return status;
  status = gpu.sgemm(handle, FG_ROW_MAJOR, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  if (previous != stream) {
    const fg_status_t restored = gpu.set_stream(handle, previous);
    if (status == FG_STATUS_SUCCESS) status = restored;
  }
  return status;
}

}  // namespace fastgemm_blas
