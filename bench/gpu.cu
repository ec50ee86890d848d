// SPDX-License-Identifier: Apache-2.0
#include "gpu.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "launch.cuh"
#include "squared_norms.cuh"
#include "text.hpp"

namespace bench {
namespace {

__device__ uint64_t splitmix64(uint64_t state) {
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

template <typename T>
__global__ void fill_uniform_kernel(T *data, int64_t count, uint64_t seed) {
  // u in [0, 2^bits) and u + 1/2 are exact in T, so (u + 1/2) / 2^(bits-1) - 1 lies in (-1, 1) and
  // never equals 0 (that would need u + 1/2 = 2^(bits-1)).
  constexpr int bits = std::numeric_limits<T>::digits - 1;
  const T scale = T(1) / static_cast<T>(uint64_t{1} << (bits - 1));
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const uint64_t u = splitmix64(seed + static_cast<uint64_t>(i + 1) * 0x9E3779B97F4A7C15ull) >> (64 - bits);
    data[i] = (static_cast<T>(u) + T(0.5)) * scale - T(1);
  }
}

// Several independent 128-bit loads in flight per thread are what it takes to saturate DRAM.
constexpr int kSweepUnroll = 4;

__global__ void read_sweep_kernel(const float4 *__restrict__ data, int64_t count, float *sink) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float sum = 0.0f;
  for (; i + (kSweepUnroll - 1) * stride < count; i += kSweepUnroll * stride) {
    float4 values[kSweepUnroll];
#pragma unroll
    for (int u = 0; u < kSweepUnroll; ++u) values[u] = data[i + u * stride];
#pragma unroll
    for (int u = 0; u < kSweepUnroll; ++u) sum += values[u].x + values[u].y + values[u].z + values[u].w;
  }
  for (; i < count; i += stride) {
    const float4 value = data[i];
    sum += value.x + value.y + value.z + value.w;
  }
  // The compiler must keep the loads, and real stores would be traffic of their own: store only under a
  // condition it cannot rule out and that data from fill_uniform never meets.
  if (sum == 1e30f) *sink = sum;
}

__global__ void empty_kernel() {}

// FP32 lanes per SM, from the CUDA programming guide's arithmetic throughput table: the architectures
// with 64 are listed; every other one (Maxwell, GP10x, GA10x, Ada, Hopper, Blackwell) has 128.
struct ArchLanes {
  int major;
  int minor;
  int lanes;
};
constexpr ArchLanes kFp32LanesPerSm[] = {{6, 0, 64}, {7, 0, 64}, {7, 2, 64}, {7, 5, 64}, {8, 0, 64}};

int fp32_lanes_per_sm(int major, int minor) {
  for (const ArchLanes &arch : kFp32LanesPerSm) {
    if (arch.major == major && arch.minor == minor) return arch.lanes;
  }
  return 128;
}

}  // namespace

void check_cuda(cudaError_t error, const char *call) {
  if (error == cudaSuccess) return;
  throw BenchError(format("%s failed: %s (%s)", call, cudaGetErrorString(error), cudaGetErrorName(error)));
}

void check_fastgemm(fg_status_t status, const char *call) {
  if (status == FG_STATUS_SUCCESS) return;
  const std::string message = fg_last_error_message();
  throw BenchError(format("%s returned %s: %s", call, fg_status_name(status),
                          message.empty() ? fg_status_string(status) : message.c_str()));
}

bool device_still_usable() {
  (void)cudaGetLastError();
  return cudaDeviceSynchronize() == cudaSuccess;
}

DeviceInfo query_device(int ordinal) {
  cudaDeviceProp properties = {};
  check_cuda(cudaGetDeviceProperties(&properties, ordinal), "cudaGetDeviceProperties");
  int clock_khz = 0;
  check_cuda(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, ordinal), "cudaDeviceGetAttribute");
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = properties.name;
  info.cc_major = properties.major;
  info.cc_minor = properties.minor;
  info.sm_count = properties.multiProcessorCount;
  info.clock_mhz = clock_khz / 1000.0;
  info.fp32_lanes_per_sm = fp32_lanes_per_sm(info.cc_major, info.cc_minor);
  info.peak_gflops = 2.0 * info.sm_count * info.fp32_lanes_per_sm * info.clock_mhz / 1000.0;
  // Dense INT8 tensor-core operations per SM and clock: 4096 on compute capability 8.0, 8192 on 9.0 (1979 TOPS for
  // the H100 SXM's 132 SMs at 1830 MHz); not tabulated for the others.
  const int int8_per_clock = info.cc_major == 8 && info.cc_minor == 0 ? 4096 : info.cc_major == 9 ? 8192 : 0;
  info.peak_int8_tops = static_cast<double>(info.sm_count) * int8_per_clock * info.clock_mhz * 1e-6;
  info.l2_bytes = static_cast<size_t>(properties.l2CacheSize);
  check_cuda(cudaDriverGetVersion(&info.driver_version), "cudaDriverGetVersion");
  check_cuda(cudaRuntimeGetVersion(&info.runtime_version), "cudaRuntimeGetVersion");
  return info;
}

std::string cuda_version_string(int version) { return format("%d.%d", version / 1000, version % 1000 / 10); }

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  const std::string call = format("cudaMalloc(%s)", byte_size(static_cast<double>(bytes)).c_str());
  check_cuda(cudaMalloc(&data_, bytes), call.c_str());
}

DeviceBuffer::~DeviceBuffer() {
  // A failure here means the device is already lost, which the failing call before it has reported.
  if (data_ != nullptr) (void)cudaFree(data_);
}

template <typename T>
void fill_uniform(T *data, int64_t count, uint64_t seed) {
  launch("fill_uniform_kernel", fill_uniform_kernel<T>, blocks_for(count), data, count, seed);
}

void poison(void *data, size_t bytes) { check_cuda(cudaMemsetAsync(data, 0xFF, bytes, 0), "cudaMemsetAsync"); }

template <typename T>
double relative_error(const T *result, const T *reference, int64_t count) {
  DeviceBuffer sums(2 * sizeof(double));
  check_cuda(cudaMemsetAsync(sums.get(), 0, sums.bytes(), 0), "cudaMemsetAsync");
  launch("squared_norms_kernel", squared_norms_kernel<T, T>, blocks_for(count), result, reference, count,
         sums.as<double>());
  double host[2] = {0, 0};
  check_cuda(cudaMemcpy(host, sums.get(), sizeof(host), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return std::sqrt(host[0] / host[1]);
}

template void fill_uniform<float>(float *, int64_t, uint64_t);
template void fill_uniform<double>(double *, int64_t, uint64_t);
template double relative_error<float>(const float *, const float *, int64_t);
template double relative_error<double>(const double *, const double *, int64_t);

ReadSweep::ReadSweep() : sink_(sizeof(float)) {
  int device = 0;
  int sm_count = 0;
  int blocks_per_sm = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, read_sweep_kernel, kThreads, 0),
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  blocks_ = std::max(1, sm_count * blocks_per_sm);
}

void launch_empty_kernel() { launch("empty_kernel", empty_kernel, 1); }

void ReadSweep::operator()(const void *data, size_t bytes) const {
  launch("read_sweep_kernel", read_sweep_kernel, static_cast<unsigned int>(blocks_), static_cast<const float4 *>(data),
         static_cast<int64_t>(bytes / sizeof(float4)), sink_.as<float>());
}

}  // namespace bench
