// SPDX-License-Identifier: Apache-2.0
// A flat sampling profile of the calling thread: its program counter, read every few microseconds of wall
// time by a signal while a loop runs, counted per shared object and per symbol. It says where the host time
// of a call goes (the library's own code, the CUDA driver, cuBLAS, the C library), where no profiler can be
// attached to the program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bench {

class SamplingProfile {
 public:
  // Samples every `period_us` microseconds of wall time while started; at most `capacity` samples are kept.
  SamplingProfile(int period_us, size_t capacity);
  ~SamplingProfile();
  SamplingProfile(const SamplingProfile &) = delete;
  SamplingProfile &operator=(const SamplingProfile &) = delete;

  // Whether this platform can sample (Linux on x86-64 or AArch64); the others throw BenchError.
  static bool supported();

  void start();
  void stop();
  // Forgets the samples taken so far.
  void clear();
  size_t samples() const;

  struct Count {
    std::string object;  // the shared object's file name, "[unknown]" where none holds the address
    std::string symbol;  // the function, or "+0x..." (an offset in the object) where no exported symbol covers it
    size_t samples = 0;
  };
  // Samples per object, most first.
  std::vector<Count> by_object() const;
  // Samples per symbol, most first, the first `count`.
  std::vector<Count> top_symbols(size_t count) const;

 private:
  void *timer_ = nullptr;  // a timer_t
  int period_us_ = 0;
  bool installed_ = false;
};

}  // namespace bench
