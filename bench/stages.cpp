// SPDX-License-Identifier: Apache-2.0
#include "stages.hpp"

#include <cuda_runtime.h>
#include <cupti.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu.hpp"

namespace bench {
namespace {

// One traced kernel: its name (mangled, as CUPTI gives it) and its time on the device, in ns.
struct Kernel {
  std::string name;
  uint64_t start = 0, end = 0;
};

// The entry points of libcupti this file uses, found once.
struct Cupti {
  CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*enable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*disable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*flush_all)(uint32_t) = nullptr;
  CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **) = nullptr;
  std::string why_not;  // empty once every entry point is found and the callbacks registered
};

// The kernels the buffers brought back since the last trace began.
std::mutex g_mutex;
std::vector<Kernel> g_kernels;
const Cupti *g_cupti = nullptr;

constexpr size_t kBufferBytes = size_t{8} << 20;
constexpr size_t kBufferAlignment = 8;

void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *buffer = static_cast<uint8_t *>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t valid_bytes) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    CUpti_Activity *record = nullptr;
    while (g_cupti != nullptr && g_cupti->next_record(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
      if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
      const auto *kernel = reinterpret_cast<const CUpti_ActivityKernel10 *>(record);
      g_kernels.push_back({kernel->name != nullptr ? kernel->name : "", kernel->start, kernel->end});
    }
  }
  std::free(buffer);
}

// libcupti of the CUDA major version the bench was built with: where the loader finds it, else in the usual
// places of a toolkit.
void *open_cupti() {
  const std::string name = "libcupti.so." + std::to_string(CUDART_VERSION / 1000);
  std::vector<std::string> candidates = {name};
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *root = std::getenv(variable)) {
      candidates.push_back(std::string(root) + "/lib64/" + name);
      candidates.push_back(std::string(root) + "/extras/CUPTI/lib64/" + name);
    }
  candidates.push_back("/usr/local/cuda/lib64/" + name);
  candidates.push_back("/usr/local/cuda/extras/CUPTI/lib64/" + name);
  for (const std::string &path : candidates)
    if (void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return library;
  return nullptr;
}

const Cupti &cupti() {
  static const Cupti loaded = [] {
    Cupti c;
    void *library = open_cupti();
    if (library == nullptr) {
      c.why_not = "libcupti.so." + std::to_string(CUDART_VERSION / 1000) + " not found (CUDA's CUPTI, for --stages)";
      return c;
    }
    const auto find = [&](auto *entry, const char *symbol) {
      *entry = reinterpret_cast<std::remove_pointer_t<decltype(entry)>>(dlsym(library, symbol));
      if (*entry == nullptr && c.why_not.empty()) c.why_not = std::string("libcupti lacks ") + symbol;
    };
    find(&c.register_callbacks, "cuptiActivityRegisterCallbacks");
    find(&c.enable, "cuptiActivityEnable");
    find(&c.disable, "cuptiActivityDisable");
    find(&c.flush_all, "cuptiActivityFlushAll");
    find(&c.next_record, "cuptiActivityGetNextRecord");
    if (c.why_not.empty() && c.register_callbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS)
      c.why_not = "cuptiActivityRegisterCallbacks failed";
    return c;
  }();
  return loaded;
}

bool contains(const std::string &text, const char *part) { return text.find(part) != std::string::npos; }

}  // namespace

const char *stage_name(int stage) {
  static const char *const kNames[kStageCount] = {"scan",     "codes",   "plan",     "residues",
                                                  "products", "rebuild", "recompute"};
  return stage >= 0 && stage < kStageCount ? kNames[stage] : "unknown";
}

StageTimes trace_stages(const std::function<void()> &call) {
  StageTimes times;
  const Cupti &c = cupti();
  if (!c.why_not.empty()) {
    times.why_not = c.why_not;
    return times;
  }
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize before the traced call");
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_cupti = &c;
    g_kernels.clear();
  }
  if (c.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
    times.why_not = "cuptiActivityEnable failed";
    return times;
  }
  try {
    call();
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the traced call");
  } catch (...) {
    (void)c.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    (void)c.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    throw;
  }
  (void)c.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (c.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != CUPTI_SUCCESS) {
    times.why_not = "cuptiActivityFlushAll failed";
    return times;
  }
  std::vector<Kernel> kernels;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    kernels.swap(g_kernels);
  }
  if (kernels.empty()) {
    times.why_not = "no kernel was traced";
    return times;
  }
  std::sort(kernels.begin(), kernels.end(), [](const Kernel &a, const Kernel &b) { return a.start < b.start; });
  // The emulation's own kernels by name; every other kernel is a product (cuBLAS's, or the own INT8 product): the
  // codes' product where the codes came before it and the plan has not yet run, else the moduli's products (or the
  // FP32 product of a call that ran FP32 throughout).
  bool seen_codes = false, seen_plan = false;
  for (const Kernel &kernel : kernels) {
    const std::string &name = kernel.name;
    int stage = kStageProducts;
    if (contains(name, "publish_kernel") || contains(name, "preview") || contains(name, "scan_kernel") ||
        contains(name, "scan_contiguous_kernel") || contains(name, "scan_strided_kernel")) {
      stage = kStageScan;
    } else if (contains(name, "residues_contiguous_kernel") || contains(name, "residues_strided_kernel")) {
      stage = seen_plan ? kStageResidues : kStageCodes;
      seen_codes = seen_codes || !seen_plan;
    } else if (contains(name, "plan_kernel") || contains(name, "decide_kernel")) {
      stage = kStagePlan;
      seen_plan = true;
    } else if (contains(name, "reconstruct_kernel")) {
      stage = kStageRebuild;
    } else if (contains(name, "recompute_kernel") || contains(name, "fix_rows_kernel") ||
               contains(name, "fix_columns_kernel") || contains(name, "recompute_and_fix_kernel")) {
      stage = kStageRecompute;
    } else if (seen_codes && !seen_plan) {
      stage = kStageCodes;
    }
    times.ms[stage] += static_cast<double>(kernel.end - kernel.start) * 1e-6;
  }
  times.traced = true;
  times.kernels = static_cast<int>(kernels.size());
  return times;
}

}  // namespace bench
