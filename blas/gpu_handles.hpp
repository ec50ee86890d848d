// SPDX-License-Identifier: Apache-2.0
// What the drop-in's two GPU paths share: opening their library on the first product the GPU takes (libfastgemm.so
// for single precision, libfastgemm_blas_dgemm.so for double), the CUDA runtime reached through it, one handle per
// calling thread for each, and the outcome of a product on the GPU.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

#include "fastgemm/fastgemm.h"

namespace fastgemm_blas {

// The CUDA runtime the opened library is linked with, found through it: one runtime in the process.
struct CudaRuntime {
  decltype(&cudaGetDevice) get_device = nullptr;
  decltype(&cudaGetDeviceCount) get_device_count = nullptr;
  decltype(&cudaSetDevice) set_device = nullptr;
  decltype(&cudaPointerGetAttributes) pointer_attributes = nullptr;
  decltype(&cudaStreamSynchronize) stream_synchronize = nullptr;
  decltype(&cudaGetLastError) get_last_error = nullptr;
};

// A library's handle functions: fg_create and the others of libfastgemm.so, or their fastgemm_blas_dgemm_ twins of
// libfastgemm_blas_dgemm.so (blas/dgemm/dgemm_host.h), which take the same arguments and return the same statuses.
template <typename Handle>
struct HandleFunctions {
  fg_status_t (*create)(Handle *) = nullptr;
  fg_status_t (*destroy)(Handle) = nullptr;
  fg_status_t (*set_devices)(Handle, const int *, int) = nullptr;
  fg_status_t (*set_reproducibility)(Handle, fg_reproducibility_t) = nullptr;
  const char *(*status_name)(fg_status_t) = nullptr;
  const char *(*last_error_message)() = nullptr;
};

template <typename Handle>
struct GpuLibrary {
  CudaRuntime cuda;
  HandleFunctions<Handle> handles;
};

// `name` opened where the driver has a device (asked of the driver itself, once per process, before anything of the
// CUDA runtime is loaded): beside this library first, then wherever the loader looks (LD_LIBRARY_PATH, the system's
// directories). nullptr when the driver has no device or the library cannot be loaded, with the reason logged under
// FASTGEMM_LOG=1; `calls` names what then runs on the CPU ("SGEMM").
void *open_gpu_library(const char *name, const char *calls);

// Binds the CUDA runtime's functions and the handle functions, named `prefix` + "create", ... ("fg_create"), from
// `library` into *gpu; the names not found are added to *missing (comma-separated).
template <typename Handle>
void bind_library(void *library, const char *prefix, GpuLibrary<Handle> *gpu, std::string *missing);

// True when nothing is missing; otherwise logs (FASTGEMM_LOG=1) that `name` lacks it and what runs on the CPU.
bool library_complete(const char *name, const std::string &missing, const char *calls);

// The library `name` opened (open_gpu_library) and bound into a Library (a GpuLibrary<Handle> and the functions of
// its products): the handle functions named `prefix` + "create", ..., the CUDA runtime, and what
// `bind_products(library, gpu, missing)` binds of its own. nullptr when it cannot be opened or lacks a function.
// Called once per Library.
template <typename Library, typename BindProducts>
const Library *load_gpu_library(const char *name, const char *prefix, const char *calls, BindProducts bind_products) {
  void *library = open_gpu_library(name, calls);
  if (library == nullptr) return nullptr;
  static Library gpu;
  std::string missing;
  bind_library(library, prefix, &gpu, &missing);
  bind_products(library, &gpu, &missing);
  return library_complete(name, missing, calls) ? &gpu : nullptr;
}

// One handle of a library per calling thread, made on its first call that asks: on the device of the process's local
// rank under MPI (rank_device.hpp) unless FASTGEMM_BLAS_DEVICES is set, whose list it then spreads products over, and
// at FG_REPRODUCIBLE_SHAPE unless FASTGEMM_BLAS_REPRODUCIBLE=0. A thread that ends destroys its handle; the main
// thread's is left to the process's end, when the driver releases everything, so that exit neither calls into a CUDA
// runtime being torn down nor waits for work of other threads. Once any thread finds no usable GPU, or the library
// refusing the environment, *cpu_only is set and every later call goes to the CPU.
template <typename Handle>
class ThreadHandle {
 public:
  // `library` opens the library once and returns it, or nullptr; `calls` names its calls in the log ("SGEMM").
  ThreadHandle(const GpuLibrary<Handle> *(*library)(), std::atomic<bool> *cpu_only, const char *calls)
      : library_(library), cpu_only_(cpu_only), calls_(calls) {}
  ~ThreadHandle();
  ThreadHandle(const ThreadHandle &) = delete;
  ThreadHandle &operator=(const ThreadHandle &) = delete;

  // The thread's handle, made on the first call; nullptr without a usable GPU.
  Handle get();
  // The device the handle was made on (after get() has made it).
  int device() const { return device_; }

 private:
  const GpuLibrary<Handle> *(*library_)();
  std::atomic<bool> *cpu_only_;
  const char *calls_;
  Handle handle_ = nullptr;
  int device_ = -1;
  bool tried_ = false;
};

// Under FASTGEMM_LOG=1, the line of a call sent to the GPU (`entry`, which returned `status`): "fastgemm_blas: caller
// m=... n=... k=... on the GPU (entry) -> STATUS", with the failure's message.
template <typename Handle>
void log_gpu_call(const GpuLibrary<Handle> &gpu, const char *caller, int64_t m, int64_t n, int64_t k, const char *entry,
                  fg_status_t status);

// Whether a product sent to the GPU (by `entry`, which returned `status`) computed C, logged under FASTGEMM_LOG=1.
// A failure found before any tile ran leaves C untouched, and with beta == 0 C is never read: the CPU then computes
// C (false). After any other failure C may be partly written and no result would be right: the library says so and
// ends the program.
template <typename Handle>
bool gpu_product_done(const GpuLibrary<Handle> &gpu, const char *caller, int64_t m, int64_t n, int64_t k,
                      const char *entry, fg_status_t status, bool beta_zero);

}  // namespace fastgemm_blas
