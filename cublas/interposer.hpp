// SPDX-License-Identifier: Apache-2.0
// What the parts of libfastgemm_cublas share: the settings read from the environment once, the way to the real
// cuBLAS beneath, the product a call asks for, and the log and the statistics.
#pragma once

#include <cstdint>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace fastgemm_cublas {

struct Settings {
  bool pass_all = false;  // FASTGEMM_MATH=fp32, or a value naming no mode: every call goes to cuBLAS
  const char *pass_all_reason = "";
  bool log = false;          // FASTGEMM_LOG=1
  bool stats = false;        // FASTGEMM_CUBLAS_STATS=1
  bool default_rule = true;  // FASTGEMM_CUBLAS_MIN_FLOPS unset: the emulation's own size rule
  double min_flops = 0.0;    // FASTGEMM_CUBLAS_MIN_FLOPS
};
const Settings &settings();

// One line on stderr, "fastgemm_cublas: " first (FASTGEMM_LOG=1 and the statistics only).
void log_line(const char *format, ...) __attribute__((format(printf, 1, 2)));

// Set while this thread is inside the real cuBLAS or inside fastgemm: fastgemm's own FP32 products call cuBLAS's
// entry points, which the loader resolves to this library's, and cuBLAS may call its own exported functions.
// Such a nested call goes to the real function unchanged and uncounted.
class Forwarding {
 public:
  Forwarding();
  ~Forwarding();
  Forwarding(const Forwarding &) = delete;
  Forwarding &operator=(const Forwarding &) = delete;
  static bool active();
};

// The definition of `name` that this library's own hides: the next one in the loader's order, else the one in
// the cuBLAS (or cuBLASLt) that the process loaded, however it loaded it (Python modules load it privately).
// Null when the process holds none.
enum class Library { cublas, cublas_lt };
void *real_symbol(Library library, const char *name);
template <typename Function>
Function real_function(Library library, const char *name) {
  return reinterpret_cast<Function>(real_symbol(library, name));
}

// One product as cuBLAS states it: column-major, C (m x n) := alpha op(A) op(B) + beta C, `batch` products
// `stride_*` elements apart.
struct Product {
  const char *entry = "";
  bool a_transposed = false, b_transposed = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  const float *a = nullptr;
  int64_t lda = 0, stride_a = 0;
  const float *b = nullptr;
  int64_t ldb = 0, stride_b = 0;
  float *c = nullptr;
  int64_t ldc = 0, stride_c = 0;
  float alpha = 1.0f, beta = 0.0f;
  // CUBLAS_POINTER_MODE_DEVICE: alpha and beta live here, read on the device (alpha and beta above unused).
  const float *alpha_device = nullptr, *beta_device = nullptr;
  cudaStream_t stream = nullptr;
  // cuBLASLt with C apart from D and beta != 0: C (in D's layout), copied into D just before fastgemm computes there.
  const float *copy_from = nullptr;
};

// Whether the sizes call for fastgemm (FASTGEMM_CUBLAS_MIN_FLOPS, else the emulation's rule); null if so, else why not.
const char *size_refusal(int64_t m, int64_t n, int64_t k, int64_t batch);

// What fastgemm made of a product it was given.
struct Served {
  bool computed = false;  // fastgemm enqueued the whole product: the call returns `status`
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  std::string why;  // computed: what ran (FASTGEMM_LOG=1); otherwise why cuBLAS runs it
};
// Runs the product through fastgemm's emulated mode on the product's stream, if it can; otherwise C is untouched
// (or beta is 0, and C is rewritten whole by the cuBLAS call that follows).
Served serve(const Product &product);

// The statistics of one entry point (FASTGEMM_CUBLAS_STATS=1): a call is counted when it returns.
enum class Route { fastgemm, cublas };
class CallRecord {
 public:
  explicit CallRecord(const char *entry);
  ~CallRecord();
  void route(Route route) { route_ = route; }

 private:
  const char *entry_;
  Route route_ = Route::cublas;
  int64_t start_ns_ = 0;
};

}  // namespace fastgemm_cublas
