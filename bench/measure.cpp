// SPDX-License-Identifier: Apache-2.0
#include "measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "text.hpp"

namespace bench {
namespace {

// Reading twice L2's size through it evicts everything else, as long as replacement is close to LRU.
constexpr size_t kFlushL2Multiple = 2;
constexpr size_t kMinFlushBytes = size_t{8} << 20;
constexpr size_t kSweepL2Multiple = 8;
constexpr size_t kMinSweepBytes = size_t{256} << 20;

// Warm-up lets clocks ramp and first-call work (module loading, workspaces) settle; it stops early once
// it has used a tenth of the budget, so a call slower than that is its own warm-up.
constexpr int kWarmupCalls = 3;
constexpr double kWarmupShareOfBudget = 0.1;

// Adaptive repeats: at least kMinRepeats calls and a fifth of the budget, at most the budget (but always
// one call) or kMaxRepeats calls.
constexpr int kMinRepeats = 10;
constexpr int kMaxRepeats = 10000;
constexpr double kTargetShareOfBudget = 0.2;

// Event pairs enqueued before one synchronization.
constexpr int kEventPairs = 64;

// Hot mode: a sample of back-to-back calls spans about this long, from at most this many calls.
constexpr double kHotSampleSeconds = 1e-3;
constexpr int kMaxHotCallsPerSample = 1000;

size_t round_to_float4(size_t bytes) { return bytes / 16 * 16; }

Timing summarize(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  Timing timing;
  const size_t n = samples.size();
  timing.repeats = static_cast<int>(n);
  timing.min_ms = samples.front();
  timing.max_ms = samples.back();
  timing.median_ms = n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return timing;
}

}  // namespace

Timer::Timer(const DeviceInfo &device, TimingPolicy policy)
    : policy_(policy), flush_buffer_(round_to_float4(std::max(kFlushL2Multiple * device.l2_bytes, kMinFlushBytes))) {
  fill_uniform(flush_buffer_.as<float>(), static_cast<int64_t>(flush_buffer_.bytes() / sizeof(float)), 0);
  starts_.reserve(kEventPairs);
  stops_.reserve(kEventPairs);
  for (int i = 0; i < kEventPairs; ++i) {
    for (std::vector<cudaEvent_t> *events : {&starts_, &stops_}) {
      cudaEvent_t event = nullptr;
      check_cuda(cudaEventCreate(&event), "cudaEventCreate");
      events->push_back(event);
    }
  }
}

Timer::~Timer() {
  // As with cudaFree: a failure here means the device is already lost, and that has been reported.
  for (const std::vector<cudaEvent_t> *events : {&starts_, &stops_}) {
    for (cudaEvent_t event : *events) (void)cudaEventDestroy(event);
  }
}

std::string Timer::describe() const {
  const std::string repeats = policy_.repeats > 0
                                  ? format("%d timed calls", policy_.repeats)
                                  : format("adaptive repeats (at least %d calls and %.3g s, at most %d calls)",
                                           kMinRepeats, kTargetShareOfBudget * policy_.max_seconds, kMaxRepeats);
  return format(
      "CUDA events around each call alone, after an L2 flush (a read of %s); up to %d warm-up calls, then %s, "
      "within %.3g s per algorithm and problem; min / median / max over the timed calls",
      byte_size(static_cast<double>(flush_buffer_.bytes())).c_str(), kWarmupCalls, repeats.c_str(),
      policy_.max_seconds);
}

std::string Timer::describe_hot() const {
  const std::string repeats = policy_.repeats > 0 ? format("%d timed samples", policy_.repeats)
                                                  : format("adaptive repeats (at least %d samples)", kMinRepeats);
  return format(
      "hot: calls back to back on the same operands, no flush; CUDA events around samples of as many calls "
      "as take about %.3g ms (at most %d), each divided by its calls; up to %d warm-up samples, then %s, within "
      "%.3g s per algorithm and problem; min / median / max over the samples",
      kHotSampleSeconds * 1e3, kMaxHotCallsPerSample, kWarmupCalls, repeats.c_str(), policy_.max_seconds);
}

Timer::Batch Timer::time_calls(const std::function<void()> &call, int count) {
  const auto begin = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) {
    sweep_(flush_buffer_.get(), flush_buffer_.bytes());
    check_cuda(cudaEventRecord(starts_[i], 0), "cudaEventRecord");
    call();
    check_cuda(cudaEventRecord(stops_[i], 0), "cudaEventRecord");
  }
  check_cuda(cudaEventSynchronize(stops_[count - 1]), "cudaEventSynchronize");
  Batch batch;
  batch.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  for (int i = 0; i < count; ++i) {
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, starts_[i], stops_[i]), "cudaEventElapsedTime");
    batch.ms.push_back(ms);
  }
  return batch;
}

Timer::Batch Timer::time_hot_samples(const std::function<void()> &call, int samples, int calls_per_sample) {
  const auto begin = std::chrono::steady_clock::now();
  for (int i = 0; i < samples; ++i) {
    check_cuda(cudaEventRecord(starts_[i], 0), "cudaEventRecord");
    for (int j = 0; j < calls_per_sample; ++j) call();
    check_cuda(cudaEventRecord(stops_[i], 0), "cudaEventRecord");
  }
  check_cuda(cudaEventSynchronize(stops_[samples - 1]), "cudaEventSynchronize");
  Batch batch;
  batch.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  for (int i = 0; i < samples; ++i) {
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, starts_[i], stops_[i]), "cudaEventElapsedTime");
    batch.ms.push_back(ms / calls_per_sample);
  }
  return batch;
}

Timing Timer::repeat(const std::function<Batch(int samples)> &time_samples) {
  const double budget = policy_.max_seconds;
  double warmup_seconds = 0;
  int warmup_calls = 0;
  while (warmup_calls < kWarmupCalls && warmup_seconds < kWarmupShareOfBudget * budget) {
    warmup_seconds += time_samples(1).wall_seconds;
    ++warmup_calls;
  }
  // Floored so that a clock too coarse to see a call cannot divide by zero.
  constexpr double kShortestCallSeconds = 1e-7;
  double seconds_per_call = std::max(warmup_seconds / warmup_calls, kShortestCallSeconds);

  const int min_repeats = policy_.repeats > 0 ? policy_.repeats : kMinRepeats;
  const int max_repeats = policy_.repeats > 0 ? policy_.repeats : kMaxRepeats;
  const double target = kTargetShareOfBudget * budget;
  std::vector<double> samples;
  double spent = 0;
  while (static_cast<int>(samples.size()) < max_repeats) {
    const int done = static_cast<int>(samples.size());
    if ((done >= min_repeats && spent >= target) || (done > 0 && spent >= budget)) break;
    // Aim each batch at what is still wanted, without running past the budget.
    const double wanted = std::max(std::ceil((target - spent) / seconds_per_call), double(min_repeats - done));
    const double fitting = std::floor((budget - spent) / seconds_per_call);
    const double room = std::min(kEventPairs, max_repeats - done);
    const int count = static_cast<int>(std::clamp(std::min(wanted, fitting), 1.0, room));
    const Batch batch = time_samples(count);
    samples.insert(samples.end(), batch.ms.begin(), batch.ms.end());
    spent += batch.wall_seconds;
    seconds_per_call = std::max(batch.wall_seconds / count, kShortestCallSeconds);
  }
  return summarize(std::move(samples));
}

Timing Timer::measure(const std::function<void()> &call) {
  return repeat([&](int samples) { return time_calls(call, samples); });
}

Timing Timer::measure_hot(const std::function<void()> &call) {
  // One call's time sizes the samples: enough calls that a sample spans about kHotSampleSeconds, so the
  // events' own cost and resolution vanish, and never more than the budget allows.
  const Batch probe = time_hot_samples(call, 1, 1);
  const double seconds_per_call = std::max(probe.ms.front() * 1e-3, 1e-7);
  const int calls_per_sample = static_cast<int>(
      std::clamp(std::ceil(std::min(kHotSampleSeconds, kTargetShareOfBudget * policy_.max_seconds) / seconds_per_call),
                 1.0, double(kMaxHotCallsPerSample)));
  return repeat([&](int samples) { return time_hot_samples(call, samples, calls_per_sample); });
}

std::pair<Timing, Timing> Timer::measure_hot_pair(const std::function<void()> &call,
                                                  const std::function<void()> &other) {
  const auto calls_per_sample = [&](const std::function<void()> &timed) {
    const double seconds_per_call = std::max(time_hot_samples(timed, 1, 1).ms.front() * 1e-3, 1e-7);
    return static_cast<int>(std::clamp(
        std::ceil(std::min(kHotSampleSeconds, kTargetShareOfBudget * policy_.max_seconds) / seconds_per_call), 1.0,
        double(kMaxHotCallsPerSample)));
  };
  const int call_count = calls_per_sample(call), other_count = calls_per_sample(other);
  std::vector<double> other_ms;
  // A batch of `samples` turns, each one sample of call and one of other; its wall time counts both.
  const Timing timing = repeat([&](int samples) {
    Batch batch;
    for (int i = 0; i < samples; ++i) {
      Batch mine = time_hot_samples(call, 1, call_count);
      const Batch theirs = time_hot_samples(other, 1, other_count);
      batch.ms.push_back(mine.ms.front());
      batch.wall_seconds += mine.wall_seconds + theirs.wall_seconds;
      other_ms.push_back(theirs.ms.front());
    }
    return batch;
  });
  // The first of other's samples were taken during the warm-up, which timing leaves out too.
  other_ms.erase(other_ms.begin(), other_ms.end() - timing.repeats);
  return {timing, summarize(std::move(other_ms))};
}

ReadBandwidth measure_read_bandwidth(Timer &timer, const DeviceInfo &device) {
  DeviceBuffer buffer(round_to_float4(std::max(kSweepL2Multiple * device.l2_bytes, kMinSweepBytes)));
  fill_uniform(buffer.as<float>(), static_cast<int64_t>(buffer.bytes() / sizeof(float)), 1);
  const Timing timing = timer.measure([&] { timer.sweep()(buffer.get(), buffer.bytes()); });
  ReadBandwidth result;
  result.swept_bytes = buffer.bytes();
  result.gb_per_s = static_cast<double>(buffer.bytes()) / (timing.median_ms * 1e-3) / 1e9;
  return result;
}

}  // namespace bench
