// SPDX-License-Identifier: Apache-2.0
#include "runner.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <utility>
#include <vector>

#include "gpu.hpp"
#include "measure.hpp"
#include "stages.hpp"
#include "text.hpp"

namespace bench {
namespace {

constexpr int kLastAlgoId = 100;

// --host-time: calls back to back until this many, or until they have taken this long on the host (a call over host
// memory returns when done), at least kLeastHostCalls.
constexpr int kMostHostCalls = 15;
constexpr int kLeastHostCalls = 3;
constexpr double kHostCallsSeconds = 0.5;

// The median host time of `call` over calls enqueued back to back, each from the call to its return, in us; *calls
// is how many ran. Waits for the device after them.
double host_us_per_call(const std::function<void()> &call, int *calls) {
  std::vector<double> us;
  double seconds = 0;
  while (static_cast<int>(us.size()) < kMostHostCalls &&
         (static_cast<int>(us.size()) < kLeastHostCalls || seconds < kHostCallsSeconds)) {
    const auto begin = std::chrono::steady_clock::now();
    call();
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    us.push_back(took * 1e6);
    seconds += took;
  }
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the calls timed on the host");
  std::sort(us.begin(), us.end());
  *calls = static_cast<int>(us.size());
  return us[us.size() / 2];
}

std::string version_string(int version) {
  return format("%d.%d.%d", version / 10000, version / 100 % 100, version % 100);
}

// Checks and times every algorithm of a plan, one problem at a time, and keeps the rows.
class Runner {
 public:
  Runner(const Plan &plan, const Options &options, fg_handle_t handle, Timer &timer, const RunInfo &run)
      : plan_(plan),
        handle_(handle),
        timer_(timer),
        run_(run),
        trace_stages_(options.stages),
        host_time_(options.host_time),
        host_devices_(options.host_devices) {
    if (options.cold) modes_.push_back(Mode::cold);
    if (options.hot) modes_.push_back(Mode::hot);
    for (int algo : plan.algos) algo_width_ = std::max(algo_width_, std::strlen(plan.family.name(algo)));
  }

  // Returns false once the device is lost and nothing more can run.
  bool run_case(const BenchCase &bench_case, size_t index);

  const std::vector<Row> &rows() const { return rows_; }
  int failures() const { return failures_; }

 private:
  enum class Mode { cold, hot };
  static const char *mode_name(Mode mode) { return mode == Mode::cold ? "cold" : "hot"; }

  std::unique_ptr<Workload> prepare(const BenchCase &bench_case);
  // One row per timing mode; a failure before timing gives one row with the first mode.
  std::vector<Row> measure(Row row, Workload &workload, int algo);
  std::string ran_algo();
  // One more call of the algorithm, its kernels traced by stage (--stages), on a handle of its own set as the
  // bench's is: a graph the handle kept from the timed calls was made before the trace began.
  StageTimes traced_call(Workload &workload, int algo);
  void record(Row row, double work_per_call);

  const Plan &plan_;
  fg_handle_t handle_;
  Timer &timer_;
  const RunInfo &run_;
  Progress progress_;
  size_t algo_width_ = 0;
  bool trace_stages_ = false;      // --stages: the emulated rows' kernels by stage
  bool host_time_ = false;         // --host-time: each row's host time per call
  std::vector<int> host_devices_;  // --devices, which main set on the bench's handle
  std::vector<Mode> modes_;
  double baseline_median_ms_[2] = {kNoValue, kNoValue};  // by Mode
  std::vector<Row> rows_;
  int failures_ = 0;
};

std::unique_ptr<Workload> Runner::prepare(const BenchCase &bench_case) {
  std::unique_ptr<Workload> workload = bench_case.allocate();
  check_fastgemm(plan_.family.select(handle_, plan_.family.cublas_id), plan_.family.select_call);
  // The reference is cuBLAS's whatever the handle's reproducibility (FG_REPRODUCIBLE_SHAPE refuses it).
  fg_reproducibility_t level = FG_REPRODUCIBLE_RUN;
  check_fastgemm(fg_get_reproducibility(handle_, &level), "fg_get_reproducibility");
  check_fastgemm(fg_set_reproducibility(handle_, FG_REPRODUCIBLE_RUN), "fg_set_reproducibility");
  const fg_status_t reference = workload->run(handle_, Target::reference);
  check_fastgemm(fg_set_reproducibility(handle_, level), "fg_set_reproducibility");
  check_fastgemm(reference, "the cuBLAS reference call");
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the cuBLAS reference call");
  return workload;
}

bool Runner::run_case(const BenchCase &bench_case, size_t index) {
  const std::string position = format("[%zu/%zu]", index + 1, plan_.cases.size());
  Row base;
  base.problem = bench_case.describe();
  base.fields = bench_case.fields();
  base.tolerance = bench_case.tolerance();
  base.math = run_.math;
  baseline_median_ms_[0] = baseline_median_ms_[1] = kNoValue;

  progress_.show(position + " cuBLAS reference for " + base.problem);
  std::unique_ptr<Workload> workload;
  try {
    workload = prepare(bench_case);
  } catch (const BenchError &error) {
    for (int algo : plan_.algos) {
      Row row = base;
      row.algo = plan_.family.name(algo);
      if (algo == kDirectVendorId && !row.math.empty()) row.math = "fp32";
      row.mode = mode_name(modes_.front());
      row.outcome = Outcome::error;
      row.message = std::string("no cuBLAS reference: ") + error.what();
      record(std::move(row), bench_case.work_per_call());
    }
    return device_still_usable();
  }

  for (int algo : plan_.algos) {
    progress_.show(position + " " + plan_.family.name(algo) + " " + base.problem);
    bool failed = false;
    for (Row &row : measure(base, *workload, algo)) {
      if (algo == baseline_algo(plan_.family)) {
        baseline_median_ms_[row.mode == mode_name(Mode::cold) ? 0 : 1] = row.timing.median_ms;
      }
      failed |= row.outcome == Outcome::error;
      record(std::move(row), bench_case.work_per_call());
    }
    if (failed && !device_still_usable()) return false;
  }
  return true;
}

std::vector<Row> Runner::measure(Row row, Workload &workload, int algo) {
  row.algo = plan_.family.name(algo);
  row.mode = mode_name(modes_.front());
  const bool direct = algo == kDirectVendorId;
  // cuBLAS called directly knows no fastgemm math mode: it runs FP32.
  if (direct && !row.math.empty()) row.math = "fp32";
  const auto call = [&] {
    if (direct) {
      workload.run_direct_vendor();
    } else {
      check_fastgemm(workload.run(handle_, Target::output), "a timed call");
    }
  };
  try {
    if (!direct) check_fastgemm(plan_.family.select(handle_, algo), plan_.family.select_call);
    workload.poison_output();
    if (direct) {
      workload.run_direct_vendor();
    } else {
      const fg_status_t status = workload.run(handle_, Target::output);
      if (status == FG_STATUS_NOT_SUPPORTED) {
        row.outcome = Outcome::not_supported;
        row.message = fg_last_error_message();
        return {row};
      }
      check_fastgemm(status, "the checked call");
    }
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the checked call");
    if (!direct) row.ran = ran_algo();
    if (!direct && row.math == "fp32_emulated" && plan_.family.last_moduli != nullptr)
      check_fastgemm(plan_.family.last_moduli(handle_, &row.moduli), "fg_get_last_sgemm_emulation");
    row.rel_error = workload.relative_error();
    // Written so that a NaN error fails too.
    if (!(row.rel_error <= row.tolerance)) {
      row.outcome = Outcome::check_failed;
      return {row};
    }
    std::vector<Row> rows;
    for (Mode mode : modes_) {
      Row timed = row;
      timed.mode = mode_name(mode);
      if (mode == Mode::cold) {
        timed.timing = timer_.measure(call);
      } else if (direct || !plan_.family.has_direct_vendor) {
        timed.timing = timer_.measure_hot(call);
      } else {
        // Problems too small to keep the device busy run at the host's pace, which drifts: the
        // baseline is timed again beside each algorithm, its samples taking turns with the algorithm's.
        const std::pair<Timing, Timing> pair = timer_.measure_hot_pair(call, [&] { workload.run_direct_vendor(); });
        timed.timing = pair.first;
        timed.baseline_median_ms = pair.second.median_ms;
      }
      rows.push_back(std::move(timed));
    }
    if (host_time_) {
      int calls = 0;
      const double us = host_us_per_call(call, &calls);
      for (Row &timed : rows) timed.host_us = us, timed.host_calls = calls;
    }
    if (trace_stages_ && !direct && row.math == "fp32_emulated") {
      const StageTimes stages = traced_call(workload, algo);
      for (Row &timed : rows) timed.stages = stages;
    }
    return rows;
  } catch (const BenchError &error) {
    row.outcome = Outcome::error;
    row.message = error.what();
  }
  return {row};
}

StageTimes Runner::traced_call(Workload &workload, int algo) {
  fg_handle_t traced = nullptr;
  check_fastgemm(fg_create(&traced), "fg_create for the traced call");
  const std::unique_ptr<fg_context, fg_status_t (*)(fg_handle_t)> owned(traced, fg_destroy);
  fg_math_mode_t math = FG_MATH_FP32;
  fg_reproducibility_t level = FG_REPRODUCIBLE_RUN;
  check_fastgemm(fg_get_math_mode(handle_, &math), "fg_get_math_mode");
  check_fastgemm(fg_get_reproducibility(handle_, &level), "fg_get_reproducibility");
  check_fastgemm(fg_set_math_mode(traced, math), "fg_set_math_mode");
  check_fastgemm(fg_set_reproducibility(traced, level), "fg_set_reproducibility");
  if (!host_devices_.empty())
    check_fastgemm(fg_set_devices(traced, host_devices_.data(), static_cast<int>(host_devices_.size())),
                   "fg_set_devices");
  check_fastgemm(plan_.family.select(traced, algo), plan_.family.select_call);
  return trace_stages([&] { check_fastgemm(workload.run(traced, Target::output), "the traced call"); });
}

std::string Runner::ran_algo() {
  if (plan_.family.last_ran == nullptr) return "";
  int id = 0;
  check_fastgemm(plan_.family.last_ran(handle_, &id), plan_.family.last_ran_call);
  return plan_.family.name(id);
}

void Runner::record(Row row, double work_per_call) {
  if (row.outcome == Outcome::ok) {
    row.rate = work_per_call / (row.timing.median_ms * 1e-3) / 1e9;
    if (!std::isfinite(row.baseline_median_ms)) {
      row.baseline_median_ms = baseline_median_ms_[row.mode == mode_name(Mode::cold) ? 0 : 1];
    }
    row.ratio_to_cublas = row.baseline_median_ms / row.timing.median_ms;
    row.percent_of_ceiling = 100 * row.rate / run_.ceiling();
    if (row.moduli >= 2) row.int8_tops = (row.moduli + 1) * work_per_call / (row.timing.median_ms * 1e-3) / 1e12;
  }
  if (row.outcome == Outcome::check_failed || row.outcome == Outcome::error) ++failures_;
  progress_.clear();
  std::printf("%s\n", table_line(row, plan_.metric, algo_width_).c_str());
  std::fflush(stdout);
  rows_.push_back(std::move(row));
}

std::ofstream open_report(const std::string &path) {
  std::ofstream out;
  if (path.empty()) return out;
  out.open(path);
  if (!out) throw BenchError("cannot open " + path + " for writing: " + std::strerror(errno));
  return out;
}

// Returns whether the file was written completely; an unopened stream (no such report asked for) was.
template <typename Write>
bool write_report(std::ofstream &out, const std::string &path, Write write) {
  if (!out.is_open()) return true;
  write(out);
  out.close();
  if (out) return true;
  std::fprintf(stderr, "fastgemm-bench: writing %s failed\n", path.c_str());
  return false;
}

int run_checked(const Plan &plan, const Options &options, fg_handle_t handle) {
  int ordinal = 0;
  check_cuda(cudaGetDevice(&ordinal), "cudaGetDevice");
  RunInfo run;
  run.metric = plan.metric;
  run.device = query_device(ordinal);
  run.fastgemm_version = version_string(fg_version());
  run.command = options.command_line;
  if (plan.math) check_fastgemm(fg_set_math_mode(handle, *plan.math), "fg_set_math_mode");
  if (plan.family.math_mode_name != nullptr) {
    run.math = plan.family.math_mode_name(handle);
    // Set by FASTGEMM_REPRODUCIBLE=shape, which the handle read when it was made.
    fg_reproducibility_t level = FG_REPRODUCIBLE_RUN;
    check_fastgemm(fg_get_reproducibility(handle, &level), "fg_get_reproducibility");
    run.shape_reproducible = level == FG_REPRODUCIBLE_SHAPE;
  }
  Timer timer(run.device, options.timing);
  std::vector<std::string> timings;
  if (options.cold) timings.push_back(timer.describe());
  if (options.hot) timings.push_back(timer.describe_hot());
  run.timing = join(timings, "; ");
  // Opened before the sweep, so a path that cannot be written fails now rather than after it.
  std::ofstream csv = open_report(options.csv_path);
  std::ofstream json = open_report(options.json_path);
  if (plan.metric.ceiling == Ceiling::read_bandwidth) {
    const ReadBandwidth bandwidth = measure_read_bandwidth(timer, run.device);
    run.read_bandwidth_gb_per_s = bandwidth.gb_per_s;
    run.read_sweep_bytes = bandwidth.swept_bytes;
  }
  for (const std::string &line : heading(run)) std::printf("%s\n", line.c_str());
  std::fflush(stdout);

  Runner runner(plan, options, handle, timer, run);
  for (size_t i = 0; i < plan.cases.size(); ++i) {
    if (!runner.run_case(*plan.cases[i], i)) {
      std::fprintf(stderr, "fastgemm-bench: the device can no longer run work; stopping\n");
      break;
    }
  }
  const std::vector<GeometricMean> means = geometric_means(runner.rows(), plan.family.name(baseline_algo(plan.family)));
  if (!means.empty()) std::printf("%s\n", geometric_mean_line(means, plan.cases.size()).c_str());

  bool written = write_report(csv, options.csv_path, [&](std::ostream &out) { write_csv(out, run, runner.rows()); });
  written &=
      write_report(json, options.json_path, [&](std::ostream &out) { write_json(out, run, runner.rows(), means); });
  if (runner.failures() > 0) {
    std::fprintf(stderr, "fastgemm-bench: %d failed check(s) or call(s)\n", runner.failures());
  }
  return runner.failures() == 0 && written ? 0 : 1;
}

}  // namespace

std::vector<int> carried_algos(const AlgoFamily &family) {
  std::vector<int> ids;
  for (int id = 0; id <= kLastAlgoId; ++id) {
    if (std::strcmp(family.name(id), "unknown") != 0) ids.push_back(id);
  }
  return ids;
}

std::vector<int> resolve_algos(const std::vector<std::string> &names, const AlgoFamily &family) {
  const std::vector<int> carried = carried_algos(family);
  std::vector<int> ids = {baseline_algo(family), family.cublas_id};
  if (ids[0] == ids[1]) ids.pop_back();
  const auto add = [&](int id) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  for (const std::string &name : names.empty() ? std::vector<std::string>{"auto"} : names) {
    if (name == "all") {
      for (int id : carried) add(id);
      continue;
    }
    add(algo_named(name, family, carried));
  }
  return ids;
}

int algo_named(const std::string &name, const AlgoFamily &family, const std::vector<int> &carried) {
  const auto match = std::find_if(carried.begin(), carried.end(), [&](int id) {
    const char *former = family.former_name != nullptr ? family.former_name(id) : nullptr;
    return name == family.name(id) || (former != nullptr && name == former);
  });
  if (match == carried.end()) {
    std::vector<std::string> known;
    for (int id : carried) known.push_back(family.name(id));
    throw UsageError(
        format("--algo '%s' is not an algorithm of this build (%s, or all)", name.c_str(), join(known, ", ").c_str()));
  }
  return *match;
}

int run_plan(const Plan &plan, const Options &options, fg_handle_t handle) {
  try {
    return run_checked(plan, options, handle);
  } catch (const BenchError &error) {
    std::fprintf(stderr, "fastgemm-bench: %s\n", error.what());
    return 1;
  }
}

}  // namespace bench
