// Timing with CUDA events. Each timed call runs alone after an L2 flush, so no size is flattered by
// operands a previous call left in cache, whatever the memory a problem takes: a scheme that rotates
// several input sets would need more memory than the largest problems leave.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gpu.hpp"

namespace bench {

struct Timing {
  double min_ms = std::numeric_limits<double>::quiet_NaN();
  double median_ms = std::numeric_limits<double>::quiet_NaN();
  double max_ms = std::numeric_limits<double>::quiet_NaN();
  int repeats = 0;
};

struct TimingPolicy {
  double max_seconds = 1.0;  // wall-clock budget for the timed calls of one algorithm on one problem
  int repeats = 0;           // timed calls wanted; 0 chooses adaptively
};

class Timer {
 public:
  Timer(const DeviceInfo &device, TimingPolicy policy);
  ~Timer();
  Timer(const Timer &) = delete;
  Timer &operator=(const Timer &) = delete;

  // Times call, which enqueues one operation on the legacy default stream and throws BenchError when it
  // cannot. Warm-up calls first, then timed ones, each after an L2 flush and between its own pair of
  // events; the flush is never inside the timed interval.
  Timing measure(const std::function<void()> &call);

  // The policy in words, for the report.
  std::string describe() const;

  const ReadSweep &sweep() const { return sweep_; }

 private:
  struct Batch {
    std::vector<double> ms;
    double wall_seconds = 0;
  };
  Batch time_calls(const std::function<void()> &call, int count);

  TimingPolicy policy_;
  ReadSweep sweep_;
  DeviceBuffer flush_buffer_;
  std::vector<cudaEvent_t> starts_;
  std::vector<cudaEvent_t> stops_;
};

struct ReadBandwidth {
  double gb_per_s = 0;
  size_t swept_bytes = 0;
};

// The device's read bandwidth: the median over timed read sweeps of a buffer eight times L2 (256 MiB at
// least), so DRAM, not L2, answers.
ReadBandwidth measure_read_bandwidth(Timer &timer, const DeviceInfo &device);

}  // namespace bench
