// SPDX-License-Identifier: Apache-2.0
// What the tests share: random inputs, CPU references in higher precision, error measures, device
// buffers, and the list of algorithms this build carries.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <cuda_runtime_api.h>

#include "fastgemm/fastgemm.h"

namespace fgtest {

// Runs body(begin, end) over [0, count) on the machine's cores.
template <typename Body>
void parallel_for(int64_t count, Body body) {
  const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(std::thread::hardware_concurrency(), count));
  std::vector<std::thread> threads;
  const int64_t chunk = (count + workers - 1) / workers;
  for (int64_t w = 0; w < workers; ++w) {
    const int64_t begin = w * chunk, end = std::min(count, begin + chunk);
    if (begin < end) threads.emplace_back(body, begin, end);
  }
  for (auto &thread : threads) thread.join();
}

// Deterministic uniform values in [low, high): fills differ by seed, never all zeros or ones.
void fill_uniform(std::vector<float> &values, uint64_t seed, float low = -1.0f, float high = 1.0f);
void fill_uniform(std::vector<double> &values, uint64_t seed, double low = -1.0, double high = 1.0);

// A matrix of the C ABI: rows x cols in `layout`, leading dimension ld. Element (r, c) of batch b.
inline int64_t element_offset(fg_layout_t layout, int64_t r, int64_t c, int64_t ld) {
  return layout == FG_ROW_MAJOR ? r * ld + c : c * ld + r;
}

struct GemmCase {
  fg_layout_t layout = FG_ROW_MAJOR;
  fg_op_t transa = FG_OP_N, transb = FG_OP_N;
  int64_t m = 1, n = 1, k = 1;
  float alpha = 1.0f, beta = 0.0f;
  int64_t lda = 0, ldb = 0, ldc = 0;  // 0: the smallest valid one
  int64_t batch = 1;
  int64_t stride_a = -1, stride_b = -1, stride_c = -1;  // -1: one dense matrix after the other
  int64_t offset_a = 0, offset_b = 0, offset_c = 0;     // elements between the allocation and the matrix
  bool null_ab = false;                                 // pass NULL for A and B (k == 0 or alpha == 0)
  bool batched_api = false;                             // call fg_sgemm_strided_batched

  // Fills in lds and strides left to their defaults.
  GemmCase resolved() const;
  std::string describe() const;
  // Element counts of the A, B and C allocations (offset included).
  int64_t a_elements() const, b_elements() const, c_elements() const;
  int64_t a_rows() const { return transa == FG_OP_N ? m : k; }  // op(A) is m x k; A itself a_rows x a_cols
  int64_t a_cols() const { return transa == FG_OP_N ? k : m; }
  int64_t b_rows() const { return transb == FG_OP_N ? k : n; }
  int64_t b_cols() const { return transb == FG_OP_N ? n : k; }
};

// C := alpha op(A) op(B) + beta C in double over the host copies (allocations as GemmCase describes);
// `c` is read only where beta != 0. Returns the reference for the whole C allocation: elements outside
// the products' m x n windows keep c's values. Threads share the work.
std::vector<double> reference_gemm(const GemmCase &gc, const std::vector<float> &a, const std::vector<float> &b,
                                   const std::vector<float> &c);

// ||got - ref|| / ||ref|| (Frobenius) over the elements `mask` selects (all when it is null); NaN if any
// such element of got is NaN or Inf. 0 when both are exactly zero.
template <typename T, typename R>
double relative_error(const std::vector<T> &got, const std::vector<R> &ref, const std::vector<char> *mask = nullptr);

// Whether element i of C's allocation lies inside some product's m x n window.
std::vector<char> c_window_mask(const GemmCase &gc);

// output (L x N) = matrix (L x L) * means^T in extended precision (long double for f64 input).
template <typename T>
std::vector<long double> reference_rowmean(const std::vector<T> &input, const std::vector<T> &matrix, int64_t L,
                                           int64_t M, int64_t N);

// The algorithms the build carries besides AUTO, found by asking a handle to select each id in turn.
std::vector<fg_sgemm_algo_t> carried_sgemm_algos(fg_handle_t handle);
std::vector<fg_rowmean_algo_t> carried_rowmean_algos(fg_handle_t handle);

// Device memory owned by a test.
class DeviceMemory {
 public:
  explicit DeviceMemory(size_t bytes);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
  void *get() const { return pointer_; }
  template <typename T>
  T *as() const {
    return static_cast<T *>(pointer_);
  }

 private:
  void *pointer_ = nullptr;
};

template <typename T>
void upload(DeviceMemory &memory, const std::vector<T> &values);
template <typename T>
std::vector<T> download(const DeviceMemory &memory, size_t count);

// An environment variable the test sets or unsets for the guard's life, a failed assertion included; then the value the
// process had is restored (or the variable unset), so that later tests and the library see the environment the program
// started with.
class ScopedEnvironment {
 public:
  // Remembers the variable without changing it.
  explicit ScopedEnvironment(const char *name) : name_(name) {
    const char *before = std::getenv(name);
    had_ = before != nullptr;
    if (had_) before_ = before;
  }
  // Remembers it, then sets it to `value` (nullptr unsets it).
  ScopedEnvironment(const char *name, const char *value) : ScopedEnvironment(name) { set(value); }
  ~ScopedEnvironment() {
    if (had_)
      setenv(name_, before_.c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnvironment(const ScopedEnvironment &) = delete;
  ScopedEnvironment &operator=(const ScopedEnvironment &) = delete;

  // nullptr unsets it.
  void set(const char *value) const {
    if (value != nullptr)
      setenv(name_, value, 1);
    else
      unsetenv(name_);
  }

 private:
  const char *name_;
  bool had_ = false;
  std::string before_;
};

// A file of its own in the temporary directory (made empty, so that no other test takes its name), removed at the end.
class TemporaryFile {
 public:
  explicit TemporaryFile(const char *prefix = "fastgemm-test") {
    const char *directory = std::getenv("TMPDIR");
    std::string name =
        std::string(directory != nullptr && directory[0] != '\0' ? directory : "/tmp") + "/" + prefix + "-XXXXXX";
    const int fd = mkstemp(&name[0]);
    if (fd >= 0) {
      close(fd);
      path_ = name;
    }
  }
  ~TemporaryFile() {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  TemporaryFile(const TemporaryFile &) = delete;
  TemporaryFile &operator=(const TemporaryFile &) = delete;
  // Empty where no file could be made.
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace fgtest

// A call that must succeed; on failure the message says why.
#define REQUIRE_FG_OK(call)                                                                 \
  do {                                                                                      \
    const fg_status_t fg_status_ = (call);                                                  \
    INFO(#call << " -> " << fg_status_name(fg_status_) << ": " << fg_last_error_message()); \
    REQUIRE(fg_status_ == FG_STATUS_SUCCESS);                                               \
  } while (0)

#define REQUIRE_CUDA_OK(call)                                \
  do {                                                       \
    const cudaError_t cuda_status_ = (call);                 \
    INFO(#call << " -> " << cudaGetErrorName(cuda_status_)); \
    REQUIRE(cuda_status_ == cudaSuccess);                    \
  } while (0)
