// SPDX-License-Identifier: Apache-2.0
// The results: one row per (algorithm, problem), printed as a table line on stdout as it completes and
// written at the end as CSV and JSON. sgemm and rowmean share all of it; a Metric says what they differ in.
#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "gpu.hpp"
#include "measure.hpp"
#include "stages.hpp"

namespace bench {

enum class Ceiling { fp32_peak, read_bandwidth };

struct Metric {
  const char *op;                       // "sgemm"
  const char *rate_unit;                // in the table: "GFLOPS"
  const char *rate_key;                 // column: "gflops"
  Ceiling ceiling;                      // what "% of" compares with
  const char *ceiling_label;            // in the table: "peak"
  const char *ceiling_key;              // column: "percent_of_peak"
  const char *error_label = "rel err";  // in the table: what rel_error measures
};

// One named value of a row or of the run. A number is stored formatted; an empty number has no value
// (null in JSON, blank in CSV).
struct Field {
  enum class Kind { text, number };
  std::string key;
  std::string value;
  Kind kind = Kind::text;
};
Field text_field(const std::string &key, const std::string &value);
Field number_field(const std::string &key, double value);
Field integer_field(const std::string &key, int64_t value);

enum class Outcome { ok, check_failed, not_supported, error };

constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

struct Row {
  std::string algo;
  std::string ran;            // the algorithm AUTO chose, where the ABI tells
  std::string math;           // the math mode the call ran in, where the op has one: "fp32", "fp32_emulated"
  std::string mode;           // "cold" or "hot": how it was timed
  std::string problem;        // as the table shows it
  std::vector<Field> fields;  // the problem's columns
  Outcome outcome = Outcome::ok;
  std::string message;
  Timing timing;
  double rate = kNoValue;  // GFLOP/s or GB/s from the median time
  double ratio_to_cublas = kNoValue;
  double baseline_median_ms = kNoValue;  // what the ratio divides: the baseline's median, timed beside it in hot mode
  double percent_of_ceiling = kNoValue;
  double rel_error = kNoValue;
  double tolerance = kNoValue;
  // In the emulated math mode: the moduli count the call ran (0: FP32 throughout), and its INT8 tensor-core
  // work (the moduli's products and the codes' product, 2 m n k operations each) per second of the whole call.
  int moduli = 0;
  double int8_tops = kNoValue;
  // sgemm --stages, in the emulated math mode: one more call's kernels, traced, in ms by stage (stages.hpp).
  StageTimes stages;
  // sgemm --host-time: the median host time of host_calls calls enqueued back to back, each from the call to its
  // return, in us (0 calls: not measured).
  double host_us = kNoValue;
  int host_calls = 0;
};

struct RunInfo {
  Metric metric{};
  DeviceInfo device;
  double read_bandwidth_gb_per_s = kNoValue;  // measured in the run when the metric needs it
  size_t read_sweep_bytes = 0;                // the buffer it was measured over
  std::string fastgemm_version;
  std::string command;
  std::string timing;
  std::string math;                 // the fastgemm handle's math mode, where the op has one
  bool shape_reproducible = false;  // the handle computes each element independently of the call's shape

  double ceiling() const { return metric.ceiling == Ceiling::fp32_peak ? device.peak_gflops : read_bandwidth_gb_per_s; }
};

// The lines above the table: device, versions, timing scheme.
std::vector<std::string> heading(const RunInfo &run);

// "auto   row NN  M N K = 4096 4096 4096, Time = min 2.701 median 2.712 max 2.803 ms, 51000 GFLOPS, ..."
std::string table_line(const Row &row, const Metric &metric, size_t algo_width);

struct GeometricMean {
  std::string algo;         // with the timing mode, "auto hot"
  double ratio = kNoValue;  // of cuBLAS's median time to the algorithm's
  int cases = 0;            // problems the algorithm passed and was timed on
};
// For each algorithm other than cuBLAS (the algorithm named cublas_name) and each timing mode it was timed
// in at least once, in the order rows first name them.
std::vector<GeometricMean> geometric_means(const std::vector<Row> &rows, const std::string &cublas_name);
std::string geometric_mean_line(const std::vector<GeometricMean> &means, size_t case_count);

void write_csv(std::ostream &out, const RunInfo &run, const std::vector<Row> &rows);

// The run's own columns (device, versions), which every CSV row and the JSON's top level carry.
std::vector<Field> run_fields(const RunInfo &run);
// Rows of named values as CSV (a header from the first row's keys) and as a JSON object
// {top fields..., "results": [rows...]}.
void write_field_csv(std::ostream &out, const std::vector<std::vector<Field>> &rows);
void write_field_json(std::ostream &out, const std::vector<Field> &top, const std::vector<std::vector<Field>> &rows);
void write_json(std::ostream &out, const RunInfo &run, const std::vector<Row> &rows,
                const std::vector<GeometricMean> &means);

// A one-line "what runs now" on stderr, redrawn in place; only when stderr is a terminal, so logs stay clean.
class Progress {
 public:
  Progress();
  void show(const std::string &text);
  void clear();

 private:
  bool enabled_ = false;
  bool shown_ = false;
};

}  // namespace bench
