// SPDX-License-Identifier: Apache-2.0
// Timing with CUDA events, in two modes. Cold (the default): each timed call runs alone after an L2
// flush, so no size is flattered by operands a previous call left in cache, whatever the memory a problem
// takes: a scheme that rotates several input sets would need more memory than the largest problems leave.
// Hot: calls back to back on the same operands with nothing in between, as a loop in an application makes
// them, so what the host spends per call and what L2 still holds count as they do there.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <limits>
#include <string>
#include <utility>
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

  // The same call in hot mode: samples of back-to-back calls (as many as take about a millisecond, at
  // least one), each sample between one pair of events and divided by its calls; no flush anywhere.
  // Warm-up and repeats follow the policy as in measure(), counting samples.
  Timing measure_hot(const std::function<void()> &call);

  // Hot mode for two calls at once, their samples taking turns, so that a slow spell of the host (which
  // sets the pace of calls too small to keep the device busy) hits both alike: {call's, other's} timing.
  std::pair<Timing, Timing> measure_hot_pair(const std::function<void()> &call, const std::function<void()> &other);

  // The policy in words, for the report.
  std::string describe() const;
  std::string describe_hot() const;

  const ReadSweep &sweep() const { return sweep_; }

 private:
  struct Batch {
    std::vector<double> ms;
    double wall_seconds = 0;
  };
  Batch time_calls(const std::function<void()> &call, int count);
  Batch time_hot_samples(const std::function<void()> &call, int samples, int calls_per_sample);
  // measure()'s warm-up and adaptive repeats over any way of timing a batch of samples.
  Timing repeat(const std::function<Batch(int samples)> &time_samples);

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
