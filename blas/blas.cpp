// libfastgemm_blas: the reference BLAS's sgemm_ and CBLAS's cblas_sgemm over fastgemm, for programs that
// are not changed (LD_PRELOAD, or linked ahead of the system BLAS). Large products run on the GPU through
// fg_sgemm_host (fg_sgemm when every operand is device memory); small ones, and every one when no GPU is
// usable, go to the next definition of the same function in the process: the system BLAS.
//
// Environment:
//   FASTGEMM_BLAS_MIN_FLOPS  products of at least this many flops (2 m n k) run on the GPU; unset: the
//                            default rule below
//   FASTGEMM_BLAS_DEVICES    the devices fg_sgemm_host spreads a product over: "all", or ordinals
//                            separated by commas ("0,1"); unset: the calling thread's current device
//   FASTGEMM_BLAS_REPRODUCIBLE  unset (or anything but 0): FG_REPRODUCIBLE_SHAPE, so that an element of C does
//                            not depend on the shape of the product it sits in, as with the reference BLAS
//                            (LAPACK compares blocks computed apart; products the system BLAS computes
//                            have its arithmetic, so this holds across all sizes with
//                            FASTGEMM_BLAS_MIN_FLOPS=0); 0: the library's own setting
//                            (FASTGEMM_REPRODUCIBLE, else run), which lets AUTO use cuBLAS and split k,
//                            and FASTGEMM_MATH=fp32_emulated the emulation (the shape level runs FP32)
//   FASTGEMM_LOG=1           one line per call on stderr saying where it ran
// (FASTGEMM_HOST_TILE, FASTGEMM_MATH and FASTGEMM_REPRODUCIBLE are read by the library itself; a value that
// names no setting makes fg_create fail, and every call then runs on the CPU.)
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include <cuda_runtime_api.h>

#include "fastgemm/fastgemm.h"

#define FASTGEMM_BLAS_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// The default rule: the GPU takes products of at least 2 * 512^3 flops whose every dimension is at least
// 128. Below 512^3 a multi-threaded CPU BLAS finishes within about a millisecond (OpenBLAS runs 0.2
// TFLOPS on the H100 machine's 16 cores), about what the GPU path's synchronization, pinned staging and
// transfers cost; a dimension under 128 makes the product thin, with fewer than about 20 flops per byte
// that crosses PCIe, where the copies alone take longer than the CPU's product.
constexpr double default_min_flops = 2.0 * 512 * 512 * 512;
constexpr int64_t default_min_dimension = 128;

using FortranSgemm = void (*)(const char *, const char *, const int *, const int *, const int *, const float *,
                              const float *, const int *, const float *, const int *, const float *, float *,
                              const int *, size_t, size_t);
using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *,
                            int);
using FortranXerbla = void (*)(const char *, const int *, size_t);
using CblasXerbla = void (*)(int, const char *, const char *, ...);

enum CblasValue { row_major = 101, col_major = 102, no_trans = 111, trans = 112, conj_trans = 113 };

struct Settings {
  double min_flops = default_min_flops;
  bool default_rule = true;
  bool log = false;
  const char *devices = nullptr;  // FASTGEMM_BLAS_DEVICES as given; nullptr or "": the handle's own device
};

const Settings &settings() {
  static const Settings read = [] {
    Settings s;
    const char *log = std::getenv("FASTGEMM_LOG");
    s.log = log != nullptr && std::strcmp(log, "1") == 0;
    const char *text = std::getenv("FASTGEMM_BLAS_MIN_FLOPS");
    if (text != nullptr && *text != '\0') {
      char *end = nullptr;
      const double value = std::strtod(text, &end);
      if (*end == '\0' && value >= 0.0) {
        s.min_flops = value;
        s.default_rule = false;
      } else if (s.log) {
        std::fprintf(stderr, "fastgemm_blas: FASTGEMM_BLAS_MIN_FLOPS=%s is no number >= 0; the default rule applies\n",
                     text);
      }
    }
    s.devices = std::getenv("FASTGEMM_BLAS_DEVICES");
    return s;
  }();
  return read;
}

template <typename Function>
Function next_definition(const char *name) {
  return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

template <typename Function>
Function program_definition(const char *name) {
  return reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
}

// FASTGEMM_BLAS_DEVICES as a list: "all" is every device, the current one first; otherwise ordinals
// separated by commas. False when the text is neither (fg_set_devices checks the ordinals themselves).
bool device_list(const char *text, std::vector<int> *list) {
  if (std::strcmp(text, "all") == 0) {
    int current = 0, count = 0;
    if (cudaGetDevice(&current) != cudaSuccess || cudaGetDeviceCount(&count) != cudaSuccess) return false;
    list->push_back(current);
    for (int device = 0; device < count; ++device)
      if (device != current) list->push_back(device);
    return true;
  }
  const char *next = text;
  while (true) {
    char *end = nullptr;
    const long value = std::strtol(next, &end, 10);
    if (end == next || value < 0 || value > 1023) return false;
    list->push_back(static_cast<int>(value));
    if (*end == '\0') return true;
    if (*end != ',') return false;
    next = end + 1;
  }
}

// Spreads the handle's host products over the devices FASTGEMM_BLAS_DEVICES names. A list that cannot be
// used leaves the handle on its own device (the products are the same, only slower), and FASTGEMM_LOG=1
// says why.
void apply_device_list(fg_handle_t handle) {
  const char *text = settings().devices;
  if (text == nullptr || *text == '\0') return;
  std::vector<int> list;
  const fg_status_t status = device_list(text, &list)
                                 ? fg_set_devices(handle, list.data(), static_cast<int>(list.size()))
                                 : FG_STATUS_INVALID_VALUE;
  if (status != FG_STATUS_SUCCESS && settings().log)
    std::fprintf(stderr,
                 "fastgemm_blas: FASTGEMM_BLAS_DEVICES=%s is not used (%s%s%s); the thread's device runs alone\n", text,
                 fg_status_name(status), list.empty() ? "" : ": ",
                 list.empty() ? "no list of ordinals or \"all\"" : fg_last_error_message());
}

// Once any thread has found no usable GPU, or fastgemm refusing the environment, every later call goes to the CPU.
std::atomic<bool> g_cpu_only{false};

// FASTGEMM_BLAS_REPRODUCIBLE (see the top of this file). The setting cannot fail on a handle just made; should
// it, the handle keeps the library's setting, and FASTGEMM_LOG=1 says so.
void apply_reproducibility(fg_handle_t handle) {
  const char *text = std::getenv("FASTGEMM_BLAS_REPRODUCIBLE");
  if (text != nullptr && std::strcmp(text, "0") == 0) return;
  const fg_status_t status = fg_set_reproducibility(handle, FG_REPRODUCIBLE_SHAPE);
  if (status != FG_STATUS_SUCCESS && settings().log)
    std::fprintf(stderr, "fastgemm_blas: FG_REPRODUCIBLE_SHAPE is not used (%s: %s)\n", fg_status_name(status),
                 fg_last_error_message());
}

// One handle per calling thread, made on its first large call. A thread that ends destroys its handle;
// the main thread's is left to the process's end, when the driver releases everything, so that exit
// neither calls into a CUDA runtime being torn down nor waits for work of other threads.
class ThreadHandle {
 public:
  ~ThreadHandle() {
    if (handle_ != nullptr && gettid() != getpid()) (void)fg_destroy(handle_);
  }
  fg_handle_t get() {
    if (tried_ || g_cpu_only.load(std::memory_order_relaxed)) return handle_;
    tried_ = true;
    fg_handle_t handle = nullptr;
    const fg_status_t status = fg_create(&handle);
    if (status == FG_STATUS_SUCCESS) {
      handle_ = handle;
      apply_device_list(handle_);
      apply_reproducibility(handle_);
      return handle_;
    }
    // No device, and an environment fastgemm refuses (FASTGEMM_MATH naming no mode), hold for every thread:
    // the first to find them tells why, once. Other failures (memory, a CUDA error) are this thread's.
    const bool whole_process = status == FG_STATUS_NO_DEVICE || status == FG_STATUS_INVALID_VALUE;
    if (whole_process && g_cpu_only.exchange(true)) return handle_;
    if (settings().log)
      std::fprintf(stderr, "fastgemm_blas: %s (%s: %s); %s runs on the CPU\n",
                   status == FG_STATUS_NO_DEVICE       ? "no GPU for this process"
                   : status == FG_STATUS_INVALID_VALUE ? "fastgemm refuses the environment"
                                                       : "no GPU for this thread",
                   fg_status_name(status), fg_last_error_message(), whole_process ? "every SGEMM" : "its SGEMM");
    return handle_;
  }

 private:
  fg_handle_t handle_ = nullptr;
  bool tried_ = false;
};

thread_local ThreadHandle t_handle;

bool wants_gpu(int64_t m, int64_t n, int64_t k) {
  const Settings &s = settings();
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (flops < s.min_flops) return false;
  return !s.default_rule || std::min({m, n, k}) >= default_min_dimension;
}

bool on_device(const void *pointer, int device) {
  cudaPointerAttributes attributes = {};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice && attributes.device == device;
}

// A validated product with k > 0 and alpha != 0, in the CBLAS values. Returns whether the GPU computed C;
// false means C is untouched and the CPU must compute it.
bool run_on_gpu(const char *caller, int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha,
                const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  if (!wants_gpu(m, n, k)) return false;
  const fg_handle_t handle = t_handle.get();
  if (handle == nullptr) return false;
  const auto fl = static_cast<fg_layout_t>(layout);
  const auto ta = static_cast<fg_op_t>(transa), tb = static_cast<fg_op_t>(transb);
  int device = -1;
  const bool all_device =
      cudaGetDevice(&device) == cudaSuccess && on_device(A, device) && on_device(B, device) && on_device(C, device);
  fg_status_t status = FG_STATUS_SUCCESS;
  cudaStream_t stream = nullptr;
  if (all_device) {
    status = fg_sgemm(handle, fl, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    if (status == FG_STATUS_SUCCESS && fg_get_stream(handle, &stream) == FG_STATUS_SUCCESS &&
        cudaStreamSynchronize(stream) != cudaSuccess)
      status = FG_STATUS_CUDA_ERROR;
  } else {
    status = fg_sgemm_host(handle, fl, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  }
  if (settings().log)
    std::fprintf(stderr, "fastgemm_blas: %s m=%lld n=%lld k=%lld on the GPU (%s) -> %s%s%s\n", caller,
                 static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
                 all_device ? "fg_sgemm" : "fg_sgemm_host", fg_status_name(status),
                 status == FG_STATUS_SUCCESS ? "" : ": ", status == FG_STATUS_SUCCESS ? "" : fg_last_error_message());
  if (status == FG_STATUS_SUCCESS) return true;
  // Failures found before any tile ran leave C untouched, and with beta == 0 C is never read: the CPU can
  // still compute it. Otherwise C may be partly written, and no result would be right.
  const bool untouched = status == FG_STATUS_NO_DEVICE || status == FG_STATUS_ALLOC_FAILED ||
                         status == FG_STATUS_NOT_SUPPORTED || status == FG_STATUS_INVALID_VALUE;
  if (untouched || beta == 0.0f) return false;
  std::fprintf(stderr, "fastgemm_blas: %s failed on the GPU after writing part of C (%s: %s); stopping\n", caller,
               fg_status_name(status), fg_last_error_message());
  std::abort();
}

// The last resort when the process holds no other SGEMM: column-major, the reference's arithmetic order.
void plain_sgemm(bool a_trans, bool b_trans, int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                 const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      float sum = 0.0f;
      for (int64_t l = 0; l < k; ++l)
        sum += (a_trans ? A[i * lda + l] : A[l * lda + i]) * (b_trans ? B[l * ldb + j] : B[j * ldb + l]);
      float &c = C[j * ldc + i];
      c = beta == 0.0f ? alpha * sum : alpha * sum + beta * c;
    }
}

bool fortran_trans(char value, bool *transposed) {
  switch (value) {
    case 'N':
    case 'n': *transposed = false; return true;
    case 'T':
    case 't':
    case 'C':
    case 'c': *transposed = true; return true;
  }
  return false;
}

// The reference SGEMM's checks, in its order; 0 when the arguments are good, else the position of the
// first bad one.
int sgemm_argument_error(char transa, char transb, int m, int n, int k, int lda, int ldb, int ldc) {
  bool a_trans = false, b_trans = false;
  if (!fortran_trans(transa, &a_trans)) return 1;
  if (!fortran_trans(transb, &b_trans)) return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < std::max(1, a_trans ? k : m)) return 8;
  if (ldb < std::max(1, b_trans ? n : k)) return 10;
  if (ldc < std::max(1, m)) return 13;
  return 0;
}

void report_fortran_error(int info) {
  if (const auto xerbla = program_definition<FortranXerbla>("xerbla_")) {
    xerbla("SGEMM ", &info, 6);
    return;
  }
  std::fprintf(stderr, " ** On entry to SGEMM  parameter number %2d had an illegal value\n", info);
  std::exit(EXIT_FAILURE);
}

void report_cblas_error(int info, const char *message, int value) {
  if (const auto xerbla = program_definition<CblasXerbla>("cblas_xerbla")) {
    xerbla(info, "cblas_sgemm", message, value);
    return;
  }
  std::fprintf(stderr, "Parameter %d to routine cblas_sgemm was incorrect\n", info);
  std::fprintf(stderr, message, value);
  std::exit(-1);
}

}  // namespace

FASTGEMM_BLAS_EXPORT void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                                 const float *alpha, const float *A, const int *lda, const float *B, const int *ldb,
                                 const float *beta, float *C, const int *ldc, size_t transa_length,
                                 size_t transb_length) {
  const int info = sgemm_argument_error(*transa, *transb, *m, *n, *k, *lda, *ldb, *ldc);
  if (info != 0) {
    report_fortran_error(info);
    return;
  }
  if (*m == 0 || *n == 0 || ((*alpha == 0.0f || *k == 0) && *beta == 1.0f)) return;
  bool a_trans = false, b_trans = false;
  (void)fortran_trans(*transa, &a_trans);
  (void)fortran_trans(*transb, &b_trans);
  if (*k > 0 && *alpha != 0.0f &&
      run_on_gpu("sgemm_", col_major, a_trans ? trans : no_trans, b_trans ? trans : no_trans, *m, *n, *k, *alpha, A,
                 *lda, B, *ldb, *beta, C, *ldc))
    return;
  static const FortranSgemm next = next_definition<FortranSgemm>("sgemm_");
  if (settings().log)
    std::fprintf(stderr, "fastgemm_blas: sgemm_ m=%d n=%d k=%d on the CPU (%s)\n", *m, *n, *k,
                 next != nullptr ? "next sgemm_" : "fastgemm_blas's own loop");
  if (next != nullptr) {
    next(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, transa_length, transb_length);
    return;
  }
  plain_sgemm(a_trans, b_trans, *m, *n, *k, *alpha, A, *lda, B, *ldb, *beta, C, *ldc);
}

FASTGEMM_BLAS_EXPORT void cblas_sgemm(int layout, int transa, int transb, int m, int n, int k, float alpha,
                                      const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc) {
  const auto valid_trans = [](int op) { return op == no_trans || op == trans || op == conj_trans; };
  if (layout != row_major && layout != col_major) {
    report_cblas_error(1, "Illegal layout setting, %d\n", layout);
    return;
  }
  if (!valid_trans(transa)) {
    report_cblas_error(2, "Illegal TransA setting, %d\n", transa);
    return;
  }
  if (!valid_trans(transb)) {
    report_cblas_error(3, "Illegal TransB setting, %d\n", transb);
    return;
  }
  // The reference turns a row-major call into the column-major SGEMM of the swapped operands and reports
  // that call's argument positions, plus one for the layout.
  const bool row = layout == row_major;
  const char fortran_transa = (row ? transb : transa) == no_trans ? 'N' : 'T';
  const char fortran_transb = (row ? transa : transb) == no_trans ? 'N' : 'T';
  const int info = sgemm_argument_error(fortran_transa, fortran_transb, row ? n : m, row ? m : n, k, row ? ldb : lda,
                                        row ? lda : ldb, ldc);
  if (info != 0) {
    report_cblas_error(info + 1, "", 0);
    return;
  }
  if (m == 0 || n == 0 || ((alpha == 0.0f || k == 0) && beta == 1.0f)) return;
  if (k > 0 && alpha != 0.0f &&
      run_on_gpu("cblas_sgemm", layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
    return;
  static const CblasSgemm next = next_definition<CblasSgemm>("cblas_sgemm");
  if (settings().log)
    std::fprintf(stderr, "fastgemm_blas: cblas_sgemm m=%d n=%d k=%d on the CPU (%s)\n", m, n, k,
                 next != nullptr ? "next cblas_sgemm" : "column-major sgemm_");
  if (next != nullptr) {
    next(layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  const int fm = row ? n : m, fn = row ? m : n;
  sgemm_(&fortran_transa, &fortran_transb, &fm, &fn, &k, &alpha, row ? B : A, row ? &ldb : &lda, row ? A : B,
         row ? &lda : &ldb, &beta, C, &ldc, 1, 1);
}
