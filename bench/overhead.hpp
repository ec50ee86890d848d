// SPDX-License-Identifier: Apache-2.0
// The parts of fastgemm-bench overhead (overhead.cpp): how a call's cost is measured, the cuBLAS handles and
// driver queries fastgemm's calls are compared with (overhead_measure.cpp), and the sampling profile of a
// problem's calls (overhead_profile.cpp).
#pragma once

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "profile.hpp"
#include "report.hpp"

namespace bench {

// Calls enqueued back to back in one timed loop: far fewer than a stream's launch queue holds, so the
// host never waits for the device inside the loop, and enough that the clock's resolution vanishes.
constexpr int kCallsPerLoop = 200;
// --profile: a sample every 97 us of wall time, a period no call's length divides evenly; a sample costs the
// loop a few microseconds (a signal), so they are sparse, over kProfileLoopFactor times the timed loops.
constexpr int kProfilePeriodUs = 97;
constexpr int kProfileLoopFactor = 4;

struct Cost {
  double host_us_median = 0;
  double host_us_min = 0;
  double device_us = kNoValue;  // per call, the whole loop between two events; NaN for host-only steps
};

// A row of the report.
struct Entry {
  std::string name;     // what was called
  std::string problem;  // the shape, or "-" for a step
  std::string ran;      // the algorithm fastgemm ran
  Cost cost;
  double over_direct_us = kNoValue;  // host time over cuBLAS called directly (32-bit entry) on the problem
};

// Times each call in loops of kCallsPerLoop calls, the calls taking turns loop by loop so that a slow
// spell of the machine hits them alike: host time per call from the loop's wall clock (the device is
// synchronized after each loop, outside it), device time per call from events around the loop.
// `streams`, when given, names the stream each call enqueues on (the events go there); otherwise the legacy one.
std::vector<Cost> measure_costs(const std::vector<std::function<void()>> &calls, int loops, bool enqueues,
                                const std::vector<cudaStream_t> &streams = {});

// The driver queries fastgemm's call path makes, looked up as the library looks them up (it does not link
// libcuda either). Each throws BenchError when the driver refuses.
// fastgemm's full query of a pointer: kind, device, managed, allocation range and id.
void query_all_attributes(const void *pointer);
// What fastgemm asks of a pointer whose allocation it has seen: the allocation's id alone.
void query_buffer_id(const void *pointer);
// cuCtxGetCurrent, fastgemm's device guard.
void query_current_context(CUcontext *context);

// A non-blocking stream with a cuBLAS handle bound to it: a program that runs its products on its own
// stream.
class StreamBlas {
 public:
  StreamBlas();
  ~StreamBlas() { release(); }
  StreamBlas(const StreamBlas &) = delete;
  StreamBlas &operator=(const StreamBlas &) = delete;
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t handle() const { return handle_; }

 private:
  void release();
  cudaStream_t stream_ = nullptr;
  cublasHandle_t handle_ = nullptr;
};

// A cuBLAS handle set up as fastgemm sets up its own: the legacy stream bound explicitly and a 32 MiB
// workspace from the stream-ordered allocator, so that a difference between it and vendor_blas() is
// cuBLAS's, not fastgemm's call path.
class ConfiguredBlas {
 public:
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;
  ConfiguredBlas();
  ~ConfiguredBlas() { release(); }
  ConfiguredBlas(const ConfiguredBlas &) = delete;
  ConfiguredBlas &operator=(const ConfiguredBlas &) = delete;
  cublasHandle_t handle() const { return handle_; }

 private:
  void release();
  cublasHandle_t handle_ = nullptr;
  void *workspace_ = nullptr;
};

// One call of a problem under --profile: its name in the report, the call, and the stream it enqueues on.
struct ProfiledCall {
  std::string name;
  std::function<void()> call;
  cudaStream_t stream = nullptr;
};

// Where the host time of each call goes: a sampling profile of kProfileLoopFactor * `loops` loops of each
// call, printed per shared object (in host microseconds per call) and added to `entries` as rows,
// then the symbols of the first call and of each other's largest excess over it, printed.
void profile_calls(SamplingProfile &profile, int loops, const std::string &problem,
                   const std::vector<ProfiledCall> &calls, std::vector<Entry> &entries);

}  // namespace bench
