// SPDX-License-Identifier: Apache-2.0
// How fastgemm-bench overhead measures: the timed loops, and the driver queries and cuBLAS handles that
// fastgemm's calls are compared with.
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "gpu.hpp"
#include "overhead.hpp"
#include "text.hpp"
#include "vendor.hpp"

namespace bench {
namespace {

// The driver functions fastgemm's call path uses.
struct Driver {
  CUresult (*pointer_get_attributes)(unsigned int, CUpointer_attribute *, void **, CUdeviceptr) = nullptr;
  CUresult (*ctx_get_current)(CUcontext *) = nullptr;
};

template <typename Function>
void look_up(const char *symbol, Function *out) {
  void *function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  check_cuda(cudaGetDriverEntryPointByVersion(symbol, &function, 12000, cudaEnableDefault, &found),
             "cudaGetDriverEntryPointByVersion");
  if (found != cudaDriverEntryPointSuccess || function == nullptr) throw BenchError(format("no driver %s", symbol));
  *out = reinterpret_cast<Function>(function);
}

const Driver &driver() {
  static const Driver table = [] {
    Driver d;
    look_up("cuPointerGetAttributes", &d.pointer_get_attributes);
    look_up("cuCtxGetCurrent", &d.ctx_get_current);
    return d;
  }();
  return table;
}

}  // namespace

void query_all_attributes(const void *pointer) {
  unsigned long long values[6] = {};
  CUpointer_attribute names[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_IS_MANAGED,  CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE,  CU_POINTER_ATTRIBUTE_BUFFER_ID};
  void *slots[] = {&values[0], &values[1], &values[2], &values[3], &values[4], &values[5]};
  if (driver().pointer_get_attributes(6, names, slots, reinterpret_cast<CUdeviceptr>(pointer)) != CUDA_SUCCESS)
    throw BenchError("cuPointerGetAttributes failed");
}

void query_buffer_id(const void *pointer) {
  unsigned long long id = 0;
  CUpointer_attribute name = CU_POINTER_ATTRIBUTE_BUFFER_ID;
  void *slot = &id;
  if (driver().pointer_get_attributes(1, &name, &slot, reinterpret_cast<CUdeviceptr>(pointer)) != CUDA_SUCCESS)
    throw BenchError("cuPointerGetAttributes failed");
}

void query_current_context(CUcontext *context) {
  if (driver().ctx_get_current(context) != CUDA_SUCCESS) throw BenchError("cuCtxGetCurrent failed");
}

StreamBlas::StreamBlas() {
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  try {
    check_cublas(cublasCreate(&handle_), "cublasCreate");
    check_cublas(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    check_cublas(cublasSetStream(handle_, stream_), "cublasSetStream");
  } catch (...) {
    release();
    throw;
  }
}

void StreamBlas::release() {
  if (handle_ != nullptr) (void)cublasDestroy(handle_);
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  handle_ = nullptr;
  stream_ = nullptr;
}

ConfiguredBlas::ConfiguredBlas() {
  check_cublas(cublasCreate(&handle_), "cublasCreate");
  try {
    check_cublas(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    check_cuda(cudaMallocAsync(&workspace_, kWorkspaceBytes, nullptr), "cudaMallocAsync");
    check_cuda(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
    check_cublas(cublasSetStream(handle_, nullptr), "cublasSetStream");
    check_cublas(cublasSetWorkspace(handle_, workspace_, kWorkspaceBytes), "cublasSetWorkspace");
  } catch (...) {
    release();
    throw;
  }
}

void ConfiguredBlas::release() {
  if (handle_ != nullptr) (void)cublasDestroy(handle_);
  if (workspace_ != nullptr) (void)cudaFreeAsync(workspace_, nullptr);
  handle_ = nullptr;
  workspace_ = nullptr;
}

std::vector<Cost> measure_costs(const std::vector<std::function<void()>> &calls, int loops, bool enqueues,
                                const std::vector<cudaStream_t> &streams) {
  cudaEvent_t start = nullptr, stop = nullptr;
  check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<std::vector<double>> host_us(calls.size()), device_us(calls.size());
  try {
    for (const std::function<void()> &call : calls) {
      for (int i = 0; i < 3; ++i) call();  // warm-up: first-call work stays out of the figures
    }
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    for (int loop = 0; loop < loops; ++loop) {
      for (size_t c = 0; c < calls.size(); ++c) {
        const cudaStream_t stream = c < streams.size() ? streams[c] : nullptr;
        if (enqueues) check_cuda(cudaEventRecord(start, stream), "cudaEventRecord");
        const auto begin = std::chrono::steady_clock::now();
        for (int i = 0; i < kCallsPerLoop; ++i) calls[c]();
        const auto end = std::chrono::steady_clock::now();
        if (enqueues) check_cuda(cudaEventRecord(stop, stream), "cudaEventRecord");
        check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        host_us[c].push_back(std::chrono::duration<double, std::micro>(end - begin).count() / kCallsPerLoop);
        if (enqueues) {
          float ms = 0;
          check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
          device_us[c].push_back(1e3 * ms / kCallsPerLoop);
        }
      }
    }
  } catch (...) {
    (void)cudaEventDestroy(start);
    (void)cudaEventDestroy(stop);
    throw;
  }
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  const auto median = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
  };
  std::vector<Cost> costs(calls.size());
  for (size_t c = 0; c < calls.size(); ++c) {
    costs[c].host_us_median = median(host_us[c]);
    costs[c].host_us_min = *std::min_element(host_us[c].begin(), host_us[c].end());
    if (enqueues) costs[c].device_us = median(device_us[c]);
  }
  return costs;
}

}  // namespace bench
