// SPDX-License-Identifier: Apache-2.0
// The bench's own device work: error checks, owned allocations, random inputs, the result check and
// the read-only sweep that both flushes L2 and measures read bandwidth.
#pragma once

#include <cuda_runtime_api.h>
#include <fastgemm/fastgemm.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace bench {

// A failed CUDA or fastgemm call; what() names the call and the reason.
class BenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throw BenchError unless the call succeeded. A fastgemm failure carries the status name and
// fg_last_error_message(), a CUDA failure the error's name and string.
void check_cuda(cudaError_t error, const char *call);
void check_fastgemm(fg_status_t status, const char *call);

// After a failure: clears a recoverable error and returns whether the device still runs work. False
// after a kernel fault, which poisons the whole context.
bool device_still_usable();

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  double clock_mhz = 0;
  int fp32_lanes_per_sm = 0;
  double peak_gflops = 0;     // sm_count x lanes x clock x 2 (one FFMA is two flops)
  double peak_int8_tops = 0;  // dense INT8 tensor-core operations: sm_count x per SM per clock x clock; 0: unknown
  size_t l2_bytes = 0;
  int driver_version = 0;   // CUDA version the driver supports, e.g. 13000
  int runtime_version = 0;  // CUDA runtime the bench runs on
};

DeviceInfo query_device(int ordinal);

// "13.0" from 13000.
std::string cuda_version_string(int version);

// Owns one cudaMalloc allocation.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  void *get() const { return data_; }
  size_t bytes() const { return bytes_; }
  template <typename T>
  T *as() const {
    return static_cast<T *>(data_);
  }

 private:
  void *data_ = nullptr;
  size_t bytes_ = 0;
};

// Fills count values, uniform in (-1, 1) and never zero, from a counter-based generator on the device:
// the same seed gives the same data, and nothing crosses PCIe.
template <typename T>
void fill_uniform(T *data, int64_t count, uint64_t seed);

// Sets every byte to 0xFF, a NaN in both float and double, so an element a call fails to write
// shows up in the check.
void poison(void *data, size_t bytes);

// ||result - reference||_F / ||reference||_F over count values, accumulated in double on the device.
// NaN when result holds a NaN or the reference is all zeros.
template <typename T>
double relative_error(const T *result, const T *reference, int64_t count);

// Enqueues a kernel of one block that does nothing on the legacy default stream: what launching any
// kernel costs the host, the floor under every call of a library.
void launch_empty_kernel();

// A kernel that reads a buffer once with 128-bit loads and writes nothing: timed, it gives the
// device's read bandwidth; run over a buffer larger than L2, it leaves L2 holding only clean lines of
// that buffer, so a timed call after it finds none of its operands cached and pays no write-back of
// somebody else's dirty lines.
class ReadSweep {
 public:
  ReadSweep();
  // Enqueues one sweep over bytes (a multiple of 16) on the legacy default stream.
  void operator()(const void *data, size_t bytes) const;

 private:
  int blocks_ = 0;
  DeviceBuffer sink_;
};

}  // namespace bench
