// SPDX-License-Identifier: Apache-2.0
// The libraries of the GPU paths (libfastgemm.so with the CUDA runtime and cuBLAS it brings, most of a second to
// load; libfastgemm_blas_dgemm.so with the same runtime and cuBLAS) are opened on the first product the GPU takes,
// not when the process starts: a program that only makes small calls never loads them, and neither does one whose
// driver has no device. Everything of them is reached through the function pointers of GpuLibrary.
#include "gpu_handles.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda.h>

#include "blas/dgemm/dgemm_host.h"
#include "common.hpp"
#include "preload/loading.hpp"
#include "rank_device.hpp"

namespace fastgemm_blas {
namespace {

using fastgemm_preload::bind;

// This library's directory: the libraries it opens are installed (and built) beside it.
std::string own_directory() { return fastgemm_preload::directory_of(reinterpret_cast<const void *>(&own_directory)); }

// Empty when the driver has a device, else why there is none. Asked of the driver itself, because the libraries
// would load the CUDA runtime and cuBLAS (over 200 MB resident, a tenth of a second) only to learn the same. The
// driver stays loaded only where it has a device, for the runtime to use.
std::string why_no_device() {
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) return std::string("no driver, ") + dlerror();
  decltype(&cuInit) init = nullptr;
  decltype(&cuDeviceGetCount) device_count = nullptr;
  std::string missing, why;
  bind(driver, "cuInit", &init, &missing);
  bind(driver, "cuDeviceGetCount", &device_count, &missing);
  int count = 0;
  CUresult status = CUDA_SUCCESS;
  const char *failed = nullptr;
  if (!missing.empty()) {
    why = "libcuda.so.1 lacks " + missing;
  } else if ((status = init(0)) != CUDA_SUCCESS) {
    failed = "cuInit(0)";
  } else if ((status = device_count(&count)) != CUDA_SUCCESS) {
    failed = "cuDeviceGetCount";
  } else if (count <= 0) {
    why = "cuDeviceGetCount counts 0";
  }
  if (failed != nullptr) {
    // The code's name comes from the driver that answered; the toolkit's stub names none.
    decltype(&cuGetErrorName) error_name = nullptr;
    std::string unused;
    const char *text = nullptr;
    if (!bind(driver, "cuGetErrorName", &error_name, &unused) || error_name(status, &text) != CUDA_SUCCESS ||
        text == nullptr)
      text = status == CUDA_ERROR_STUB_LIBRARY ? "CUDA_ERROR_STUB_LIBRARY, the toolkit's stub libcuda.so" : "CUresult";
    why = std::string(failed) + " -> " + text + " (" + std::to_string(static_cast<int>(status)) + ")";
  }
  if (!why.empty()) dlclose(driver);
  return why;
}

// FASTGEMM_BLAS_DEVICES as a list: "all" is every device, the current one first; otherwise ordinals
// separated by commas. False when the text is neither (the library checks the ordinals themselves).
bool device_list(const CudaRuntime &cuda, const char *text, std::vector<int> *list) {
  if (std::strcmp(text, "all") == 0) {
    int current = 0, count = 0;
    if (cuda.get_device(&current) != cudaSuccess || cuda.get_device_count(&count) != cudaSuccess) return false;
    list->push_back(current);
    for (int device = 0; device < count; ++device)
      if (device != current) list->push_back(device);
    return true;
  }
  const char *next = text;
  while (true) {
    char *end = nullptr;
    const long value = std::strtol(next, &end, 10);
    if (end == next || value < 0 || value > 1023) return false;
    list->push_back(static_cast<int>(value));
    if (*end == '\0') return true;
    if (*end != ',') return false;
    next = end + 1;
  }
}

// Spreads the handle's host products over the devices FASTGEMM_BLAS_DEVICES names. A list that cannot be
// used leaves the handle on its own device (the products are the same, only slower), and FASTGEMM_LOG=1
// says why.
template <typename Handle>
void apply_device_list(const GpuLibrary<Handle> &gpu, Handle handle) {
  const char *text = settings().devices;
  if (text == nullptr || *text == '\0') return;
  std::vector<int> list;
  const fg_status_t status = device_list(gpu.cuda, text, &list)
                                 ? gpu.handles.set_devices(handle, list.data(), static_cast<int>(list.size()))
                                 : FG_STATUS_INVALID_VALUE;
  if (status != FG_STATUS_SUCCESS && settings().log)
    std::fprintf(stderr,
                 "fastgemm_blas: FASTGEMM_BLAS_DEVICES=%s is not used (%s%s%s); the thread's device runs alone\n", text,
                 gpu.handles.status_name(status), list.empty() ? "" : ": ",
                 list.empty() ? "no list of ordinals or \"all\"" : gpu.handles.last_error_message());
}

// FASTGEMM_BLAS_REPRODUCIBLE (see blas.cpp). The setting cannot fail on a handle just made; should it, the handle
// keeps the library's setting, and FASTGEMM_LOG=1 says so.
template <typename Handle>
void apply_reproducibility(const GpuLibrary<Handle> &gpu, Handle handle) {
  const char *text = std::getenv("FASTGEMM_BLAS_REPRODUCIBLE");
  if (text != nullptr && std::strcmp(text, "0") == 0) return;
  const fg_status_t status = gpu.handles.set_reproducibility(handle, FG_REPRODUCIBLE_SHAPE);
  if (status != FG_STATUS_SUCCESS && settings().log)
    std::fprintf(stderr, "fastgemm_blas: FG_REPRODUCIBLE_SHAPE is not used (%s: %s)\n", gpu.handles.status_name(status),
                 gpu.handles.last_error_message());
}

// Under MPI, with no FASTGEMM_BLAS_DEVICES, the device of the rank's local rank (rank_device.hpp); -1: the thread's
// current device. FASTGEMM_LOG=1 says which, and why not where a launcher's variable cannot be used.
int device_of_rank(const CudaRuntime &cuda) {
  if (settings().devices != nullptr && *settings().devices != '\0') return -1;
  int count = 0;
  if (cuda.get_device_count(&count) != cudaSuccess) {
    (void)cuda.get_last_error();
    count = 0;
  }
  const RankDevice chosen = rank_device([](const char *name) -> const char * { return std::getenv(name); }, count);
  if (settings().log && *chosen.variable != '\0') {
    if (chosen.device >= 0)
      std::fprintf(stderr, "fastgemm_blas: local rank %d (%s) takes device %d of %d\n", chosen.local_rank,
                   chosen.variable, chosen.device, count);
    else
      std::fprintf(stderr, "fastgemm_blas: %s=%s is no local rank (a number from 0); the thread's device runs\n",
                   chosen.variable, std::getenv(chosen.variable));
  }
  return chosen.device;
}

// A handle made on `device` (-1: the thread's current one), the thread's current device left as it was: the handle
// makes its own device current in each call. *on is the handle's device.
template <typename Handle>
fg_status_t create_on(const GpuLibrary<Handle> &gpu, int device, Handle *handle, int *on) {
  const CudaRuntime &cuda = gpu.cuda;
  int previous = -1;
  if (cuda.get_device(&previous) != cudaSuccess) {
    (void)cuda.get_last_error();
    previous = -1;
  }
  *on = previous;
  const bool switch_device = device >= 0 && previous >= 0 && device != previous;
  bool switched = false;
  if (switch_device) {
    switched = cuda.set_device(device) == cudaSuccess;
    if (!switched) (void)cuda.get_last_error();
  }
  const fg_status_t status = gpu.handles.create(handle);
  if (switched) {
    *on = device;
    if (cuda.set_device(previous) != cudaSuccess) (void)cuda.get_last_error();
  }
  return status;
}

}  // namespace

void *open_gpu_library(const char *name, const char *calls) {
  static const std::string no_device = why_no_device();
  if (!no_device.empty()) {
    // Said once, by whichever path asks first: the other finds the same.
    static std::atomic<bool> told{false};
    if (settings().log && !told.exchange(true))
      std::fprintf(stderr, "fastgemm_blas: no GPU for this process (no CUDA device: %s); every call runs on the CPU\n",
                   no_device.c_str());
    return nullptr;
  }
  const std::string beside = own_directory() + name;
  void *library = beside == name ? nullptr : dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr && settings().log)
    std::fprintf(stderr, "fastgemm_blas: no GPU for this process (%s cannot be loaded: %s); every %s runs on the CPU\n",
                 name, dlerror(), calls);
  return library;
}

template <typename Handle>
void bind_library(void *library, const char *prefix, GpuLibrary<Handle> *gpu, std::string *missing) {
  const auto named = [prefix](const char *suffix) { return std::string(prefix) + suffix; };
  HandleFunctions<Handle> &handles = gpu->handles;
  bind(library, named("create").c_str(), &handles.create, missing);
  bind(library, named("destroy").c_str(), &handles.destroy, missing);
  bind(library, named("set_devices").c_str(), &handles.set_devices, missing);
  bind(library, named("set_reproducibility").c_str(), &handles.set_reproducibility, missing);
  bind(library, named("status_name").c_str(), &handles.status_name, missing);
  bind(library, named("last_error_message").c_str(), &handles.last_error_message, missing);
  CudaRuntime &cuda = gpu->cuda;
  bind(library, "cudaGetDevice", &cuda.get_device, missing);
  bind(library, "cudaGetDeviceCount", &cuda.get_device_count, missing);
  bind(library, "cudaSetDevice", &cuda.set_device, missing);
  bind(library, "cudaPointerGetAttributes", &cuda.pointer_attributes, missing);
  bind(library, "cudaStreamSynchronize", &cuda.stream_synchronize, missing);
  bind(library, "cudaGetLastError", &cuda.get_last_error, missing);
}

bool library_complete(const char *name, const std::string &missing, const char *calls) {
  if (missing.empty()) return true;
  if (settings().log)
    std::fprintf(stderr, "fastgemm_blas: no GPU for this process (%s lacks %s); every %s runs on the CPU\n", name,
                 missing.c_str(), calls);
  return false;
}

template <typename Handle>
ThreadHandle<Handle>::~ThreadHandle() {
  if (handle_ != nullptr && gettid() != getpid()) (void)library_()->handles.destroy(handle_);
}

template <typename Handle>
Handle ThreadHandle<Handle>::get() {
  if (tried_ || cpu_only_->load(std::memory_order_relaxed)) return handle_;
  tried_ = true;
  const GpuLibrary<Handle> *gpu = library_();
  if (gpu == nullptr) {
    cpu_only_->store(true);
    return handle_;
  }
  Handle handle = nullptr;
  const fg_status_t status = create_on(*gpu, device_of_rank(gpu->cuda), &handle, &device_);
  if (status == FG_STATUS_SUCCESS) {
    handle_ = handle;
    apply_device_list(*gpu, handle_);
    apply_reproducibility(*gpu, handle_);
    return handle_;
  }
  // No device, and an environment the library refuses (FASTGEMM_MATH naming no mode), hold for every thread: the
  // first to find them tells why, once. Other failures (memory, a CUDA error) are this thread's.
  const bool whole_process = status == FG_STATUS_NO_DEVICE || status == FG_STATUS_INVALID_VALUE;
  if (whole_process && cpu_only_->exchange(true)) return handle_;
  if (settings().log)
    std::fprintf(stderr, "fastgemm_blas: %s (%s: %s); %s %s runs on the CPU\n",
                 status == FG_STATUS_NO_DEVICE       ? "no GPU for this process"
                 : status == FG_STATUS_INVALID_VALUE ? "fastgemm refuses the environment"
                                                     : "no GPU for this thread",
                 gpu->handles.status_name(status), gpu->handles.last_error_message(), whole_process ? "every" : "its",
                 calls_);
  return handle_;
}

template <typename Handle>
void log_gpu_call(const GpuLibrary<Handle> &gpu, const char *caller, int64_t m, int64_t n, int64_t k, const char *entry,
                  fg_status_t status) {
  if (!settings().log) return;
  const bool success = status == FG_STATUS_SUCCESS;
  std::fprintf(stderr, "fastgemm_blas: %s m=%lld n=%lld k=%lld on the GPU (%s) -> %s%s%s\n", caller,
               static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), entry,
               gpu.handles.status_name(status), success ? "" : ": ", success ? "" : gpu.handles.last_error_message());
}

template <typename Handle>
bool gpu_product_done(const GpuLibrary<Handle> &gpu, const char *caller, int64_t m, int64_t n, int64_t k,
                      const char *entry, fg_status_t status, bool beta_zero) {
  log_gpu_call(gpu, caller, m, n, k, entry, status);
  if (status == FG_STATUS_SUCCESS) return true;
  const bool untouched = status == FG_STATUS_NO_DEVICE || status == FG_STATUS_ALLOC_FAILED ||
                         status == FG_STATUS_NOT_SUPPORTED || status == FG_STATUS_INVALID_VALUE;
  if (untouched || beta_zero) return false;
  std::fprintf(stderr, "fastgemm_blas: %s failed on the GPU after writing part of C (%s: %s); stopping\n", caller,
               gpu.handles.status_name(status), gpu.handles.last_error_message());
  std::abort();
}

#define FASTGEMM_BLAS_GPU_HANDLES(Handle)                                                                     \
  template void bind_library<Handle>(void *, const char *, GpuLibrary<Handle> *, std::string *);              \
  template class ThreadHandle<Handle>;                                                                        \
  template void log_gpu_call<Handle>(const GpuLibrary<Handle> &, const char *, int64_t, int64_t, int64_t,     \
                                     const char *, fg_status_t);                                              \
  template bool gpu_product_done<Handle>(const GpuLibrary<Handle> &, const char *, int64_t, int64_t, int64_t, \
                                         const char *, fg_status_t, bool);
FASTGEMM_BLAS_GPU_HANDLES(fg_handle_t)
FASTGEMM_BLAS_GPU_HANDLES(fastgemm_blas_dgemm_t)
#undef FASTGEMM_BLAS_GPU_HANDLES

}  // namespace fastgemm_blas
