// SPDX-License-Identifier: Apache-2.0
// fastgemm-bench overhead: what a call costs the host, fastgemm's against cuBLAS called directly, on
// problems so small that the host's work per call, not the device's, sets how fast a loop of them runs.
// The calls measured on each problem and the steps measured alone are tables below; overhead_measure.cpp
// times them, overhead_profile.cpp profiles them (--profile).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "gpu.hpp"
#include "ops.hpp"
#include "overhead.hpp"
#include "profile.hpp"
#include "report.hpp"
#include "text.hpp"
#include "vendor.hpp"

namespace bench {
namespace {

constexpr int kDefaultLoops = 101;

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

// Who makes a call measured on each problem (row-major NN, alpha 1, beta 0).
enum class Caller {
  direct,            // cuBLAS called directly (the bench's handle), legacy stream: every ratio's baseline
  direct_64,         // the same through cuBLAS's 64-bit entry point
  fastgemm_cublas,   // fastgemm, FG_SGEMM_CUBLAS forced, legacy stream
  fastgemm_auto,     // fastgemm, AUTO, legacy stream
  stream_direct,     // cuBLAS called directly on the program's non-blocking stream
  stream_fastgemm,   // fastgemm, FG_SGEMM_CUBLAS forced, on that stream
  full_queries,      // the driver's full query of A, B and C (an allocation fastgemm has not seen)
  id_queries,        // the allocation id alone, of each (one it has seen)
  configured_direct  // cuBLAS called directly through a handle set up as fastgemm's (ConfiguredBlas)
};

// What a row's host time is reported over: nothing, itself (it is a baseline: +0), or a baseline's.
enum class Over { nothing, itself, direct, stream_direct };

struct ProblemCall {
  Caller caller;
  // The row's name; %s is "" or "StridedBatched" in a cuBLAS row, the entry point in a fastgemm row.
  const char *name;
  Over over;
  bool step;      // enqueues nothing (no device time); reported after the calls
  bool profiled;  // under --profile; each profiled call is compared with the first
};

// Measured in this order, the calls taking turns loop by loop.
constexpr ProblemCall kProblemCalls[] = {
    {Caller::direct, "cuBLAS direct: cublasSgemm%s", Over::itself, false, true},
    {Caller::direct_64, "cuBLAS direct: cublasSgemm%s_64", Over::direct, false, false},
    {Caller::fastgemm_cublas, "fastgemm %s (cublas)", Over::direct, false, true},
    {Caller::fastgemm_auto, "fastgemm %s (auto)", Over::direct, false, true},
    {Caller::stream_direct, "stream: cuBLAS direct: cublasSgemm%s", Over::itself, false, true},
    {Caller::stream_fastgemm, "stream: fastgemm %s (cublas)", Over::stream_direct, false, true},
    {Caller::full_queries, "step: cuPointerGetAttributes, full, A B C", Over::nothing, true, false},
    {Caller::id_queries, "step: cuPointerGetAttributes, id, A B C", Over::nothing, true, false},
    {Caller::configured_direct, "cuBLAS direct, set up as fastgemm's: cublasSgemm%s", Over::direct, false, false},
};

bool is_fastgemm(Caller caller) {
  return caller == Caller::fastgemm_cublas || caller == Caller::fastgemm_auto || caller == Caller::stream_fastgemm;
}

// The table's row of a caller.
size_t row_of(Caller caller) {
  size_t row = 0;
  while (kProblemCalls[row].caller != caller) ++row;
  return row;
}

// The arguments of an fg_sgemm call formatted as its trace line is, into a 320-character buffer: what a
// line costs, which a call pays only when someone listens (FASTGEMM_LOG=1 or an NVTX tool attached).
void format_sgemm_line(char *line, size_t size, const float *pointer) {
  const long long extent = 64;
  std::snprintf(line, size,
                "fg_sgemm(handle=%p, layout=%d, transa=%d, transb=%d, m=%lld, n=%lld, k=%lld, alpha=%g, A=%p, "
                "lda=%lld, B=%p, ldb=%lld, beta=%g, C=%p, ldc=%lld, algo=%s)",
                static_cast<const void *>(&extent), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, extent, extent, extent, 1.0,
                static_cast<const void *>(pointer), extent, static_cast<const void *>(pointer), extent, 0.0,
                static_cast<const void *>(pointer), extent, "auto");
}

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

  // The fastgemm handle a caller calls through; null for the others.
  fg_handle_t handle_of(Caller caller) const {
    switch (caller) {
      case Caller::fastgemm_cublas: return forced_cublas_;
      case Caller::fastgemm_auto: return handle_;
      case Caller::stream_fastgemm: return on_stream_;
      default: return nullptr;
    }
  }
  cudaStream_t stream_of(Caller caller) const {
    return caller == Caller::stream_direct || caller == Caller::stream_fastgemm ? stream_blas_.stream() : nullptr;
  }

  fg_handle_t handle_;
  fg_handle_t forced_cublas_;
  fg_handle_t on_stream_;
  const StreamBlas &stream_blas_;
  const ConfiguredBlas &configured_blas_;
  int loops_;
  SamplingProfile *profile_;
  std::vector<Entry> entries_;
};

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
  const auto cublas_call = [&](cublasHandle_t blas) {
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
  const auto cublas_64_call = [&](cublasHandle_t blas) {
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
  cublasHandle_t blas = vendor_blas().get();
  const auto call_of = [&](Caller caller) -> std::function<void()> {
    switch (caller) {
      case Caller::direct: return [&, blas] { cublas_call(blas); };
      case Caller::direct_64: return [&, blas] { cublas_64_call(blas); };
      case Caller::stream_direct: return [&] { cublas_call(stream_blas_.handle()); };
      case Caller::configured_direct: return [&] { cublas_call(configured_blas_.handle()); };
      case Caller::full_queries:
        return [&] {
          for (const void *pointer : {a.get(), b.get(), c.get()}) query_all_attributes(pointer);
        };
      case Caller::id_queries:
        return [&] {
          for (const void *pointer : {a.get(), b.get(), c.get()}) query_buffer_id(pointer);
        };
      default: return [&, handle = handle_of(caller)] { fastgemm_call(handle); };
    }
  };
  std::vector<std::function<void()>> calls;
  std::vector<cudaStream_t> streams;
  for (const ProblemCall &row : kProblemCalls) {
    calls.push_back(call_of(row.caller));
    streams.push_back(stream_of(row.caller));
  }
  std::vector<Cost> costs = measure_costs(calls, loops_, true, streams);
  const char *batched = s.batch == 1 ? "" : "StridedBatched";
  const char *entry_point = s.batch == 1 ? "fg_sgemm" : "fg_sgemm_strided_batched";
  const auto name_of = [&](const ProblemCall &row) {
    return format(row.name, is_fastgemm(row.caller) ? entry_point : batched);
  };
  const auto over_of = [&](const ProblemCall &row, const Cost &cost) {
    switch (row.over) {
      case Over::itself: return 0.0;
      case Over::direct: return cost.host_us_median - costs[row_of(Caller::direct)].host_us_median;
      case Over::stream_direct: return cost.host_us_median - costs[row_of(Caller::stream_direct)].host_us_median;
      default: return kNoValue;
    }
  };
  // The calls, then the steps, each group in the table's order.
  for (const bool steps : {false, true}) {
    for (size_t i = 0; i < std::size(kProblemCalls); ++i) {
      const ProblemCall &row = kProblemCalls[i];
      if (row.step != steps) continue;
      if (row.step) costs[i].device_us = kNoValue;  // it enqueues nothing
      std::string ran;
      if (const fg_handle_t handle = handle_of(row.caller); handle != nullptr) {
        fg_sgemm_algo_t algo = FG_SGEMM_AUTO;
        check_fastgemm(fg_get_last_sgemm_algo(handle, &algo), "fg_get_last_sgemm_algo");
        ran = fg_sgemm_algo_name(algo);
      }
      add({name_of(row), problem, ran, costs[i], over_of(row, costs[i])});
    }
  }
  if (s.batch == 1) add_host_problem(s);
  if (profile_ != nullptr) {
    std::vector<ProfiledCall> profiled;
    for (size_t i = 0; i < std::size(kProblemCalls); ++i) {
      if (kProblemCalls[i].profiled) profiled.push_back({name_of(kProblemCalls[i]), calls[i], streams[i]});
    }
    profile_calls(*profile_, loops_, problem, profiled, entries_);
  }
}

// fg_sgemm_host on pageable copies of the problem's operands: a synchronous call, each one a whole round trip
// (staging, product, C back), which is what a drop-in sgemm_ of this size pays, beside the same round trip
// written by hand with cuBLAS. A tenth of the loops: a round trip takes tens of microseconds or more.
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
  // The same round trip by hand with cuBLAS: A and B copied in, the product, C copied out, then a wait.
  DeviceBuffer da(a.size() * sizeof(float)), db(b.size() * sizeof(float)), dc(c.size() * sizeof(float));
  cublasHandle_t blas = vendor_blas().get();
  cudaStream_t stream = nullptr;
  check_cublas(cublasGetStream(blas, &stream), "cublasGetStream");
  const auto cublas_round_trip = [&] {
    const float one = 1.0f, zero = 0.0f;
    check_cuda(cudaMemcpyAsync(da.get(), a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice, stream),
               "cudaMemcpyAsync");
    check_cuda(cudaMemcpyAsync(db.get(), b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice, stream),
               "cudaMemcpyAsync");
    // Row-major C = A B is column-major C^T = B^T A^T.
    check_cublas(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(s.n), static_cast<int>(s.m),
                             static_cast<int>(s.k), &one, db.as<float>(), static_cast<int>(s.n), da.as<float>(),
                             static_cast<int>(s.k), &zero, dc.as<float>(), static_cast<int>(s.n)),
                 "cublasSgemm");
    check_cuda(cudaMemcpyAsync(c.data(), dc.get(), c.size() * sizeof(float), cudaMemcpyDeviceToHost, stream),
               "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  };
  const std::vector<Cost> costs = measure_costs({cublas_round_trip, host_call}, std::max(3, loops_ / 10), true);
  fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
  check_fastgemm(fg_get_last_sgemm_algo(handle_, &ran), "fg_get_last_sgemm_algo");
  add({"cublas round trip, pageable", describe(s), "", costs[0], kNoValue});
  add({"fastgemm fg_sgemm_host (auto), pageable", describe(s), fg_sgemm_algo_name(ran), costs[1], kNoValue});
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
  struct StepCall {
    const char *name;
    std::function<void()> call;
    bool enqueues = false;  // timed with events too, after the steps that enqueue nothing
    cudaStream_t stream = nullptr;
  };
  const StepCall steps[] = {
      {"step: fg_get_sgemm_algo (traced no-op)",
       [&] { check_fastgemm(fg_get_sgemm_algo(handle_, &algo), "fg_get_sgemm_algo"); }},
      {"step: snprintf of an fg_sgemm trace line", [&] { format_sgemm_line(line, sizeof line, buffer.as<float>()); }},
      {"step: cudaPointerGetAttributes",
       [&] { check_cuda(cudaPointerGetAttributes(&attributes, buffer.get()), "cudaPointerGetAttributes"); }},
      {"step: cuPointerGetAttributes, full (6 attributes)", [&] { query_all_attributes(buffer.get()); }},
      {"step: cuPointerGetAttributes, buffer id only", [&] { query_buffer_id(buffer.get()); }},
      {"step: cudaGetDevice", [&] { check_cuda(cudaGetDevice(&device), "cudaGetDevice"); }},
      {"step: cuCtxGetCurrent (device guard)", [&] { query_current_context(&context); }},
      {"step: cublasSetStream (same stream)", [&] { check_cublas(cublasSetStream(blas, 0), "cublasSetStream"); }},
      {"step: cudaStreamIsCapturing (stream)",
       [&] {
         cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
         check_cuda(cudaStreamIsCapturing(stream, &capture), "cudaStreamIsCapturing");
       }},
      {"step: cudaEventRecord (legacy stream)", [&] { check_cuda(cudaEventRecord(event, nullptr), "cudaEventRecord"); },
       true, nullptr},
      {"step: cudaEventRecord (stream)", [&] { check_cuda(cudaEventRecord(event, stream), "cudaEventRecord"); }, true,
       stream},
      {"step: empty kernel launch", launch_empty_kernel, true, nullptr},
  };
  std::vector<Cost> costs(std::size(steps));
  try {
    for (const bool enqueues : {false, true}) {
      std::vector<size_t> rows;
      std::vector<std::function<void()>> calls;
      std::vector<cudaStream_t> streams;
      for (size_t i = 0; i < std::size(steps); ++i) {
        if (steps[i].enqueues != enqueues) continue;
        rows.push_back(i);
        calls.push_back(steps[i].call);
        streams.push_back(steps[i].stream);
      }
      const std::vector<Cost> measured = measure_costs(calls, loops_, enqueues, streams);
      for (size_t j = 0; j < rows.size(); ++j) costs[rows[j]] = measured[j];
    }
  } catch (...) {
    (void)cudaEventDestroy(event);
    throw;
  }
  (void)cudaEventDestroy(event);
  for (size_t i = 0; i < std::size(steps); ++i) add({steps[i].name, "-", "", costs[i]});
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
      !options.depths.empty() || options.stages || options.host_time) {
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
