// SPDX-License-Identifier: Apache-2.0
// gemmul8-anchor's parts below its methods (anchor.cu): checked calls, device fills and the error measure, the
// options, fastgemm opened by dlopen, and the timing and printing of rows. Included by anchor.cu alone.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <fastgemm/fastgemm.h>  // types and prototypes only: the library is opened with dlopen

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "../squared_norms.cuh"
#include "gemmul8.hpp"

namespace anchor {

// ------------------------------------------------------------------------------------------------
// Errors: every CUDA and cuBLAS call is checked; a failure names the call and where it was made.
// ------------------------------------------------------------------------------------------------
[[noreturn]] void die(const char *format, ...) {
  std::fflush(stdout);
  std::va_list args;
  va_start(args, format);
  std::fprintf(stderr, "gemmul8-anchor: error: ");
  std::vfprintf(stderr, format, args);
  std::fprintf(stderr, "\n");
  va_end(args);
  std::exit(1);
}

void check_cuda(cudaError_t status, const char *call, const char *file, int line) {
  if (status != cudaSuccess) {
    die("%s failed at %s:%d: %s (%s)", call, file, line, cudaGetErrorName(status), cudaGetErrorString(status));
  }
}

void check_cublas(cublasStatus_t status, const char *call, const char *file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    die("%s failed at %s:%d: %s (%s)", call, file, line, cublasGetStatusName(status), cublasGetStatusString(status));
  }
}

#define CUDA_CHECK(call) check_cuda((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) check_cublas((call), #call, __FILE__, __LINE__)

// ------------------------------------------------------------------------------------------------
// Device helpers: inputs, conversion to double, the normwise error.
// ------------------------------------------------------------------------------------------------
__device__ uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

enum class Family { kUniform, kWideExponent };

const char *family_name(Family family) { return family == Family::kUniform ? "uniform" : "wide"; }

// Uniform in [-1, 1) with 24 random bits (every value exact in FP32); for kWideExponent each element is
// then multiplied by 2^e with e uniform in [-16, 16].
__global__ void fill_kernel(float *data, int64_t count, uint64_t seed, bool wide) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const uint64_t h = mix64(seed + static_cast<uint64_t>(i + 1) * 0x9E3779B97F4A7C15ull);
    const float u = static_cast<float>(static_cast<int32_t>(h >> 40)) * 0x1p-23f - 1.0f;
    data[i] = wide ? ldexpf(u, static_cast<int>((h & 0xFFFFFFull) % 33u) - 16) : u;
  }
}

__global__ void to_double_kernel(const float *in, double *out, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    out[i] = in[i];
  }
}

constexpr int kThreads = 256;

unsigned grid_for(int64_t count) {
  return static_cast<unsigned>(std::min<int64_t>((count + kThreads - 1) / kThreads, 65536));
}

// ------------------------------------------------------------------------------------------------
// Options.
// ------------------------------------------------------------------------------------------------
struct Shape {
  int64_t m, n, k;
};

struct Options {
  std::vector<Shape> shapes;
  std::string fastgemm_path;
  std::string csv_path;
  int moduli = 7;
  int warmup = 3;
  int repeats = 10;
  int device = 0;
  bool accurate = true;
  uint64_t seed = 20240501;
};

const char *usage_text() {
  return "usage: gemmul8-anchor [options] [SHAPE ...]\n"
         "  SHAPE            N (N x N x N) or MxNxK, e.g. 2048x2048x4096; default: 4096 8192 16384\n"
         "  --fastgemm PATH  also time fastgemm's fg_sgemm in FG_MATH_FP32_EMULATED from this libfastgemm.so.0\n"
         "  --moduli N       GEMMul8's number of moduli (2..13 for FP32 output; default 7)\n"
         "  --no-accurate    leave out GEMMul8's accurate mode (fastmode = false)\n"
         "  --warmup N       untimed calls before the timed ones (default 3)\n"
         "  --repeats N      timed calls, each after an L2 flush; the median is reported (default 10)\n"
         "  --device N       CUDA device ordinal (default 0)\n"
         "  --seed N         seed of the inputs (default 20240501)\n"
         "  --csv FILE       also write the CSV lines (with their header) to FILE\n"
         "C = A B, all column-major, no transposes, alpha = 1, beta = 0.\n";
}

int64_t parse_int(const char *text, const char *what) {
  char *end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') die("%s: '%s' is not an integer", what, text);
  return value;
}

Shape parse_shape(const char *text) {
  std::vector<int64_t> parts;
  std::string piece;
  for (const char *p = text;; ++p) {
    if (*p == 'x' || *p == 'X' || *p == '\0') {
      char *end = nullptr;
      errno = 0;
      const long long value = std::strtoll(piece.c_str(), &end, 10);
      if (errno != 0 || piece.empty() || *end != '\0') die("shape '%s' is neither N nor MxNxK", text);
      parts.push_back(value);
      piece.clear();
      if (*p == '\0') break;
    } else {
      piece += *p;
    }
  }
  Shape shape{};
  if (parts.size() == 1) {
    shape = {parts[0], parts[0], parts[0]};
  } else if (parts.size() == 3) {
    shape = {parts[0], parts[1], parts[2]};
  } else {
    die("shape '%s' is neither N nor MxNxK", text);
  }
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0) die("shape '%s' has a size below 1", text);
  if (shape.m > INT32_MAX || shape.n > INT32_MAX || shape.k > INT32_MAX) {
    die("shape '%s': cuBLAS's 32-bit interface takes sizes up to %d", text, INT32_MAX);
  }
  return shape;
}

Options parse_options(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) die("%s needs a value", arg.c_str());
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(usage_text(), stdout);
      std::exit(0);
    } else if (arg == "--fastgemm") {
      options.fastgemm_path = value();
    } else if (arg == "--csv") {
      options.csv_path = value();
    } else if (arg == "--moduli") {
      options.moduli = static_cast<int>(parse_int(value(), "--moduli"));
    } else if (arg == "--warmup") {
      options.warmup = static_cast<int>(parse_int(value(), "--warmup"));
    } else if (arg == "--repeats") {
      options.repeats = static_cast<int>(parse_int(value(), "--repeats"));
    } else if (arg == "--device") {
      options.device = static_cast<int>(parse_int(value(), "--device"));
    } else if (arg == "--seed") {
      options.seed = static_cast<uint64_t>(parse_int(value(), "--seed"));
    } else if (arg == "--no-accurate") {
      options.accurate = false;
    } else if (!arg.empty() && arg[0] == '-') {
      die("unknown option %s\n%s", arg.c_str(), usage_text());
    } else {
      options.shapes.push_back(parse_shape(arg.c_str()));
    }
  }
  if (options.moduli < 2 || options.moduli > 13) die("--moduli %d: GEMMul8 takes 2..13 for FP32", options.moduli);
  if (options.warmup < 0) die("--warmup must be >= 0");
  if (options.repeats < 1) die("--repeats must be >= 1");
  if (options.shapes.empty()) options.shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {16384, 16384, 16384}};
  return options;
}

// ------------------------------------------------------------------------------------------------
// fastgemm, opened at run time.
// ------------------------------------------------------------------------------------------------
struct Fastgemm {
  void *library = nullptr;
  decltype(&fg_create) create = nullptr;
  decltype(&fg_destroy) destroy = nullptr;
  decltype(&fg_set_stream) set_stream = nullptr;
  decltype(&fg_set_math_mode) set_math_mode = nullptr;
  decltype(&fg_sgemm) sgemm = nullptr;
  // Optional: better messages and what the call ran.
  decltype(&fg_version) version = nullptr;
  decltype(&fg_status_name) status_name = nullptr;
  decltype(&fg_last_error_message) last_error_message = nullptr;
  decltype(&fg_get_last_sgemm_algo) last_algo = nullptr;
  decltype(&fg_sgemm_algo_name) algo_name = nullptr;
  decltype(&fg_get_last_sgemm_emulation) last_emulation = nullptr;
  fg_handle_t handle = nullptr;
  std::string path;

  template <typename F>
  void bind(F &slot, const char *name, bool required) {
    slot = reinterpret_cast<F>(dlsym(library, name));
    if (slot == nullptr && required) die("%s has no symbol %s", path.c_str(), name);
  }

  void open(const std::string &library_path, cudaStream_t stream) {
    path = library_path;
    library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) die("dlopen(%s): %s", path.c_str(), dlerror());
    bind(create, "fg_create", true);
    bind(destroy, "fg_destroy", true);
    bind(set_stream, "fg_set_stream", true);
    bind(set_math_mode, "fg_set_math_mode", true);
    bind(sgemm, "fg_sgemm", true);
    bind(version, "fg_version", false);
    bind(status_name, "fg_status_name", false);
    bind(last_error_message, "fg_last_error_message", false);
    bind(last_algo, "fg_get_last_sgemm_algo", false);
    bind(algo_name, "fg_sgemm_algo_name", false);
    bind(last_emulation, "fg_get_last_sgemm_emulation", false);
    check(create(&handle), "fg_create");
    check(set_stream(handle, stream), "fg_set_stream");
    check(set_math_mode(handle, FG_MATH_FP32_EMULATED), "fg_set_math_mode(FG_MATH_FP32_EMULATED)");
  }

  void check(fg_status_t status, const char *call) const {
    if (status == FG_STATUS_SUCCESS) return;
    die("%s failed: %s%s%s", call, status_name ? status_name(status) : std::to_string(status).c_str(),
        last_error_message ? ": " : "", last_error_message ? last_error_message() : "");
  }

  // What the last call ran, e.g. "ozaki_int8 moduli=6 fp32_elements=0"; waits for that call's work.
  std::string last_call() const {
    std::string text;
    if (last_algo != nullptr && algo_name != nullptr) {
      fg_sgemm_algo_t algo = FG_SGEMM_AUTO;
      check(last_algo(handle, &algo), "fg_get_last_sgemm_algo");
      text = algo_name(algo);
    }
    if (last_emulation != nullptr) {
      int moduli = 0;
      int64_t fp32_elements = 0;
      check(last_emulation(handle, &moduli, &fp32_elements), "fg_get_last_sgemm_emulation");
      if (moduli > 0) {
        char counts[64];
        std::snprintf(counts, sizeof(counts), "%smoduli=%d fp32_elements=%" PRId64, text.empty() ? "" : " ", moduli,
                      fp32_elements);
        text += counts;
      }
    }
    return text;
  }

  // Releases the handle; the library stays loaded (its CUDA state goes at process exit).
  void close() {
    if (handle != nullptr) check(destroy(handle), "fg_destroy");
    handle = nullptr;
  }
};

// ------------------------------------------------------------------------------------------------
// Measurement.
// ------------------------------------------------------------------------------------------------
constexpr size_t kFlushBytes = size_t{100} << 20;  // written before every timed call
constexpr size_t kGemmul8CublasWorkspace = size_t{32} << 20;

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
};

struct Row {
  Shape shape{};
  std::string method;
  Timing timing;
  double error[2] = {NAN, NAN};  // uniform, wide
  std::string note[2];
  double phases_ms = NAN;  // GEMMul8's own four phase times, summed (median over the timed calls)
};

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t half = values.size() / 2;
  return values.size() % 2 ? values[half] : 0.5 * (values[half - 1] + values[half]);
}

struct Bench {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  void *flush = nullptr;
  double *sums = nullptr;
  int flush_count = 0;

  void flush_l2() { CUDA_CHECK(cudaMemsetAsync(flush, flush_count++ & 0xFF, kFlushBytes, stream)); }

  // warmup untimed calls, then repeats calls each after an L2 flush, timed alone between two events.
  Timing time(const Options &options, const std::function<void()> &call) {
    for (int i = 0; i < options.warmup; ++i) {
      flush_l2();
      call();
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<double> samples;
    for (int i = 0; i < options.repeats; ++i) {
      flush_l2();
      CUDA_CHECK(cudaEventRecord(start, stream));
      call();
      CUDA_CHECK(cudaEventRecord(stop, stream));
      CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      samples.push_back(ms);
    }
    Timing timing;
    timing.median_ms = median_of(samples);
    timing.min_ms = *std::min_element(samples.begin(), samples.end());
    timing.max_ms = *std::max_element(samples.begin(), samples.end());
    return timing;
  }

  // ||C - R||_F / ||R||_F (NaN when C holds a NaN or an Inf).
  double normwise_error(const float *C, const double *R, int64_t count) {
    CUDA_CHECK(cudaMemsetAsync(sums, 0, 2 * sizeof(double), stream));
    bench::squared_norms_kernel<float, double><<<grid_for(count), kThreads, 0, stream>>>(C, R, count, sums);
    CUDA_CHECK(cudaGetLastError());
    double host[2] = {0, 0};
    CUDA_CHECK(cudaMemcpyAsync(host, sums, sizeof(host), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return std::sqrt(host[0]) / std::sqrt(host[1]);
  }
};

void print_header(FILE *out) {
  std::fprintf(out,
               "m,n,k,method,ms_median,ms_min,ms_max,tflops,speedup_vs_cublas,err_uniform,err_wide,"
               "gemmul8_phases_ms,note_uniform,note_wide\n");
}

void print_csv(FILE *out, const Row &row, double cublas_ms) {
  const double flops = 2.0 * row.shape.m * row.shape.n * row.shape.k;
  std::fprintf(out, "%" PRId64 ",%" PRId64 ",%" PRId64 ",%s,%.4f,%.4f,%.4f,%.2f,%.3f,%.3e,%.3e,", row.shape.m,
               row.shape.n, row.shape.k, row.method.c_str(), row.timing.median_ms, row.timing.min_ms, row.timing.max_ms,
               flops / (row.timing.median_ms * 1e-3) / 1e12, cublas_ms / row.timing.median_ms, row.error[0],
               row.error[1]);
  if (std::isnan(row.phases_ms)) {
    std::fprintf(out, ",");
  } else {
    std::fprintf(out, "%.4f,", row.phases_ms);
  }
  std::fprintf(out, "%s,%s\n", row.note[0].c_str(), row.note[1].c_str());
  std::fflush(out);
}

std::string shape_text(const Shape &s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

}  // namespace anchor
