// SPDX-License-Identifier: Apache-2.0
// The products fastgemm serves: libfastgemm.so, opened on the first product that may go to it (by then the program
// has loaded its CUDA runtime and cuBLAS, and libfastgemm shares them), one fastgemm handle per thread and device in
// the emulated mode, and a workspace of this library's for each, grown outside captures only.
//
// Workspaces: a handle computes in memory given to it (fg_set_workspace), so that it never allocates itself. The
// memory grows, on the call's stream, only where no capture is under way; a graph captured from a call holds the
// workspace's address, so a workspace that a capture has used is never freed (the graph may be replayed at any
// time); one that none has used is freed in stream order after its last use. In a capture, a call is served only
// where the same problem was served on this thread before outside one: its workspace and fastgemm's own resources
// (its cuBLAS handle, the emulation's tables) exist, and nothing is created inside the capture.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "epilogue.hpp"
#include "fastgemm/fastgemm.h"
#include "interposer.hpp"
#include "lib/tuning/tuning.hpp"
#include "preload/loading.hpp"

namespace fastgemm_cublas {
namespace {

struct FastgemmLibrary {
  decltype(&fg_create) create;
  decltype(&fg_destroy) destroy;
  decltype(&fg_set_stream) set_stream;
  decltype(&fg_set_math_mode) set_math_mode;
  decltype(&fg_get_reproducibility) get_reproducibility;
  decltype(&fg_set_workspace) set_workspace;
  decltype(&fg_sgemm_workspace_size) workspace_size;
  decltype(&fg_sgemm) sgemm;
  decltype(&fg_sgemm_strided_batched) sgemm_strided_batched;
  decltype(&fg_get_last_sgemm_emulation) last_emulation;
  decltype(&fg_get_last_sgemm_algo) last_algo;
  decltype(&fg_sgemm_algo_name) algo_name;
  decltype(&fg_status_name) status_name;
  decltype(&fg_last_error_message) last_error_message;
};

// Set when the process starts to exit: threads that end from then on (a framework's worker threads, joined while
// the process's static objects are destroyed) leave their handles to the driver, as the main thread does, instead
// of calling into libraries being torn down.
std::atomic<bool> g_exiting{false};

void note_exit() { g_exiting.store(true); }

using fastgemm_preload::bind;

// Beside this library first (where it is built and installed), then wherever the loader looks. Null, with the reason
// in *why, when it cannot be used.
const FastgemmLibrary *load(std::string *why) {
  static const char *const name = FASTGEMM_SHARED_LIBRARY;
  const std::string beside = fastgemm_preload::directory_of(reinterpret_cast<const void *>(&serve)) + name;
  void *library = beside == name ? nullptr : dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char *error = dlerror();
    *why = std::string(name) + " cannot be loaded: " + (error != nullptr ? error : "unknown error");
    return nullptr;
  }
  static FastgemmLibrary fastgemm;
  // Registered after libfastgemm and the program's libraries have made their static objects: it runs before any
  // of them is destroyed.
  std::atexit(note_exit);
  std::string missing;
  bind(library, "fg_create", &fastgemm.create, &missing);
  bind(library, "fg_destroy", &fastgemm.destroy, &missing);
  bind(library, "fg_set_stream", &fastgemm.set_stream, &missing);
  bind(library, "fg_set_math_mode", &fastgemm.set_math_mode, &missing);
  bind(library, "fg_get_reproducibility", &fastgemm.get_reproducibility, &missing);
  bind(library, "fg_set_workspace", &fastgemm.set_workspace, &missing);
  bind(library, "fg_sgemm_workspace_size", &fastgemm.workspace_size, &missing);
  bind(library, "fg_sgemm", &fastgemm.sgemm, &missing);
  bind(library, "fg_sgemm_strided_batched", &fastgemm.sgemm_strided_batched, &missing);
  bind(library, "fg_get_last_sgemm_emulation", &fastgemm.last_emulation, &missing);
  bind(library, "fg_get_last_sgemm_algo", &fastgemm.last_algo, &missing);
  bind(library, "fg_sgemm_algo_name", &fastgemm.algo_name, &missing);
  bind(library, "fg_status_name", &fastgemm.status_name, &missing);
  bind(library, "fg_last_error_message", &fastgemm.last_error_message, &missing);
  if (!missing.empty()) {
    *why = std::string(name) + " lacks " + missing;
    return nullptr;
  }
  return &fastgemm;
}

// Set once fastgemm is found unusable for the whole process (no library, no device, an environment it refuses).
std::atomic<bool> g_unusable{false};
std::string g_unusable_why;  // written once, before g_unusable is set

// Turns fastgemm off for the process, once, for a reason that holds for every thread.
void give_up(const std::string &why) {
  static std::atomic<bool> told{false};
  if (!g_unusable.load() && !told.exchange(true)) {
    g_unusable_why = why;
    g_unusable.store(true);
  }
}

const FastgemmLibrary *fastgemm_library() {
  static std::string why;
  static const FastgemmLibrary *const loaded = load(&why);
  if (loaded == nullptr) give_up(why);
  return loaded;
}

// The emulation pays on the data-centre parts whose INT8 tensor cores lead their FP32 lanes most (fastgemm's AUTO
// emulates there only, by lib/tuning/tuning.hpp).
bool emulation_pays(int device) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return fastgemm::tuning::arch_tuning(major * 10 + minor).emulation;
}

struct ProblemKey {
  bool a_transposed, b_transposed;
  int64_t m, n, k, batch;
  bool operator==(const ProblemKey &other) const {
    return a_transposed == other.a_transposed && b_transposed == other.b_transposed && m == other.m && n == other.n &&
           k == other.k && batch == other.batch;
  }
};

struct Workspace {
  void *memory = nullptr;
  size_t bytes = 0;
  bool captured = false;  // a capture used it: a graph holds its address
};

// A thread's fastgemm handle on one device, with its workspace.
struct DeviceHandle {
  int device = -1;
  bool emulation_pays = false;
  fg_handle_t handle = nullptr;
  Workspace workspace;
  std::vector<void *> kept;  // earlier workspaces that captures used
  // cuBLAS's device pointer mode: the product op(A) op(B) is computed here first, then scaled into C on the device.
  Workspace scratch;
  cudaEvent_t scratch_use = nullptr;  // recorded after the kernel that last read the scratch
  bool scratch_recorded = false;
  cudaEvent_t last_use = nullptr;  // recorded after each served call outside a capture
  bool recorded = false;
  // Problems served outside a capture, with the workspace each needs; the most recent last.
  std::vector<std::pair<ProblemKey, size_t>> warm;
};

// The handles of threads that have ended, destroyed by the next call served on their device. A thread's own
// destructors cannot destroy them: libfastgemm's thread-local state (its last error message) may already be gone by
// then, and fg_destroy would write into it.
std::mutex g_orphans_mutex;
std::vector<DeviceHandle> g_orphans;
std::atomic<int> g_orphan_count{0};  // read without the lock by every served call

class ThreadHandles {
 public:
  ~ThreadHandles() {
    // The main thread's are left to the process's end, when the driver releases everything: exit neither calls into
    // a CUDA runtime being torn down nor waits for other threads' work.
    if (gettid() == getpid() || g_exiting.load()) return;
    std::lock_guard<std::mutex> lock(g_orphans_mutex);
    for (DeviceHandle &entry : handles_)
      if (entry.handle != nullptr) g_orphans.push_back(std::move(entry));
    g_orphan_count.store(static_cast<int>(g_orphans.size()));
  }
  DeviceHandle *find(int device) {
    for (DeviceHandle &entry : handles_)
      if (entry.device == device) return &entry;
    handles_.push_back(DeviceHandle{});
    handles_.back().device = device;
    handles_.back().emulation_pays = emulation_pays(device);
    return &handles_.back();
  }

 private:
  std::vector<DeviceHandle> handles_;
};

// Outside captures only: fg_destroy waits for the work that used the handle's workspace.
void destroy_orphans(const FastgemmLibrary &fastgemm, int device) {
  if (g_orphan_count.load(std::memory_order_relaxed) == 0) return;
  std::vector<DeviceHandle> orphans;
  {
    std::lock_guard<std::mutex> lock(g_orphans_mutex);
    for (auto it = g_orphans.begin(); it != g_orphans.end();) {
      if (it->device == device) {
        orphans.push_back(std::move(*it));
        it = g_orphans.erase(it);
      } else {
        ++it;
      }
    }
    g_orphan_count.store(static_cast<int>(g_orphans.size()));
  }
  for (DeviceHandle &orphan : orphans) {
    // The last served call's work ends with the interposer's own kernels, after fastgemm's.
    if (orphan.recorded && cudaEventSynchronize(orphan.last_use) != cudaSuccess) (void)cudaGetLastError();
    if (orphan.scratch_recorded && cudaEventSynchronize(orphan.scratch_use) != cudaSuccess) (void)cudaGetLastError();
    (void)fastgemm.destroy(orphan.handle);
    if (orphan.workspace.memory != nullptr && !orphan.workspace.captured &&
        cudaFreeAsync(orphan.workspace.memory, cudaStreamLegacy) != cudaSuccess)
      (void)cudaGetLastError();
    if (orphan.scratch.memory != nullptr && cudaFreeAsync(orphan.scratch.memory, cudaStreamLegacy) != cudaSuccess)
      (void)cudaGetLastError();
    if (orphan.last_use != nullptr && cudaEventDestroy(orphan.last_use) != cudaSuccess) (void)cudaGetLastError();
    if (orphan.scratch_use != nullptr && cudaEventDestroy(orphan.scratch_use) != cudaSuccess) (void)cudaGetLastError();
  }
}

thread_local ThreadHandles t_handles;

Served passed(std::string why) {
  Served served;
  served.why = std::move(why);
  return served;
}

std::string failure(const FastgemmLibrary &fastgemm, const char *call, fg_status_t status) {
  return std::string(call) + " returned " + fastgemm.status_name(status) + ": " + fastgemm.last_error_message();
}

// Makes the handle; "" on success, else why not. A refusal that holds for every thread (no device, an environment
// fastgemm refuses, FASTGEMM_REPRODUCIBLE=shape, at which the emulation never runs) turns fastgemm off for the
// process: its calls would run FP32 kernels other than cuBLAS's, to no gain.
std::string make_handle(const FastgemmLibrary &fastgemm, DeviceHandle *entry) {
  fg_handle_t handle = nullptr;
  fg_status_t status = fastgemm.create(&handle);
  if (status != FG_STATUS_SUCCESS) {
    const std::string why = failure(fastgemm, "fg_create", status);
    if (status == FG_STATUS_NO_DEVICE || status == FG_STATUS_INVALID_VALUE) give_up(why);
    return why;
  }
  fg_reproducibility_t level = FG_REPRODUCIBLE_RUN;
  if (fastgemm.get_reproducibility(handle, &level) == FG_STATUS_SUCCESS && level == FG_REPRODUCIBLE_SHAPE) {
    (void)fastgemm.destroy(handle);
    const std::string why = "FASTGEMM_REPRODUCIBLE=shape, at which fastgemm does not emulate";
    give_up(why);
    return why;
  }
  status = fastgemm.set_math_mode(handle, FG_MATH_FP32_EMULATED);
  if (status != FG_STATUS_SUCCESS) {
    const std::string why = failure(fastgemm, "fg_set_math_mode", status);
    (void)fastgemm.destroy(handle);
    return why;
  }
  if (cudaEventCreateWithFlags(&entry->last_use, cudaEventDisableTiming) != cudaSuccess) {
    (void)cudaGetLastError();
    (void)fastgemm.destroy(handle);
    return "cudaEventCreateWithFlags failed";
  }
  entry->handle = handle;
  return "";
}

// Gives the handle a workspace of at least `bytes`, on the product's stream; "" on success, else why not (the
// handle keeps the one it had).
std::string grow_workspace(const FastgemmLibrary &fastgemm, DeviceHandle *entry, size_t bytes, cudaStream_t stream) {
  void *memory = nullptr;
  if (cudaMallocAsync(&memory, bytes, stream) != cudaSuccess) {
    (void)cudaGetLastError();
    return "no device memory for fastgemm's workspace of " + std::to_string(bytes) + " bytes";
  }
  const fg_status_t status = fastgemm.set_workspace(entry->handle, memory, bytes);
  if (status != FG_STATUS_SUCCESS) {
    (void)cudaFreeAsync(memory, stream);
    return failure(fastgemm, "fg_set_workspace", status);
  }
  Workspace old = entry->workspace;
  entry->workspace = Workspace{memory, bytes, false};
  if (old.memory == nullptr) return "";
  if (old.captured) {
    entry->kept.push_back(old.memory);
    return "";
  }
  // Freed once the last call that used it (on whichever stream) is done.
  if (entry->recorded && cudaStreamWaitEvent(stream, entry->last_use, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    entry->kept.push_back(old.memory);
    return "";
  }
  if (cudaFreeAsync(old.memory, stream) != cudaSuccess) (void)cudaGetLastError();
  return "";
}

// The product's scratch for the device pointer mode, of at least `bytes`, on the product's stream (never in a capture:
// such calls go to cuBLAS). "" on success, else why not.
std::string grow_scratch(DeviceHandle *entry, size_t bytes, cudaStream_t stream) {
  if (entry->scratch_use == nullptr &&
      cudaEventCreateWithFlags(&entry->scratch_use, cudaEventDisableTiming) != cudaSuccess) {
    (void)cudaGetLastError();
    entry->scratch_use = nullptr;
    return "no event to order the uses of the product's buffer";
  }
  void *memory = nullptr;
  if (cudaMallocAsync(&memory, bytes, stream) != cudaSuccess) {
    (void)cudaGetLastError();
    return "no device memory for the product of " + std::to_string(bytes) + " bytes that alpha and beta scale";
  }
  void *old = entry->scratch.memory;
  entry->scratch = Workspace{memory, bytes, false};
  if (old == nullptr) return "";
  if ((entry->scratch_recorded && cudaStreamWaitEvent(stream, entry->scratch_use, 0) != cudaSuccess) ||
      cudaFreeAsync(old, stream) != cudaSuccess)
    (void)cudaGetLastError();
  return "";
}

const size_t *warm_bytes(const DeviceHandle &entry, const ProblemKey &key) {
  for (const auto &known : entry.warm)
    if (known.first == key) return &known.second;
  return nullptr;
}

void remember(DeviceHandle *entry, const ProblemKey &key, size_t bytes) {
  constexpr size_t kRemembered = 64;
  for (auto it = entry->warm.begin(); it != entry->warm.end(); ++it)
    if (it->first == key) {
      entry->warm.erase(it);
      break;
    }
  if (entry->warm.size() == kRemembered) entry->warm.erase(entry->warm.begin());
  entry->warm.emplace_back(key, bytes);
}

// Under FASTGEMM_LOG=1, what the call ran: the emulation's count of moduli and the elements recomputed in FP32, or
// FP32 throughout where the certificate's preview declined the operands. This waits for the call's work.
std::string outcome(const FastgemmLibrary &fastgemm, fg_handle_t handle) {
  int moduli = 0;
  int64_t fp32_elements = 0;
  fg_sgemm_algo_t algo = FG_SGEMM_AUTO;
  if (fastgemm.last_emulation(handle, &moduli, &fp32_elements) != FG_STATUS_SUCCESS ||
      fastgemm.last_algo(handle, &algo) != FG_STATUS_SUCCESS)
    return "enqueued; its outcome is unknown";
  if (moduli > 0)
    return "emulated: " + std::to_string(moduli) + " moduli, " + std::to_string(fp32_elements) +
           " elements recomputed in FP32";
  return std::string("declined on the device: ") + fastgemm.algo_name(algo) + " in FP32";
}

}  // namespace

Served serve(const Product &p) {
  if (g_unusable.load()) return passed(g_unusable_why);
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return passed("no current device");
  }
  DeviceHandle *entry = t_handles.find(device);
  if (!entry->emulation_pays) return passed("the device's INT8 tensor cores do not pay for the emulation");
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(p.stream, &capture) != cudaSuccess) {
    (void)cudaGetLastError();
    return passed("the stream's capture status is unknown");
  }
  const bool capturing = capture != cudaStreamCaptureStatusNone;
  // The device pointer mode's scratch is the interposer's, not fastgemm's: a replay of a graph could race a later
  // call over it.
  const bool device_scalars = p.alpha_device != nullptr;
  if (capturing && device_scalars) return passed("alpha and beta in device memory inside a capture");
  const ProblemKey key{p.a_transposed, p.b_transposed, p.m, p.n, p.k, p.batch};
  const size_t *known_bytes = warm_bytes(*entry, key);
  if (capturing && known_bytes == nullptr)
    return passed("captured before this thread served the problem outside a capture");

  const FastgemmLibrary *fastgemm = fastgemm_library();
  if (fastgemm == nullptr) return passed(g_unusable_why);
  Forwarding forwarding;
  if (!capturing) destroy_orphans(*fastgemm, device);
  if (entry->handle == nullptr) {
    if (capturing) return passed("captured before this thread made a fastgemm handle");
    const std::string why = make_handle(*fastgemm, entry);
    if (!why.empty()) return passed(why);
  }
  fg_status_t status = fastgemm->set_stream(entry->handle, p.stream);
  if (status != FG_STATUS_SUCCESS) return passed(failure(*fastgemm, "fg_set_stream", status));
  const fg_op_t op_a = p.a_transposed ? FG_OP_T : FG_OP_N, op_b = p.b_transposed ? FG_OP_T : FG_OP_N;
  size_t bytes = 0;
  if (known_bytes != nullptr) {
    bytes = *known_bytes;
  } else {
    status = fastgemm->workspace_size(entry->handle, FG_COL_MAJOR, op_a, op_b, p.m, p.n, p.k, p.batch, &bytes);
    if (status != FG_STATUS_SUCCESS) return passed(failure(*fastgemm, "fg_sgemm_workspace_size", status));
  }
  if (bytes > entry->workspace.bytes || entry->workspace.memory == nullptr) {
    if (capturing) return passed("fastgemm's workspace would grow inside a capture");
    // cuBLAS, where fastgemm calls it, works in what is left past the call's part.
    constexpr size_t kCublasPart = size_t{32} << 20;
    const std::string why = grow_workspace(*fastgemm, entry, bytes + kCublasPart, p.stream);
    if (!why.empty()) return passed(why);
  }
  // D starts as C where they are apart: fastgemm computes in place. Should fastgemm then decline, cuBLASLt rewrites
  // D whole from C.
  if (p.copy_from != nullptr)
    for (int64_t i = 0; i < p.batch; ++i)
      if (cudaMemcpy2DAsync(p.c + i * p.stride_c, p.ldc * sizeof(float), p.copy_from + i * p.stride_c,
                            p.ldc * sizeof(float), p.m * sizeof(float), p.n, cudaMemcpyDeviceToDevice,
                            p.stream) != cudaSuccess) {
        (void)cudaGetLastError();
        return passed("the copy of C into D could not be enqueued");
      }
  // Where fastgemm writes: C, or with alpha and beta on the device the scratch, dense, which scale_product then
  // reads into C.
  float *target = p.c;
  int64_t target_ld = p.ldc, target_stride = p.stride_c;
  float alpha = p.alpha, beta = p.beta;
  if (device_scalars) {
    const size_t product_bytes =
        sizeof(float) * static_cast<size_t>(p.m) * static_cast<size_t>(p.n) * static_cast<size_t>(p.batch);
    if (product_bytes > entry->scratch.bytes) {
      const std::string why = grow_scratch(entry, product_bytes, p.stream);
      if (!why.empty()) return passed(why);
    }
    // The last reader of the scratch may be on another stream (another cuBLAS handle of this thread).
    if (entry->scratch_recorded && cudaStreamWaitEvent(p.stream, entry->scratch_use, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      return passed("the product's scratch cannot be ordered after its last use");
    }
    target = static_cast<float *>(entry->scratch.memory), target_ld = p.m, target_stride = p.m * p.n;
    alpha = 1.0f, beta = 0.0f;
  }
  status = p.batch == 1 ? fastgemm->sgemm(entry->handle, FG_COL_MAJOR, op_a, op_b, p.m, p.n, p.k, alpha, p.a, p.lda,
                                          p.b, p.ldb, beta, target, target_ld)
                        : fastgemm->sgemm_strided_batched(entry->handle, FG_COL_MAJOR, op_a, op_b, p.m, p.n, p.k, alpha,
                                                          p.a, p.lda, p.stride_a, p.b, p.ldb, p.stride_b, beta, target,
                                                          target_ld, target_stride, p.batch);
  if (status != FG_STATUS_SUCCESS) {
    // Refusals found before any work was enqueued leave C untouched, and with beta == 0 (or C apart from D, which
    // fastgemm never writes) cuBLAS rewrites the output whole after whatever was enqueued: cuBLAS computes it.
    // Otherwise part of C may be written, and no result is right.
    const bool untouched = status == FG_STATUS_INVALID_VALUE || status == FG_STATUS_NOT_SUPPORTED ||
                           status == FG_STATUS_ALLOC_FAILED || status == FG_STATUS_NO_DEVICE;
    Served result = passed(failure(*fastgemm, p.batch == 1 ? "fg_sgemm" : "fg_sgemm_strided_batched", status));
    if (!untouched && !device_scalars && p.beta != 0.0f && p.copy_from == nullptr) {
      result.computed = true;
      result.status = CUBLAS_STATUS_EXECUTION_FAILED;
    }
    return result;
  }
  if (device_scalars) {
    if (scale_product(p.c, p.ldc, p.stride_c, target, p.m, p.n, p.batch, p.alpha_device, p.beta_device, p.stream) !=
        cudaSuccess) {
      (void)cudaGetLastError();
      return passed("the scaling of the product by alpha and beta on the device could not be enqueued");
    }
    if (cudaEventRecord(entry->scratch_use, p.stream) == cudaSuccess) {
      entry->scratch_recorded = true;
    } else {
      // Its last reader unknown, the buffer is left as it is (never freed) and the next call takes a new one.
      (void)cudaGetLastError();
      entry->scratch = Workspace{};
      entry->scratch_recorded = false;
    }
  }
  Served served;
  served.computed = true;
  if (capturing) {
    entry->workspace.captured = true;
    if (settings().log) served.why = "captured: each replay chooses on the device";
    return served;
  }
  if (cudaEventRecord(entry->last_use, p.stream) == cudaSuccess) {
    entry->recorded = true;
  } else {
    (void)cudaGetLastError();
    entry->workspace.captured = true;  // its last use is unknown: never freed
  }
  remember(entry, key, bytes);
  if (settings().log)
    served.why = outcome(*fastgemm, entry->handle) + (device_scalars ? "; alpha and beta read on the device" : "");
  return served;
}

}  // namespace fastgemm_cublas
