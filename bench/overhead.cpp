// SPDX-License-Identifier: Apache-2.0
// fastgemm-bench overhead: what a call costs the host, fastgemm's against cuBLAS called directly, on
// problems so small that the host's work per call, not the device's, sets how fast a loop of them runs.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <cuda.h>

#include "gpu.hpp"
#include "ops.hpp"
#include "profile.hpp"
#include "report.hpp"
#include "text.hpp"
#include "vendor.hpp"

namespace bench {
namespace {

// Calls enqueued back to back in one timed loop: far fewer than a stream's launch queue holds, so the
// host never waits for the device inside the loop, and enough that the clock's resolution vanishes.
constexpr int kCallsPerLoop = 200;
constexpr int kDefaultLoops = 101;
// --profile: a sample every 97 us of wall time, a period no call's length divides evenly; a sample costs the
// loop a few microseconds (a signal), so they are sparse, over kProfileLoopFactor times the timed loops.
constexpr int kProfilePeriodUs = 97;
constexpr int kProfileLoopFactor = 4;

constexpr uint64_t kSeedA = 0xA;
constexpr uint64_t kSeedB = 0xB;

struct TinyShape {
  int64_t m, n, k, batch;
};

std::string describe(const TinyShape &s) {
  std::string text =
      format("%lldx%lldx%lld", static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k));
  if (s.batch > 1) text += format(" x%lld", static_cast<long long>(s.batch));
  return text;
}

// The driver functions fastgemm's call path uses, looked up as the library looks them up (it does not link
// libcuda either).
struct Driver {
  CUresult (*pointer_get_attributes)(unsigned int, CUpointer_attribute *, void **, CUdeviceptr) = nullptr;
  CUresult (*ctx_get_current)(CUcontext *) = nullptr;
};

template <typename Function>
void look_up(const char *symbol, Function *out) {
  void *function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  check_cuda(cudaGetDriverEntryPointByVersion(symbol, &function, 12000, cudaEnableDefault, &found),
             "cudaGetDriverEntryPointByVersion");
  if (found != cudaDriverEntryPointSuccess || function == nullptr) throw BenchError(format("no driver %s", symbol));
  *out = reinterpret_cast<Function>(function);
}

const Driver &driver() {
  static const Driver table = [] {
    Driver d;
    look_up("cuPointerGetAttributes", &d.pointer_get_attributes);
    look_up("cuCtxGetCurrent", &d.ctx_get_current);
    return d;
  }();
  return table;
}

// fastgemm's full query of a pointer: kind, device, managed, allocation range and id.
void query_all_attributes(const void *pointer) {
  unsigned long long values[6] = {};
  CUpointer_attribute names[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_IS_MANAGED,  CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE,  CU_POINTER_ATTRIBUTE_BUFFER_ID};
  void *slots[] = {&values[0], &values[1], &values[2], &values[3], &values[4], &values[5]};
  if (driver().pointer_get_attributes(6, names, slots, reinterpret_cast<CUdeviceptr>(pointer)) != CUDA_SUCCESS)
    throw BenchError("cuPointerGetAttributes failed");
}

// What fastgemm asks of a pointer whose allocation it has seen: the allocation's id alone.
void query_buffer_id(const void *pointer) {
  unsigned long long id = 0;
  CUpointer_attribute name = CU_POINTER_ATTRIBUTE_BUFFER_ID;
  void *slot = &id;
  if (driver().pointer_get_attributes(1, &name, &slot, reinterpret_cast<CUdeviceptr>(pointer)) != CUDA_SUCCESS)
    throw BenchError("cuPointerGetAttributes failed");
}

// A non-blocking stream with a cuBLAS handle bound to it: a program that runs its products on its own
// stream.
class StreamBlas {
 public:
  StreamBlas() {
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    try {
      check_cublas(cublasCreate(&handle_), "cublasCreate");
      check_cublas(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
      check_cublas(cublasSetStream(handle_, stream_), "cublasSetStream");
    } catch (...) {
      release();
      throw;
    }
  }
  ~StreamBlas() { release(); }
  StreamBlas(const StreamBlas &) = delete;
  StreamBlas &operator=(const StreamBlas &) = delete;
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t handle() const { return handle_; }

 private:
  void release() {
    if (handle_ != nullptr) (void)cublasDestroy(handle_);
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
    handle_ = nullptr;
    stream_ = nullptr;
  }
  cudaStream_t stream_ = nullptr;
  cublasHandle_t handle_ = nullptr;
};

// A cuBLAS handle set up as fastgemm sets up its own: the legacy stream bound explicitly and a 32 MiB
// workspace from the stream-ordered allocator, so that a difference between it and vendor_blas() is
// cuBLAS's, not fastgemm's call path.
class ConfiguredBlas {
 public:
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;
  ConfiguredBlas() {
    check_cublas(cublasCreate(&handle_), "cublasCreate");
    try {
      check_cublas(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
      check_cuda(cudaMallocAsync(&workspace_, kWorkspaceBytes, nullptr), "cudaMallocAsync");
      check_cuda(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
      check_cublas(cublasSetStream(handle_, nullptr), "cublasSetStream");
      check_cublas(cublasSetWorkspace(handle_, workspace_, kWorkspaceBytes), "cublasSetWorkspace");
    } catch (...) {
      release();
      throw;
    }
  }
  ~ConfiguredBlas() { release(); }
  ConfiguredBlas(const ConfiguredBlas &) = delete;
  ConfiguredBlas &operator=(const ConfiguredBlas &) = delete;
  cublasHandle_t handle() const { return handle_; }

 private:
  void release() {
    if (handle_ != nullptr) (void)cublasDestroy(handle_);
    if (workspace_ != nullptr) (void)cudaFreeAsync(workspace_, nullptr);
    handle_ = nullptr;
    workspace_ = nullptr;
  }
  cublasHandle_t handle_ = nullptr;
  void *workspace_ = nullptr;
};

struct Cost {
  double host_us_median = 0;
  double host_us_min = 0;
  double device_us = kNoValue;  // per call, the whole loop between two events; NaN for host-only steps
};

// Times each call in loops of kCallsPerLoop calls, the calls taking turns loop by loop so that a slow
// spell of the machine hits them alike: host time per call from the loop's wall clock (the device is
// synchronized after each loop, outside it), device time per call from events around the loop.
// `streams`, when given, names the stream each call enqueues on (the events go there); otherwise the legacy one.
std::vector<Cost> measure_costs(const std::vector<std::function<void()>> &calls, int loops, bool enqueues,
                                const std::vector<cudaStream_t> &streams = {}) {
  cudaEvent_t start = nullptr, stop = nullptr;
  check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<std::vector<double>> host_us(calls.size()), device_us(calls.size());
  try {
    for (const std::function<void()> &call : calls) {
      for (int i = 0; i < 3; ++i) call();  // warm-up: first-call work stays out of the figures
    }
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    for (int loop = 0; loop < loops; ++loop) {
      for (size_t c = 0; c < calls.size(); ++c) {
        const cudaStream_t stream = c < streams.size() ? streams[c] : nullptr;
        if (enqueues) check_cuda(cudaEventRecord(start, stream), "cudaEventRecord");
        const auto begin = std::chrono::steady_clock::now();
        for (int i = 0; i < kCallsPerLoop; ++i) calls[c]();
        const auto end = std::chrono::steady_clock::now();
        if (enqueues) check_cuda(cudaEventRecord(stop, stream), "cudaEventRecord");
        check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        host_us[c].push_back(std::chrono::duration<double, std::micro>(end - begin).count() / kCallsPerLoop);
        if (enqueues) {
          float ms = 0;
          check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
          device_us[c].push_back(1e3 * ms / kCallsPerLoop);
        }
      }
    }
  } catch (...) {
    (void)cudaEventDestroy(start);
    (void)cudaEventDestroy(stop);
    throw;
  }
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  const auto median = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
  };
  std::vector<Cost> costs(calls.size());
  for (size_t c = 0; c < calls.size(); ++c) {
    costs[c].host_us_median = median(host_us[c]);
    costs[c].host_us_min = *std::min_element(host_us[c].begin(), host_us[c].end());
    if (enqueues) costs[c].device_us = median(device_us[c]);
  }
  return costs;
}

struct Entry {
  std::string name;     // what was called
  std::string problem;  // the shape, or "-" for a step
  std::string ran;      // the algorithm fastgemm ran
  Cost cost;
  double over_direct_us = kNoValue;  // host time over cuBLAS called directly (32-bit entry) on the problem
};

class Overhead {
 public:
  // handle runs AUTO; forced_cublas, a second handle, FG_SGEMM_CUBLAS; on_stream, a third, FG_SGEMM_CUBLAS on
  // stream_blas's stream.
  Overhead(fg_handle_t handle, fg_handle_t forced_cublas, fg_handle_t on_stream, const StreamBlas &stream_blas,
           const ConfiguredBlas &configured_blas, int loops, SamplingProfile *profile)
      : handle_(handle),
        forced_cublas_(forced_cublas),
        on_stream_(on_stream),
        stream_blas_(stream_blas),
        configured_blas_(configured_blas),
        loops_(loops),
        profile_(profile) {}

  void add_problem(const TinyShape &shape);
  void add_host_problem(const TinyShape &shape);
  void add_steps();
  const std::vector<Entry> &entries() const { return entries_; }

 private:
  void add(Entry entry) {
    std::printf("%-34s %-16s host %7.3f us/call (min %7.3f)", entry.name.c_str(), entry.problem.c_str(),
                entry.cost.host_us_median, entry.cost.host_us_min);
    if (std::isfinite(entry.cost.device_us)) std::printf(", device %7.3f us/call", entry.cost.device_us);
    if (std::isfinite(entry.over_direct_us)) std::printf(", %+.3f us over cublasSgemm", entry.over_direct_us);
    if (!entry.ran.empty()) std::printf(" (ran %s)", entry.ran.c_str());
    std::printf("\n");
    std::fflush(stdout);
    entries_.push_back(std::move(entry));
  }

  // Where the host time of each call goes: a sampling profile of the same loops, per shared object (in host
  // microseconds per call), then the symbols of the first call and of the others' largest excess over it.
  void add_profile(const std::string &problem, const std::vector<std::string> &names,
                   const std::vector<std::function<void()>> &calls, const std::vector<cudaStream_t> &streams);

  fg_handle_t handle_;
  fg_handle_t forced_cublas_;
  fg_handle_t on_stream_;
  const StreamBlas &stream_blas_;
  const ConfiguredBlas &configured_blas_;
  int loops_;
  SamplingProfile *profile_;
  std::vector<Entry> entries_;
};

void Overhead::add_profile(const std::string &problem, const std::vector<std::string> &names,
                           const std::vector<std::function<void()>> &calls, const std::vector<cudaStream_t> &streams) {
  struct Result {
    double host_us = 0;
    size_t samples = 0;
    std::vector<SamplingProfile::Count> objects, symbols;
  };
  std::vector<Result> results(calls.size());
  for (size_t c = 0; c < calls.size(); ++c) {
    for (int i = 0; i < 3; ++i) calls[c]();
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    profile_->clear();
    double seconds = 0;
    const int loops = kProfileLoopFactor * loops_;
    for (int loop = 0; loop < loops; ++loop) {
      const auto begin = std::chrono::steady_clock::now();
      profile_->start();
      for (int i = 0; i < kCallsPerLoop; ++i) calls[c]();
      profile_->stop();
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      check_cuda(cudaStreamSynchronize(streams[c]), "cudaStreamSynchronize");
    }
    results[c].host_us = 1e6 * seconds / (static_cast<double>(loops) * kCallsPerLoop);
    results[c].samples = profile_->samples();
    results[c].objects = profile_->by_object();
    results[c].symbols = profile_->top_symbols(200);
  }
  const auto per_call = [](const Result &r, size_t samples) {
    return r.samples == 0 ? 0.0 : r.host_us * static_cast<double>(samples) / static_cast<double>(r.samples);
  };
  const auto samples_of = [](const std::vector<SamplingProfile::Count> &rows, const std::string &object,
                             const std::string &symbol) {
    for (const SamplingProfile::Count &row : rows)
      if (row.object == object && row.symbol == symbol) return row.samples;
    return size_t{0};
  };
  std::printf("\nprofile, %s: host us per call by shared object (%s: %zu samples)\n", problem.c_str(), names[0].c_str(),
              results[0].samples);
  for (size_t c = 0; c < calls.size(); ++c) {
    std::printf("  %-44s %7.3f us/call, %zu samples:", names[c].c_str(), results[c].host_us, results[c].samples);
    for (const SamplingProfile::Count &row : results[c].objects) {
      const double us = per_call(results[c], row.samples);
      if (us >= 0.01) std::printf(" %s %.3f;", row.object.c_str(), us);
      Entry entry{format("profile: %s: %s", names[c].c_str(), row.object.c_str()), problem, "", Cost{}};
      entry.cost.host_us_median = entry.cost.host_us_min = us;
      entries_.push_back(std::move(entry));
    }
    std::printf("\n");
  }
  // Each call's symbols against the first call's, by their time per call: what the call adds, and where.
  for (size_t c = 1; c < calls.size(); ++c) {
    struct Excess {
      const SamplingProfile::Count *row;
      double us, base_us;
    };
    std::vector<Excess> excess;
    for (const SamplingProfile::Count &row : results[c].symbols) {
      const double base = per_call(results[0], samples_of(results[0].symbols, row.object, row.symbol));
      excess.push_back({&row, per_call(results[c], row.samples), base});
    }
    std::stable_sort(excess.begin(), excess.end(),
                     [](const Excess &x, const Excess &y) { return x.us - x.base_us > y.us - y.base_us; });
    std::printf("  %s over %s, largest excesses (us per call: this call, %s, difference):\n", names[c].c_str(),
                names[0].c_str(), names[0].c_str());
    for (size_t i = 0; i < excess.size() && i < 12; ++i)
      std::printf("    %-22s %-64s %6.3f %6.3f %+6.3f\n", excess[i].row->object.c_str(), excess[i].row->symbol.c_str(),
                  excess[i].us, excess[i].base_us, excess[i].us - excess[i].base_us);
  }
  std::fflush(stdout);
}

void Overhead::add_problem(const TinyShape &s) {
  const int64_t count_a = s.m * s.k * s.batch, count_b = s.k * s.n * s.batch, count_c = s.m * s.n * s.batch;
  DeviceBuffer a(static_cast<size_t>(count_a) * sizeof(float)), b(static_cast<size_t>(count_b) * sizeof(float)),
      c(static_cast<size_t>(count_c) * sizeof(float));
  fill_uniform(a.as<float>(), count_a, kSeedA);
  fill_uniform(b.as<float>(), count_b, kSeedB);
  const float alpha = 1.0f, beta = 0.0f;
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  const int batch = static_cast<int>(s.batch);
  const std::string problem = describe(s);
  // Row-major C = A B, dense; cuBLAS gets the column-major C^T = B^T A^T.
  const auto fastgemm_call = [&](fg_handle_t handle) {
    if (s.batch == 1) {
      check_fastgemm(fg_sgemm(handle, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, s.m, s.n, s.k, alpha, a.as<float>(), s.k,
                              b.as<float>(), s.n, beta, c.as<float>(), s.n),
                     "fg_sgemm");
    } else {
      check_fastgemm(fg_sgemm_strided_batched(handle, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, s.m, s.n, s.k, alpha,
                                              a.as<float>(), s.k, s.m * s.k, b.as<float>(), s.n, s.k * s.n, beta,
                                              c.as<float>(), s.n, s.m * s.n, s.batch),
                     "fg_sgemm_strided_batched");
    }
  };
  cublasHandle_t blas = vendor_blas().get();
  const auto direct_call = [&] {
    if (s.batch == 1) {
      check_cublas(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b.as<float>(), n, a.as<float>(), k,
                               &beta, c.as<float>(), n),
                   "cublasSgemm");
    } else {
      check_cublas(
          cublasSgemmStridedBatched(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b.as<float>(), n, s.k * s.n,
                                    a.as<float>(), k, s.m * s.k, &beta, c.as<float>(), n, s.m * s.n, batch),
          "cublasSgemmStridedBatched");
    }
  };
  const auto direct_64_call = [&] {
    if (s.batch == 1) {
      check_cublas(cublasSgemm_64(blas, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &alpha, b.as<float>(), s.n,
                                  a.as<float>(), s.k, &beta, c.as<float>(), s.n),
                   "cublasSgemm_64");
    } else {
      check_cublas(cublasSgemmStridedBatched_64(blas, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &alpha, b.as<float>(),
                                                s.n, s.k * s.n, a.as<float>(), s.k, s.m * s.k, &beta, c.as<float>(),
                                                s.n, s.m * s.n, s.batch),
                   "cublasSgemmStridedBatched_64");
    }
  };
  // cuBLAS direct again, through a handle set up as fastgemm's.
  const auto configured_call = [&] {
    if (s.batch == 1) {
      check_cublas(cublasSgemm(configured_blas_.handle(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b.as<float>(), n,
                               a.as<float>(), k, &beta, c.as<float>(), n),
                   "cublasSgemm");
    } else {
      check_cublas(cublasSgemmStridedBatched(configured_blas_.handle(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha,
                                             b.as<float>(), n, s.k * s.n, a.as<float>(), k, s.m * s.k, &beta,
                                             c.as<float>(), n, s.m * s.n, batch),
                   "cublasSgemmStridedBatched");
    }
  };
  // The same products on a non-blocking stream of the program's, for both libraries.
  const auto stream_call = [&] {
    if (s.batch == 1) {
      check_cublas(cublasSgemm(stream_blas_.handle(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b.as<float>(), n,
                               a.as<float>(), k, &beta, c.as<float>(), n),
                   "cublasSgemm");
    } else {
      check_cublas(
          cublasSgemmStridedBatched(stream_blas_.handle(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b.as<float>(), n,
                                    s.k * s.n, a.as<float>(), k, s.m * s.k, &beta, c.as<float>(), n, s.m * s.n, batch),
          "cublasSgemmStridedBatched");
    }
  };
  // The driver queries fastgemm makes of the three operands, on this problem's own allocations: the full
  // one (an allocation not seen before) and the id alone (one it has seen).
  const auto full_queries = [&] {
    for (const void *pointer : {a.get(), b.get(), c.get()}) query_all_attributes(pointer);
  };
  const auto id_queries = [&] {
    for (const void *pointer : {a.get(), b.get(), c.get()}) query_buffer_id(pointer);
  };
  const cudaStream_t stream = stream_blas_.stream();
  std::vector<Cost> costs = measure_costs(
      {direct_call, direct_64_call, [&] { fastgemm_call(forced_cublas_); }, [&] { fastgemm_call(handle_); },
       stream_call, [&] { fastgemm_call(on_stream_); }, full_queries, id_queries, configured_call},
      loops_, true, {nullptr, nullptr, nullptr, nullptr, stream, stream});
  costs[6].device_us = costs[7].device_us = kNoValue;  // they enqueue nothing
  const char *batched = s.batch == 1 ? "" : "StridedBatched";
  const char *entry = s.batch == 1 ? "fg_sgemm" : "fg_sgemm_strided_batched";
  const double direct = costs[0].host_us_median, stream_direct = costs[4].host_us_median;
  add({format("cuBLAS direct: cublasSgemm%s", batched), problem, "", costs[0], 0.0});
  add({format("cuBLAS direct: cublasSgemm%s_64", batched), problem, "", costs[1], costs[1].host_us_median - direct});
  fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
  check_fastgemm(fg_get_last_sgemm_algo(forced_cublas_, &ran), "fg_get_last_sgemm_algo");
  add({format("fastgemm %s (cublas)", entry), problem, fg_sgemm_algo_name(ran), costs[2],
       costs[2].host_us_median - direct});
  check_fastgemm(fg_get_last_sgemm_algo(handle_, &ran), "fg_get_last_sgemm_algo");
  add({format("fastgemm %s (auto)", entry), problem, fg_sgemm_algo_name(ran), costs[3],
       costs[3].host_us_median - direct});
  add({format("stream: cuBLAS direct: cublasSgemm%s", batched), problem, "", costs[4], 0.0});
  check_fastgemm(fg_get_last_sgemm_algo(on_stream_, &ran), "fg_get_last_sgemm_algo");
  add({format("stream: fastgemm %s (cublas)", entry), problem, fg_sgemm_algo_name(ran), costs[5],
       costs[5].host_us_median - stream_direct});
  add({format("cuBLAS direct, set up as fastgemm's: cublasSgemm%s", batched), problem, "", costs[8],
       costs[8].host_us_median - direct});
  add({"step: cuPointerGetAttributes, full, A B C", problem, "", costs[6]});
  add({"step: cuPointerGetAttributes, id, A B C", problem, "", costs[7]});
  if (s.batch == 1) add_host_problem(s);
  if (profile_ != nullptr)
    add_profile(problem,
                {format("cuBLAS direct: cublasSgemm%s", batched), format("fastgemm %s (cublas)", entry),
                 format("fastgemm %s (auto)", entry), format("stream: cuBLAS direct: cublasSgemm%s", batched),
                 format("stream: fastgemm %s (cublas)", entry)},
                {direct_call, [&] { fastgemm_call(forced_cublas_); }, [&] { fastgemm_call(handle_); }, stream_call,
                 [&] { fastgemm_call(on_stream_); }},
                {nullptr, nullptr, nullptr, stream, stream});
}

// fg_sgemm_host on pageable copies of the problem's operands: a synchronous call, each one a whole round trip
// (staging, product, C back), which is what a drop-in sgemm_ of this size pays. A tenth of the loops: a call
// takes hundreds of microseconds.
void Overhead::add_host_problem(const TinyShape &s) {
  std::vector<float> a(static_cast<size_t>(s.m * s.k)), b(static_cast<size_t>(s.k * s.n)),
      c(static_cast<size_t>(s.m * s.n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3.0f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) - 2.0f;
  const auto host_call = [&] {
    check_fastgemm(fg_sgemm_host(handle_, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(),
                                 s.n, 0.0f, c.data(), s.n),
                   "fg_sgemm_host");
  };
  const std::vector<Cost> costs = measure_costs({host_call}, std::max(3, loops_ / 10), true);
  fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
  check_fastgemm(fg_get_last_sgemm_algo(handle_, &ran), "fg_get_last_sgemm_algo");
  add({"fastgemm fg_sgemm_host (auto), pageable", describe(s), fg_sgemm_algo_name(ran), costs[0], kNoValue});
}

// The arguments of an fg_sgemm call formatted as its trace line is, into a 320-character buffer: what
// every call paid before the trace learned to format only when someone listens.
void format_sgemm_line(char *line, size_t size, const float *pointer) {
  const long long extent = 64;
  std::snprintf(line, size,
                "fg_sgemm(handle=%p, layout=%d, transa=%d, transb=%d, m=%lld, n=%lld, k=%lld, alpha=%g, A=%p, "
                "lda=%lld, B=%p, ldb=%lld, beta=%g, C=%p, ldc=%lld, algo=%s)",
                static_cast<const void *>(&extent), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, extent, extent, extent, 1.0,
                static_cast<const void *>(pointer), extent, static_cast<const void *>(pointer), extent, 0.0,
                static_cast<const void *>(pointer), extent, "auto");
}

// The pieces a fastgemm call is made of, each alone: what they cost bounds what the call can save.
void Overhead::add_steps() {
  DeviceBuffer buffer(sizeof(float) * 64);
  fg_sgemm_algo_t algo = FG_SGEMM_AUTO;
  cudaPointerAttributes attributes = {};
  int device = 0;
  CUcontext context = nullptr;
  cublasHandle_t blas = vendor_blas().get();
  char line[320];
  cudaEvent_t event = nullptr;
  check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  const cudaStream_t stream = stream_blas_.stream();
  std::vector<Cost> costs, enqueued;
  try {
    costs = measure_costs(
        {[&] { check_fastgemm(fg_get_sgemm_algo(handle_, &algo), "fg_get_sgemm_algo"); },
         [&] { format_sgemm_line(line, sizeof line, buffer.as<float>()); },
         [&] { check_cuda(cudaPointerGetAttributes(&attributes, buffer.get()), "cudaPointerGetAttributes"); },
         [&] { query_all_attributes(buffer.get()); }, [&] { query_buffer_id(buffer.get()); },
         [&] { check_cuda(cudaGetDevice(&device), "cudaGetDevice"); },
         [&] {
           if (driver().ctx_get_current(&context) != CUDA_SUCCESS) throw BenchError("cuCtxGetCurrent failed");
         },
         [&] { check_cublas(cublasSetStream(blas, 0), "cublasSetStream"); },
         [&] {
           cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
           check_cuda(cudaStreamIsCapturing(stream, &capture), "cudaStreamIsCapturing");
         }},
        loops_, false);
    enqueued =
        measure_costs({[&] { check_cuda(cudaEventRecord(event, nullptr), "cudaEventRecord"); },
                       [&] { check_cuda(cudaEventRecord(event, stream), "cudaEventRecord"); }, launch_empty_kernel},
                      loops_, true, {nullptr, stream, nullptr});
  } catch (...) {
    (void)cudaEventDestroy(event);
    throw;
  }
  (void)cudaEventDestroy(event);
  add({"step: fg_get_sgemm_algo (traced no-op)", "-", "", costs[0]});
  add({"step: snprintf of an fg_sgemm trace line", "-", "", costs[1]});
  add({"step: cudaPointerGetAttributes", "-", "", costs[2]});
  add({"step: cuPointerGetAttributes, full (6 attributes)", "-", "", costs[3]});
  add({"step: cuPointerGetAttributes, buffer id only", "-", "", costs[4]});
  add({"step: cudaGetDevice", "-", "", costs[5]});
  add({"step: cuCtxGetCurrent (device guard)", "-", "", costs[6]});
  add({"step: cublasSetStream (same stream)", "-", "", costs[7]});
  add({"step: cudaStreamIsCapturing (stream)", "-", "", costs[8]});
  add({"step: cudaEventRecord (legacy stream)", "-", "", enqueued[0]});
  add({"step: cudaEventRecord (stream)", "-", "", enqueued[1]});
  add({"step: empty kernel launch", "-", "", enqueued[2]});
}

std::vector<Field> entry_fields(const Entry &entry) {
  return {text_field("op", "overhead"),
          text_field("call", entry.name),
          text_field("problem", entry.problem),
          text_field("ran", entry.ran),
          integer_field("calls_per_loop", kCallsPerLoop),
          number_field("host_us_median", entry.cost.host_us_median),
          number_field("host_us_min", entry.cost.host_us_min),
          number_field("device_us_per_call", entry.cost.device_us),
          number_field("host_us_over_cublas_direct", entry.over_direct_us)};
}

}  // namespace

OverheadPlan make_overhead_plan(const Options &options) {
  if (!options.algos.empty() || !options.sizes.empty() || options.suite || !options.trans.empty() ||
      !options.layouts.empty() || options.dtype || options.hot || options.math || !options.distributions.empty() ||
      !options.depths.empty()) {
    throw UsageError("overhead takes --shape, --batch, --repeats, --profile, --device, --csv and --json only");
  }
  OverheadPlan plan;
  plan.profile = options.profile;
  if (plan.profile && !SamplingProfile::supported()) throw UsageError("--profile needs Linux on x86-64 or AArch64");
  plan.loops = options.timing.repeats > 0 ? options.timing.repeats : kDefaultLoops;
  for (const std::string &text : options.shapes) {
    const std::vector<int64_t> mnk = parse_dimensions(text, 3, "MxNxK");
    plan.shapes.push_back({mnk[0], mnk[1], mnk[2], options.batch.value_or(1)});
  }
  if (plan.shapes.empty()) {
    plan.shapes = {{8, 8, 8, 1}, {32, 32, 32, 1}, {64, 64, 64, 1}, {1, 64, 64, 1}, {64, 64, 64, 16}};
    if (options.batch) throw UsageError("--batch applies to --shape problems");
  }
  for (const std::array<int64_t, 4> &shape : plan.shapes) {
    constexpr int64_t kLargest = 1 << 12;
    if (shape[0] > kLargest || shape[1] > kLargest || shape[2] > kLargest || shape[3] > kLargest) {
      throw UsageError("overhead measures tiny problems: each of M, N, K and --batch at most 4096");
    }
  }
  return plan;
}

int run_overhead(const OverheadPlan &plan, const Options &options, fg_handle_t handle) {
  try {
    int ordinal = 0;
    check_cuda(cudaGetDevice(&ordinal), "cudaGetDevice");
    RunInfo run;
    run.metric = {"overhead", "us", "us", Ceiling::fp32_peak, "peak", "percent_of_peak"};
    run.device = query_device(ordinal);
    run.fastgemm_version = format("%d.%d.%d", fg_version() / 10000, fg_version() / 100 % 100, fg_version() % 100);
    std::ofstream csv, json;
    if (!options.csv_path.empty()) csv.open(options.csv_path);
    if (!options.json_path.empty()) json.open(options.json_path);
    if ((!options.csv_path.empty() && !csv) || (!options.json_path.empty() && !json)) {
      throw BenchError("cannot open a report file for writing");
    }
    std::printf("fastgemm-bench overhead on %s; fastgemm %s\n", run.device.name.c_str(), run.fastgemm_version.c_str());
    std::printf(
        "Host time per call: median (and min) over %d loops of %d calls enqueued back to back on the legacy "
        "default stream, no synchronization inside a loop, the calls of a problem taking turns loop by "
        "loop; device time per call from events around the loop. Row-major NN, alpha 1, beta 0, FP32 "
        "math; fastgemm AUTO and forced cublas on two handles; 'stream:' rows on a non-blocking stream, "
        "fastgemm's over cuBLAS direct on that stream.\n",
        plan.loops, kCallsPerLoop);
    StreamBlas stream_blas;
    ConfiguredBlas configured_blas;
    fg_handle_t forced_cublas = nullptr, on_stream = nullptr;
    check_fastgemm(fg_create(&forced_cublas), "fg_create");
    std::vector<Entry> entries;
    try {
      check_fastgemm(fg_create(&on_stream), "fg_create");
      check_fastgemm(fg_set_sgemm_algo(forced_cublas, FG_SGEMM_CUBLAS), "fg_set_sgemm_algo");
      check_fastgemm(fg_set_sgemm_algo(on_stream, FG_SGEMM_CUBLAS), "fg_set_sgemm_algo");
      check_fastgemm(fg_set_stream(on_stream, stream_blas.stream()), "fg_set_stream");
      check_fastgemm(fg_set_sgemm_algo(handle, FG_SGEMM_AUTO), "fg_set_sgemm_algo");
      // The FP32 calls the table compares, whatever FASTGEMM_MATH says.
      for (fg_handle_t each : {handle, forced_cublas, on_stream})
        check_fastgemm(fg_set_math_mode(each, FG_MATH_FP32), "fg_set_math_mode");
      std::unique_ptr<SamplingProfile> profile;
      if (plan.profile) profile = std::make_unique<SamplingProfile>(kProfilePeriodUs, size_t{1} << 22);
      Overhead overhead(handle, forced_cublas, on_stream, stream_blas, configured_blas, plan.loops, profile.get());
      for (const std::array<int64_t, 4> &shape : plan.shapes) {
        overhead.add_problem({shape[0], shape[1], shape[2], shape[3]});
      }
      overhead.add_steps();
      entries = overhead.entries();
    } catch (...) {
      (void)fg_destroy(on_stream);
      (void)fg_destroy(forced_cublas);
      throw;
    }
    check_fastgemm(fg_destroy(on_stream), "fg_destroy");
    check_fastgemm(fg_destroy(forced_cublas), "fg_destroy");
    std::vector<std::vector<Field>> rows;
    for (const Entry &entry : entries) {
      std::vector<Field> row = entry_fields(entry);
      const std::vector<Field> shared = run_fields(run);
      row.insert(row.end(), shared.begin(), shared.end());
      rows.push_back(std::move(row));
    }
    if (csv.is_open()) write_field_csv(csv, rows);
    if (json.is_open()) {
      std::vector<Field> top = {text_field("tool", "fastgemm-bench"), text_field("op", "overhead"),
                                text_field("command", options.command_line)};
      write_field_json(json, top, rows);
    }
    bool written = true;
    for (std::ofstream *out : {&csv, &json}) {
      if (!out->is_open()) continue;
      out->close();
      written &= static_cast<bool>(*out);
    }
    if (!written) throw BenchError("writing a report failed");
    return 0;
  } catch (const BenchError &error) {
    std::fprintf(stderr, "fastgemm-bench: %s\n", error.what());
    return 1;
  }
}

}  // namespace bench
