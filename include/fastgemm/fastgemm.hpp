// SPDX-License-Identifier: Apache-2.0
// fastgemm for C++: a header-only layer over the C ABI in fastgemm.h. A move-only Handle owns an
// fg_handle_t; every failing call throws fastgemm::Error carrying the status and the library's message.
// Requires C++11.
#ifndef FASTGEMM_FASTGEMM_HPP
#define FASTGEMM_FASTGEMM_HPP

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fastgemm/fastgemm.h"

namespace fastgemm {

// A failed call: status() is the fg_status_t, what() the message fg_last_error_message() gave.
class Error : public std::runtime_error {
 public:
  Error(fg_status_t status, const std::string &message)
      : std::runtime_error(message.empty() ? std::string(fg_status_name(status)) : message), status_(status) {}
  fg_status_t status() const noexcept { return status_; }
  const char *status_name() const noexcept { return fg_status_name(status_); }

 private:
  fg_status_t status_;
};

// Throws Error for any status but FG_STATUS_SUCCESS.
inline void check(fg_status_t status) {
  if (status != FG_STATUS_SUCCESS) throw Error(status, fg_last_error_message());
}

// "fp32" or "fp32_emulated", a static string (fg_math_mode_name); "unknown" for any other value.
inline const char *math_mode_name(fg_math_mode_t mode) noexcept { return fg_math_mode_name(mode); }

// "run" or "shape", a static string (fg_reproducibility_name); "unknown" for any other value.
inline const char *reproducibility_name(fg_reproducibility_t level) noexcept { return fg_reproducibility_name(level); }

// What the last sgemm call of a handle did in the emulated math mode (fg_get_last_sgemm_emulation): the
// moduli count of its INT8 products (0 when it ran no emulation) and the elements of C recomputed in FP32.
struct SgemmEmulation {
  int moduli;
  int64_t fp32_elements;
};

class Handle {
 public:
  // Binds to the calling thread's current device; throws Error (FG_STATUS_NO_DEVICE without a GPU).
  Handle() { check(fg_create(&handle_)); }
  explicit Handle(cudaStream_t stream) : Handle() { set_stream(stream); }
  ~Handle() { fg_destroy(handle_); }
  Handle(Handle &&other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  Handle &operator=(Handle &&other) noexcept {
    if (this != &other) {
      fg_destroy(handle_);
      handle_ = other.handle_;
      other.handle_ = nullptr;
    }
    return *this;
  }
  Handle(const Handle &) = delete;
  Handle &operator=(const Handle &) = delete;

  // The C handle, for calls this class does not wrap; NULL after a move.
  fg_handle_t get() const noexcept { return handle_; }

  void set_stream(cudaStream_t stream) { check(fg_set_stream(handle_, stream)); }
  cudaStream_t stream() const {
    cudaStream_t stream = nullptr;
    check(fg_get_stream(handle_, &stream));
    return stream;
  }

  // Caller-owned device workspace (fg_set_workspace); nullptr, 0 returns to a handle-owned one.
  void set_workspace(void *workspace, size_t bytes) { check(fg_set_workspace(handle_, workspace, bytes)); }
  // The workspace the selected algorithm needs for the problem (fg_sgemm_workspace_size, fg_rowmean_workspace_size).
  size_t sgemm_workspace_size(fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m, int64_t n, int64_t k,
                              int64_t batch_count = 1) const {
    size_t bytes = 0;
    check(fg_sgemm_workspace_size(handle_, layout, transa, transb, m, n, k, batch_count, &bytes));
    return bytes;
  }
  size_t rowmean_workspace_size(fg_dtype_t dtype, int64_t L, int64_t M, int64_t N) const {
    size_t bytes = 0;
    check(fg_rowmean_workspace_size(handle_, dtype, L, M, N, &bytes));
    return bytes;
  }

  void set_sgemm_algo(fg_sgemm_algo_t algo) { check(fg_set_sgemm_algo(handle_, algo)); }
  fg_sgemm_algo_t sgemm_algo() const {
    fg_sgemm_algo_t algo = FG_SGEMM_AUTO;
    check(fg_get_sgemm_algo(handle_, &algo));
    return algo;
  }
  fg_sgemm_algo_t last_sgemm_algo() const {
    fg_sgemm_algo_t algo = FG_SGEMM_AUTO;
    check(fg_get_last_sgemm_algo(handle_, &algo));
    return algo;
  }
  SgemmEmulation last_sgemm_emulation() const {
    SgemmEmulation emulation = {0, 0};
    check(fg_get_last_sgemm_emulation(handle_, &emulation.moduli, &emulation.fp32_elements));
    return emulation;
  }
  // The math mode of later sgemm calls (fg_set_math_mode): FG_MATH_FP32, or FG_MATH_FP32_EMULATED for FP32
  // accuracy from tensor-core products where that is faster.
  void set_math_mode(fg_math_mode_t mode) { check(fg_set_math_mode(handle_, mode)); }
  fg_math_mode_t math_mode() const {
    fg_math_mode_t mode = FG_MATH_FP32;
    check(fg_get_math_mode(handle_, &mode));
    return mode;
  }
  // How far later sgemm calls are reproducible (fg_set_reproducibility): FG_REPRODUCIBLE_RUN, or
  // FG_REPRODUCIBLE_SHAPE for elements of C that do not depend on the product's shape.
  void set_reproducibility(fg_reproducibility_t level) { check(fg_set_reproducibility(handle_, level)); }
  fg_reproducibility_t reproducibility() const {
    fg_reproducibility_t level = FG_REPRODUCIBLE_RUN;
    check(fg_get_reproducibility(handle_, &level));
    return level;
  }

  void set_rowmean_algo(fg_rowmean_algo_t algo) { check(fg_set_rowmean_algo(handle_, algo)); }
  fg_rowmean_algo_t rowmean_algo() const {
    fg_rowmean_algo_t algo = FG_ROWMEAN_AUTO;
    check(fg_get_rowmean_algo(handle_, &algo));
    return algo;
  }
  fg_rowmean_algo_t last_rowmean_algo() const {
    fg_rowmean_algo_t algo = FG_ROWMEAN_AUTO;
    check(fg_get_last_rowmean_algo(handle_, &algo));
    return algo;
  }

  // C := alpha * op(A) * op(B) + beta * C, as fg_sgemm.
  void sgemm(fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m, int64_t n, int64_t k, float alpha,
             const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    check(fg_sgemm(handle_, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));
  }

  // As fg_sgemm_strided_batched.
  void sgemm_strided_batched(fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m, int64_t n, int64_t k,
                             float alpha, const float *A, int64_t lda, int64_t stride_a, const float *B, int64_t ldb,
                             int64_t stride_b, float beta, float *C, int64_t ldc, int64_t stride_c,
                             int64_t batch_count) {
    check(fg_sgemm_strided_batched(handle_, layout, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b,
                                   beta, C, ldc, stride_c, batch_count));
  }

  // As fg_sgemm_host: operands anywhere, of any size; returns once C is written.
  void sgemm_host(fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m, int64_t n, int64_t k, float alpha,
                  const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    check(fg_sgemm_host(handle_, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));
  }

  // The devices sgemm_host uses, as fg_set_devices / fg_get_devices; an empty list means the handle's own.
  void set_devices(const std::vector<int> &devices) {
    check(fg_set_devices(handle_, devices.empty() ? nullptr : devices.data(), static_cast<int>(devices.size())));
  }
  std::vector<int> devices() const {
    int count = 0;
    check(fg_get_devices(handle_, nullptr, 0, &count));
    std::vector<int> ordinals(static_cast<size_t>(count));
    check(fg_get_devices(handle_, ordinals.data(), count, &count));
    return ordinals;
  }

  // As fg_rowmean_matvec, the element type taken from the pointers.
  void rowmean_matvec(const float *input, const float *matrix, float *output, int64_t L, int64_t M, int64_t N) {
    check(fg_rowmean_matvec(handle_, FG_F32, input, matrix, output, L, M, N));
  }
  void rowmean_matvec(const double *input, const double *matrix, double *output, int64_t L, int64_t M, int64_t N) {
    check(fg_rowmean_matvec(handle_, FG_F64, input, matrix, output, L, M, N));
  }

 private:
  fg_handle_t handle_ = nullptr;
};

}  // namespace fastgemm

#endif  // FASTGEMM_FASTGEMM_HPP
