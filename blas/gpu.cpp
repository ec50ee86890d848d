// SPDX-License-Identifier: Apache-2.0
// libfastgemm.so (with the CUDA runtime and cuBLAS it brings, most of a second to load) is opened on the
// first product the GPU takes, not when the process starts: a program that only makes small calls never
// loads it, and neither does one whose driver has no device. Everything of it is reached through the
// function pointers of GpuLibrary.
#include "gpu.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "common.hpp"
#include "fastgemm/fastgemm.h"
#include "preload/loading.hpp"
#include "rank_device.hpp"

namespace fastgemm_blas {
namespace {

// The default rule: the GPU takes products of at least 2 * 512^3 flops whose every dimension is at least
// 128. Below 512^3 a multi-threaded CPU BLAS finishes within about a millisecond (OpenBLAS runs 0.2
// TFLOPS on the H100 machine's 16 cores), about what the GPU path's synchronization, pinned staging and
// transfers cost; a dimension under 128 makes the product thin, with fewer than about 20 flops per byte
// that crosses PCIe, where the copies alone take longer than the CPU's product.
constexpr double default_min_flops = 2.0 * 512 * 512 * 512;
constexpr int64_t default_min_dimension = 128;

struct GpuLibrary {
  decltype(&fg_create) create;
  decltype(&fg_destroy) destroy;
  decltype(&fg_set_devices) set_devices;
  decltype(&fg_set_reproducibility) set_reproducibility;
  decltype(&fg_status_name) status_name;
  decltype(&fg_last_error_message) last_error_message;
  decltype(&fg_sgemm) sgemm;
  decltype(&fg_sgemm_host) sgemm_host;
  decltype(&fg_get_stream) get_stream;
  // The CUDA runtime libfastgemm.so is linked with: one runtime in the process.
  decltype(&cudaGetDevice) get_device;
  decltype(&cudaGetDeviceCount) get_device_count;
  decltype(&cudaSetDevice) set_device;
  decltype(&cudaPointerGetAttributes) pointer_attributes;
  decltype(&cudaStreamSynchronize) stream_synchronize;
  decltype(&cudaGetLastError) get_last_error;
};

// This library's directory: libfastgemm.so is installed (and built) beside it.
std::string own_directory() { return fastgemm_preload::directory_of(reinterpret_cast<const void *>(&own_directory)); }

using fastgemm_preload::bind;

// Empty when the driver has a device, else why there is none. Asked of the driver itself, because
// libfastgemm.so would load the CUDA runtime and cuBLAS (over 200 MB resident, a tenth of a second) only to
// learn the same. The driver stays loaded only where it has a device, for the runtime to use.
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

// Beside this library first, then wherever the loader looks (LD_LIBRARY_PATH, the system's directories).
// Null, with the reason logged under FASTGEMM_LOG=1, when the driver has no device, or libfastgemm.so cannot
// be loaded or lacks a function.
const GpuLibrary *load() {
  static const char *const name = FASTGEMM_SHARED_LIBRARY;
  const std::string no_device = why_no_device();
  if (!no_device.empty()) {
    if (settings().log)
      std::fprintf(stderr, "fastgemm_blas: no GPU for this process (no CUDA device: %s); every SGEMM runs on the CPU\n",
                   no_device.c_str());
    return nullptr;
  }
  const std::string beside = own_directory() + name;
  void *library = beside == name ? nullptr : dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    if (settings().log)
      std::fprintf(stderr,
                   "fastgemm_blas: no GPU for this process (%s cannot be loaded: %s); every SGEMM runs on the CPU\n",
                   name, dlerror());
    return nullptr;
  }
  static GpuLibrary gpu;
  std::string missing;
  bind(library, "fg_create", &gpu.create, &missing);
  bind(library, "fg_destroy", &gpu.destroy, &missing);
  bind(library, "fg_set_devices", &gpu.set_devices, &missing);
  bind(library, "fg_set_reproducibility", &gpu.set_reproducibility, &missing);
  bind(library, "fg_status_name", &gpu.status_name, &missing);
  bind(library, "fg_last_error_message", &gpu.last_error_message, &missing);
  bind(library, "fg_sgemm", &gpu.sgemm, &missing);
  bind(library, "fg_sgemm_host", &gpu.sgemm_host, &missing);
  bind(library, "fg_get_stream", &gpu.get_stream, &missing);
  bind(library, "cudaGetDevice", &gpu.get_device, &missing);
  bind(library, "cudaGetDeviceCount", &gpu.get_device_count, &missing);
  bind(library, "cudaSetDevice", &gpu.set_device, &missing);
  bind(library, "cudaPointerGetAttributes", &gpu.pointer_attributes, &missing);
  bind(library, "cudaStreamSynchronize", &gpu.stream_synchronize, &missing);
  bind(library, "cudaGetLastError", &gpu.get_last_error, &missing);
  if (!missing.empty()) {
    if (settings().log)
      std::fprintf(stderr, "fastgemm_blas: no GPU for this process (%s lacks %s); every SGEMM runs on the CPU\n", name,
                   missing.c_str());
    return nullptr;
  }
  return &gpu;
}

const GpuLibrary *gpu_library() {
  static const GpuLibrary *const loaded = load();
  return loaded;
}

// FASTGEMM_BLAS_DEVICES as a list: "all" is every device, the current one first; otherwise ordinals
// separated by commas. False when the text is neither (fg_set_devices checks the ordinals themselves).
bool device_list(const GpuLibrary &gpu, const char *text, std::vector<int> *list) {
  if (std::strcmp(text, "all") == 0) {
    int current = 0, count = 0;
    if (gpu.get_device(&current) != cudaSuccess || gpu.get_device_count(&count) != cudaSuccess) return false;
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
void apply_device_list(const GpuLibrary &gpu, fg_handle_t handle) {
  const char *text = settings().devices;
  if (text == nullptr || *text == '\0') return;
  std::vector<int> list;
  const fg_status_t status = device_list(gpu, text, &list)
                                 ? gpu.set_devices(handle, list.data(), static_cast<int>(list.size()))
                                 : FG_STATUS_INVALID_VALUE;
  if (status != FG_STATUS_SUCCESS && settings().log)
    std::fprintf(stderr,
                 "fastgemm_blas: FASTGEMM_BLAS_DEVICES=%s is not used (%s%s%s); the thread's device runs alone\n", text,
                 gpu.status_name(status), list.empty() ? "" : ": ",
                 list.empty() ? "no list of ordinals or \"all\"" : gpu.last_error_message());
}

// Once any thread has found no usable GPU, or fastgemm refusing the environment, every later call goes to the CPU.
std::atomic<bool> g_cpu_only{false};

// One handle per calling thread, made on its first large call. A thread that ends destroys its handle;
// the main thread's is left to the process's end, when the driver releases everything, so that exit
// neither calls into a CUDA runtime being torn down nor waits for work of other threads.
// FASTGEMM_BLAS_REPRODUCIBLE (see blas.cpp). The setting cannot fail on a handle just made; should it, the handle
// keeps the library's setting, and FASTGEMM_LOG=1 says so.
void apply_reproducibility(const GpuLibrary &gpu, fg_handle_t handle) {
  const char *text = std::getenv("FASTGEMM_BLAS_REPRODUCIBLE");
  if (text != nullptr && std::strcmp(text, "0") == 0) return;
  const fg_status_t status = gpu.set_reproducibility(handle, FG_REPRODUCIBLE_SHAPE);
  if (status != FG_STATUS_SUCCESS && settings().log)
    std::fprintf(stderr, "fastgemm_blas: FG_REPRODUCIBLE_SHAPE is not used (%s: %s)\n", gpu.status_name(status),
                 gpu.last_error_message());
}

// Under MPI, with no FASTGEMM_BLAS_DEVICES, the device of the rank's local rank (rank_device.hpp); -1: the thread's
// current device. FASTGEMM_LOG=1 says which, and why not where a launcher's variable cannot be used.
int device_of_rank(const GpuLibrary &gpu) {
  if (settings().devices != nullptr && *settings().devices != '\0') return -1;
  int count = 0;
  if (gpu.get_device_count(&count) != cudaSuccess) {
    (void)gpu.get_last_error();
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

// fg_create on `device` (-1: the thread's current one), the thread's current device left as it was: the handle
// makes its own device current in each call. *on is the handle's device.
fg_status_t create_on(const GpuLibrary &gpu, int device, fg_handle_t *handle, int *on) {
  int previous = -1;
  if (gpu.get_device(&previous) != cudaSuccess) {
    (void)gpu.get_last_error();
    previous = -1;
  }
  *on = previous;
  const bool switch_device = device >= 0 && previous >= 0 && device != previous;
  bool switched = false;
  if (switch_device) {
    switched = gpu.set_device(device) == cudaSuccess;
    if (!switched) (void)gpu.get_last_error();
  }
  const fg_status_t status = gpu.create(handle);
  if (switched) {
    *on = device;
    if (gpu.set_device(previous) != cudaSuccess) (void)gpu.get_last_error();
  }
  return status;
}

class ThreadHandle {
 public:
  ~ThreadHandle() {
    if (handle_ != nullptr && gettid() != getpid()) (void)gpu_library()->destroy(handle_);
  }
  fg_handle_t get() {
    if (tried_ || g_cpu_only.load(std::memory_order_relaxed)) return handle_;
    tried_ = true;
    const GpuLibrary *gpu = gpu_library();
    if (gpu == nullptr) {
      g_cpu_only.store(true);
      return handle_;
    }
    fg_handle_t handle = nullptr;
    const fg_status_t status = create_on(*gpu, device_of_rank(*gpu), &handle, &device_);
    if (status == FG_STATUS_SUCCESS) {
      handle_ = handle;
      apply_device_list(*gpu, handle_);
      apply_reproducibility(*gpu, handle_);
      return handle_;
    }
    // No device, and an environment fastgemm refuses (FASTGEMM_MATH naming no mode), hold for every thread:
    // the first to find them tells why, once. Other failures (memory, a CUDA error) are this thread's.
    const bool whole_process = status == FG_STATUS_NO_DEVICE || status == FG_STATUS_INVALID_VALUE;
    if (whole_process && g_cpu_only.exchange(true)) return handle_;
    if (settings().log)
      std::fprintf(stderr, "fastgemm_blas: %s (%s: %s); %s runs on the CPU\n",
                   status == FG_STATUS_NO_DEVICE       ? "no GPU for this process"
                   : status == FG_STATUS_INVALID_VALUE ? "fastgemm refuses the environment"
                                                       : "no GPU for this thread",
                   gpu->status_name(status), gpu->last_error_message(), whole_process ? "every SGEMM" : "its SGEMM");
    return handle_;
  }

  // The device the handle was made on (after get() has made it).
  int device() const { return device_; }

 private:
  fg_handle_t handle_ = nullptr;
  int device_ = -1;
  bool tried_ = false;
};

thread_local ThreadHandle t_handle;

bool on_device(const GpuLibrary &gpu, const void *pointer, int device) {
  cudaPointerAttributes attributes = {};
  if (gpu.pointer_attributes(&attributes, pointer) != cudaSuccess) {
    (void)gpu.get_last_error();
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

bool gpu_available() { return t_handle.get() != nullptr; }

bool run_on_gpu(const char *caller, int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha,
                const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  const fg_handle_t handle = t_handle.get();
  if (handle == nullptr) return false;
  const GpuLibrary &gpu = *gpu_library();
  const auto fl = static_cast<fg_layout_t>(layout);
  const auto ta = static_cast<fg_op_t>(transa), tb = static_cast<fg_op_t>(transb);
  // Operands all in the handle's device's memory go to fg_sgemm; any other mix to fg_sgemm_host.
  const int device = t_handle.device();
  const bool all_device =
      device >= 0 && on_device(gpu, A, device) && on_device(gpu, B, device) && on_device(gpu, C, device);
  fg_status_t status = FG_STATUS_SUCCESS;
  cudaStream_t stream = nullptr;
  if (all_device) {
    status = gpu.sgemm(handle, fl, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    if (status == FG_STATUS_SUCCESS && gpu.get_stream(handle, &stream) == FG_STATUS_SUCCESS &&
        gpu.stream_synchronize(stream) != cudaSuccess)
      status = FG_STATUS_CUDA_ERROR;
  } else {
    status = gpu.sgemm_host(handle, fl, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  }
  if (settings().log)
    std::fprintf(stderr, "fastgemm_blas: %s m=%lld n=%lld k=%lld on the GPU (%s) -> %s%s%s\n", caller,
                 static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
                 all_device ? "fg_sgemm" : "fg_sgemm_host", gpu.status_name(status),
                 status == FG_STATUS_SUCCESS ? "" : ": ", status == FG_STATUS_SUCCESS ? "" : gpu.last_error_message());
  if (status == FG_STATUS_SUCCESS) return true;
  // Failures found before any tile ran leave C untouched, and with beta == 0 C is never read: the CPU can
  // still compute it. Otherwise C may be partly written, and no result would be right.
  const bool untouched = status == FG_STATUS_NO_DEVICE || status == FG_STATUS_ALLOC_FAILED ||
                         status == FG_STATUS_NOT_SUPPORTED || status == FG_STATUS_INVALID_VALUE;
  if (untouched || beta == 0.0f) return false;
  std::fprintf(stderr, "fastgemm_blas: %s failed on the GPU after writing part of C (%s: %s); stopping\n", caller,
               gpu.status_name(status), gpu.last_error_message());
  std::abort();
}

}  // namespace fastgemm_blas
