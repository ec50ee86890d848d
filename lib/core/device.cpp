// SPDX-License-Identifier: Apache-2.0
#include "core/device.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>

#include "core/check.hpp"

namespace fastgemm::detail {
namespace {

// The driver functions the library calls, looked up once per process.
struct DriverTable {
  CUresult (*ctx_get_current)(CUcontext *) = nullptr;
  CUresult (*ctx_push_current)(CUcontext) = nullptr;
  CUresult (*ctx_pop_current)(CUcontext *) = nullptr;
  CUresult (*primary_ctx_retain)(CUcontext *, CUdevice) = nullptr;
  CUresult (*primary_ctx_release)(CUdevice) = nullptr;
  CUresult (*primary_ctx_get_state)(CUdevice, unsigned int *, int *) = nullptr;
  CUresult (*pointer_get_attributes)(unsigned int, CUpointer_attribute *, void **, CUdeviceptr) = nullptr;
  CUresult (*get_error_name)(CUresult, const char **) = nullptr;
  Status loaded;
};

template <typename Function>
Status look_up(const char *symbol, Function *out) {
  void *function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  FG_RETURN_IF_ERROR(cuda_status(cudaGetDriverEntryPointByVersion(symbol, &function, 12000, cudaEnableDefault, &found),
                                 "cudaGetDriverEntryPointByVersion"));
  if (found != cudaDriverEntryPointSuccess || function == nullptr)
    return Status::failure(StatusCode::no_device, std::string("the CUDA driver has no ") + symbol);
  *out = reinterpret_cast<Function>(function);
  return Status::success();
}

DriverTable load_driver() {
  DriverTable table;
  table.loaded = [&]() -> Status {
    FG_RETURN_IF_ERROR(look_up("cuCtxGetCurrent", &table.ctx_get_current));
    FG_RETURN_IF_ERROR(look_up("cuCtxPushCurrent", &table.ctx_push_current));
    FG_RETURN_IF_ERROR(look_up("cuCtxPopCurrent", &table.ctx_pop_current));
    FG_RETURN_IF_ERROR(look_up("cuDevicePrimaryCtxRetain", &table.primary_ctx_retain));
    FG_RETURN_IF_ERROR(look_up("cuDevicePrimaryCtxRelease", &table.primary_ctx_release));
    FG_RETURN_IF_ERROR(look_up("cuDevicePrimaryCtxGetState", &table.primary_ctx_get_state));
    FG_RETURN_IF_ERROR(look_up("cuPointerGetAttributes", &table.pointer_get_attributes));
    FG_RETURN_IF_ERROR(look_up("cuGetErrorName", &table.get_error_name));
    return Status::success();
  }();
  return table;
}

const DriverTable &driver() {
  static const DriverTable table = load_driver();
  return table;
}

Status driver_status(CUresult result, const char *call) {
  if (result == CUDA_SUCCESS) return Status::success();
  const char *name = nullptr;
  if (driver().get_error_name == nullptr || driver().get_error_name(result, &name) != CUDA_SUCCESS) name = nullptr;
  const StatusCode code = result == CUDA_ERROR_OUT_OF_MEMORY ? StatusCode::alloc_failed : StatusCode::cuda_error;
  return Status::failure(code, std::string(call) + " failed: " + (name != nullptr ? name : "unknown driver error"),
                         static_cast<int>(result));
}

}  // namespace

Status query_current_device(DeviceInfo *info) {
  int count = 0;
  FG_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count == 0) return cuda_status(cudaErrorNoDevice, "cudaGetDeviceCount");
  FG_RETURN_IF_ERROR(driver().loaded);
  int ordinal = 0;
  FG_CUDA_CHECK(cudaGetDevice(&ordinal));
  DeviceInfo result;
  result.ordinal = ordinal;
  int value = 0;
  FG_CUDA_CHECK(cudaDeviceGetAttribute(&result.cc_major, cudaDevAttrComputeCapabilityMajor, ordinal));
  FG_CUDA_CHECK(cudaDeviceGetAttribute(&result.cc_minor, cudaDevAttrComputeCapabilityMinor, ordinal));
  FG_CUDA_CHECK(cudaDeviceGetAttribute(&result.sm_count, cudaDevAttrMultiProcessorCount, ordinal));
  FG_CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal));
  result.smem_per_block_optin = static_cast<size_t>(value);
  FG_CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrL2CacheSize, ordinal));
  result.l2_bytes = static_cast<size_t>(value);
  CUcontext primary = nullptr;
  FG_RETURN_IF_ERROR(driver_status(driver().primary_ctx_retain(&primary, ordinal), "cuDevicePrimaryCtxRetain"));
  result.primary_context = primary;
  *info = result;
  return Status::success();
}

std::recursive_mutex &teardown_mutex() {
  // Never destroyed: handles that live in other libraries' statics may be torn down after this library's are.
  static std::recursive_mutex *const mutex = new std::recursive_mutex;
  return *mutex;
}

void release_device(const DeviceInfo &info) {
  // Fails only for a device the driver no longer knows; the handle is gone either way.
  if (info.primary_context != nullptr) (void)driver().primary_ctx_release(info.ordinal);
}

Status DeviceGuard::enter(const DeviceInfo &device) {
  const auto context = static_cast<CUcontext>(device.primary_context);
  CUcontext current = nullptr;
  FG_RETURN_IF_ERROR(driver_status(driver().ctx_get_current(&current), "cuCtxGetCurrent"));
  if (current == context) return Status::success();
  FG_RETURN_IF_ERROR(driver_status(driver().ctx_push_current(context), "cuCtxPushCurrent"));
  pushed_ = true;
  return Status::success();
}

Status DeviceGuard::enter(int ordinal) {
  FG_RETURN_IF_ERROR(driver().loaded);
  CUcontext context = nullptr;
  FG_RETURN_IF_ERROR(driver_status(driver().primary_ctx_retain(&context, ordinal), "cuDevicePrimaryCtxRetain"));
  retained_ = ordinal;
  DeviceInfo device;
  device.ordinal = ordinal;
  device.primary_context = context;
  return enter(device);
}

DeviceGuard::~DeviceGuard() {
  // Popping what enter() pushed cannot fail while it is on top; the call's status is decided already.
  CUcontext popped = nullptr;
  if (pushed_) (void)driver().ctx_pop_current(&popped);
  if (retained_ >= 0) (void)driver().primary_ctx_release(retained_);
}

namespace {

// The devices on which the calling thread has enqueued work on its per-thread stream through fastgemm, waited
// for when the thread exits. C++ thread-local destructors run before the CUDA runtime's own per-thread
// teardown (pthread key destructors), so the streams are still there to wait for.
class PerThreadStreamsAtExit {
 public:
  void add(int ordinal) { ordinals_ |= uint64_t{1} << ordinal; }
  ~PerThreadStreamsAtExit() {
    for (int ordinal = 0; ordinal < 64; ++ordinal) {
      if ((ordinals_ >> ordinal & 1) == 0) continue;
      // A primary context no longer active was destroyed, which waited for its work: nothing is left in
      // flight, and retaining it here would create a context on the way out.
      unsigned int flags = 0;
      int active = 0;
      if (driver().primary_ctx_get_state(ordinal, &flags, &active) != CUDA_SUCCESS || active == 0) continue;
      DeviceGuard guard;
      if (guard.enter(ordinal).ok()) (void)cudaStreamSynchronize(cudaStreamPerThread);
    }
  }

 private:
  uint64_t ordinals_ = 0;
};

thread_local uint64_t t_per_thread_stream_devices = 0;  // trivially destructible: the per-call test is cheap
thread_local PerThreadStreamsAtExit t_per_thread_streams_at_exit;

}  // namespace

void wait_for_per_thread_stream_at_exit(const DeviceInfo &device) {
  if (device.ordinal < 0 || device.ordinal >= 64) return;
  const uint64_t bit = uint64_t{1} << device.ordinal;
  if ((t_per_thread_stream_devices & bit) != 0) return;
  t_per_thread_stream_devices |= bit;
  t_per_thread_streams_at_exit.add(device.ordinal);
}

Status query_pointer(const void *pointer, PointerAttributes *attributes) {
  FG_RETURN_IF_ERROR(driver().loaded);
  // Each value gets 8 zeroed bytes: the driver writes an int, a bool, a pointer or a size_t.
  unsigned long long memory_type = 0, ordinal = 0, managed = 0, range_begin = 0, range_bytes = 0, buffer_id = 0;
  CUpointer_attribute names[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_IS_MANAGED,  CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE,  CU_POINTER_ATTRIBUTE_BUFFER_ID};
  void *values[] = {&memory_type, &ordinal, &managed, &range_begin, &range_bytes, &buffer_id};
  FG_RETURN_IF_ERROR(
      driver_status(driver().pointer_get_attributes(6, names, values, reinterpret_cast<CUdeviceptr>(pointer)),
                    "cuPointerGetAttributes"));
  PointerAttributes result;
  if (static_cast<unsigned int>(managed) != 0) {
    result.memory = PointerAttributes::Memory::managed;
  } else if (static_cast<unsigned int>(memory_type) == CU_MEMORYTYPE_DEVICE) {
    result.memory = PointerAttributes::Memory::device;
  } else if (static_cast<unsigned int>(memory_type) == CU_MEMORYTYPE_HOST) {
    result.memory = PointerAttributes::Memory::host;
  }
  result.device = static_cast<int>(ordinal);
  result.range_begin = static_cast<uintptr_t>(range_begin);
  result.range_bytes = static_cast<size_t>(range_bytes);
  result.buffer_id = buffer_id;
  *attributes = result;
  return Status::success();
}

Status kernel_node_launch(cudaGraphNode_t node, KernelNodeLaunch *launch) {
  // Looked up on first use, apart from the table: a driver without it fails this query only.
  using GetParams = CUresult (*)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v2 *);
  static const GetParams get_params = [] {
    GetParams function = nullptr;
    return look_up("cuGraphKernelNodeGetParams", &function).ok() ? function : nullptr;
  }();
  if (get_params == nullptr)
    return Status::failure(StatusCode::not_supported, "the CUDA driver has no cuGraphKernelNodeGetParams");
  CUDA_KERNEL_NODE_PARAMS_v2 params = {};
  FG_RETURN_IF_ERROR(driver_status(get_params(node, &params), "cuGraphKernelNodeGetParams"));
  launch->function = params.func;
  const unsigned int grid[3] = {params.gridDimX, params.gridDimY, params.gridDimZ};
  const unsigned int block[3] = {params.blockDimX, params.blockDimY, params.blockDimZ};
  for (int axis = 0; axis < 3; ++axis) {
    launch->grid[axis] = grid[axis];
    launch->block[axis] = block[axis];
  }
  launch->shared_bytes = params.sharedMemBytes;
  return Status::success();
}

Status query_buffer_id(const void *pointer, uint64_t *buffer_id) {
  FG_RETURN_IF_ERROR(driver().loaded);
  unsigned long long id = 0;
  CUpointer_attribute name = CU_POINTER_ATTRIBUTE_BUFFER_ID;
  void *value = &id;
  FG_RETURN_IF_ERROR(
      driver_status(driver().pointer_get_attributes(1, &name, &value, reinterpret_cast<CUdeviceptr>(pointer)),
                    "cuPointerGetAttributes"));
  *buffer_id = id;
  return Status::success();
}

Status PointerCache::query(const void *pointer, PointerAttributes *attributes) {
  uint64_t id = 0;
  FG_RETURN_IF_ERROR(id_(pointer, &id));
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  if (id != 0)
    for (const PointerAttributes &entry : entries_)
      // The range check keeps an answer to the address it was given for, whatever the driver's ids name.
      if (entry.buffer_id == id && address - entry.range_begin < entry.range_bytes) {
        *attributes = entry;
        return Status::success();
      }
  PointerAttributes fresh;
  FG_RETURN_IF_ERROR(full_(pointer, &fresh));
  const bool in_range = fresh.range_bytes > 0 && address - fresh.range_begin < fresh.range_bytes;
  if (fresh.buffer_id != 0 && in_range) {
    entries_[next_] = fresh;
    next_ = (next_ + 1) % kEntries;
  }
  *attributes = fresh;
  return Status::success();
}

}  // namespace fastgemm::detail
