// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "text.hpp"

namespace bench {
namespace {

const char *outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::ok: return "ok";
    case Outcome::check_failed: return "check_failed";
    case Outcome::not_supported: return "not_supported";
    case Outcome::error: return "error";
  }
  return "error";
}

std::string percent(double value) { return std::isfinite(value) ? format("%.1f%%", value) : "n/a"; }

std::vector<Field> row_fields(const Row &row, const Metric &metric) {
  std::vector<Field> fields = {text_field("op", metric.op), text_field("algo", row.algo), text_field("ran", row.ran),
                               text_field("mode", row.mode)};
  if (!row.math.empty()) fields.push_back(text_field("math", row.math));
  fields.insert(fields.end(), row.fields.begin(), row.fields.end());
  const std::vector<Field> measured = {
      text_field("status", outcome_name(row.outcome)),
      integer_field("repeats", row.timing.repeats),
      number_field("min_ms", row.timing.min_ms),
      number_field("median_ms", row.timing.median_ms),
      number_field("max_ms", row.timing.max_ms),
      number_field(metric.rate_key, row.rate),
      number_field("ratio_to_cublas", row.ratio_to_cublas),
      number_field("baseline_median_ms", row.baseline_median_ms),
      number_field(metric.ceiling_key, row.percent_of_ceiling),
      number_field("rel_error", row.rel_error),
      number_field("tolerance", row.tolerance),
      text_field("message", row.message),
      integer_field("moduli", row.moduli),
      number_field("int8_tops", row.int8_tops),
  };
  fields.insert(fields.end(), measured.begin(), measured.end());
  // Blank unless the row's kernels were traced (sgemm --stages).
  for (int stage = 0; stage < kStageCount; ++stage)
    fields.push_back(number_field(std::string("stage_") + stage_name(stage) + "_ms",
                                  row.stages.traced ? row.stages.ms[stage] : kNoValue));
  fields.push_back(number_field("host_us_per_call", row.host_calls > 0 ? row.host_us : kNoValue));
  return fields;
}

std::string csv_value(const std::string &value) {
  if (value.find_first_of(",\"\n\r") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char c : value) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string json_string(const std::string &value) {
  std::string quoted = "\"";
  for (unsigned char c : value) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += static_cast<char>(c);
    } else if (c < 0x20) {
      quoted += format("\\u%04x", c);
    } else {
      quoted += static_cast<char>(c);
    }
  }
  return quoted + "\"";
}

std::string json_value(const Field &field) {
  if (field.kind == Field::Kind::text) return json_string(field.value);
  return field.value.empty() ? "null" : field.value;
}

std::string json_object(const std::vector<Field> &fields) {
  std::vector<std::string> members;
  for (const Field &field : fields) members.push_back(json_string(field.key) + ": " + json_value(field));
  return "{" + join(members, ", ") + "}";
}

}  // namespace

std::vector<Field> run_fields(const RunInfo &run) {
  const DeviceInfo &device = run.device;
  return {
      text_field("device", device.name),
      integer_field("device_ordinal", device.ordinal),
      text_field("compute_capability", format("%d.%d", device.cc_major, device.cc_minor)),
      integer_field("sm_count", device.sm_count),
      number_field("clock_mhz", device.clock_mhz),
      integer_field("fp32_lanes_per_sm", device.fp32_lanes_per_sm),
      number_field("peak_gflops", device.peak_gflops),
      number_field("peak_int8_tops", device.peak_int8_tops),
      integer_field("l2_bytes", static_cast<int64_t>(device.l2_bytes)),
      number_field("read_bandwidth_gb_per_s", run.read_bandwidth_gb_per_s),
      text_field("cuda_driver", cuda_version_string(device.driver_version)),
      text_field("cuda_runtime", cuda_version_string(device.runtime_version)),
      text_field("fastgemm_version", run.fastgemm_version),
  };
}

Field text_field(const std::string &key, const std::string &value) { return {key, value, Field::Kind::text}; }

Field number_field(const std::string &key, double value) {
  return {key, std::isfinite(value) ? format("%.9g", value) : "", Field::Kind::number};
}

Field integer_field(const std::string &key, int64_t value) { return {key, std::to_string(value), Field::Kind::number}; }

std::vector<std::string> heading(const RunInfo &run) {
  const DeviceInfo &device = run.device;
  std::vector<std::string> lines = {
      format("fastgemm-bench %s on %s: sm_%d%d, %d SMs at %.0f MHz, %d FP32 lanes/SM, FP32 peak %.0f GFLOPS, L2 %s%s",
             run.metric.op, device.name.c_str(), device.cc_major, device.cc_minor, device.sm_count, device.clock_mhz,
             device.fp32_lanes_per_sm, device.peak_gflops, byte_size(static_cast<double>(device.l2_bytes)).c_str(),
             device.peak_int8_tops > 0 ? format(", INT8 peak %.0f TOPS", device.peak_int8_tops).c_str() : ""),
      format("CUDA driver %s, runtime %s; fastgemm %s", cuda_version_string(device.driver_version).c_str(),
             cuda_version_string(device.runtime_version).c_str(), run.fastgemm_version.c_str()),
      "Timing: " + run.timing,
  };
  if (!run.math.empty()) {
    lines.push_back("Math mode of fastgemm's calls: " + run.math +
                    "; cuBLAS called directly, the ratios' base, runs FP32 (TF32 off)");
  }
  if (run.shape_reproducible) {
    lines.push_back(
        "Reproducibility of fastgemm's calls: shape (FG_REPRODUCIBLE_SHAPE: no split of k, no cuBLAS; "
        "forced algorithms outside it are refused)");
  }
  if (run.metric.ceiling == Ceiling::read_bandwidth) {
    lines.push_back(format("Read bandwidth: %.1f GB/s (float4 read-only sweeps over %s, timed as above)",
                           run.read_bandwidth_gb_per_s, byte_size(static_cast<double>(run.read_sweep_bytes)).c_str()));
  }
  return lines;
}

std::string table_line(const Row &row, const Metric &metric, size_t algo_width) {
  std::string line =
      format("%-*s %-4s %s", static_cast<int>(algo_width), row.algo.c_str(), row.mode.c_str(), row.problem.c_str());
  switch (row.outcome) {
    case Outcome::not_supported: return line + ", not supported: " + row.message;
    case Outcome::error: return line + ", ERROR: " + row.message;
    case Outcome::check_failed:
      return line +
             format(", CHECK FAILED: %s %.2e > tolerance %.2e", metric.error_label, row.rel_error, row.tolerance);
    case Outcome::ok: break;
  }
  line += format(", Time = min %s median %s max %s ms, %.1f %s, %s of cuBLAS, %s of %s, %s %.1e",
                 milliseconds(row.timing.min_ms).c_str(), milliseconds(row.timing.median_ms).c_str(),
                 milliseconds(row.timing.max_ms).c_str(), row.rate, metric.rate_unit,
                 percent(100 * row.ratio_to_cublas).c_str(), percent(row.percent_of_ceiling).c_str(),
                 metric.ceiling_label, metric.error_label, row.rel_error);
  if (!row.ran.empty() && row.ran != row.algo) line += " (ran " + row.ran + ")";
  if (!row.math.empty() && row.math != "fp32") line += " [" + row.math + "]";
  if (row.moduli >= 2) line += format(" %d moduli, INT8 %.0f TOPS over the call", row.moduli, row.int8_tops);
  if (row.stages.traced) {
    line += "; kernels by stage, ms:";
    for (int stage = 0; stage < kStageCount; ++stage)
      line += format(" %s %s", stage_name(stage), milliseconds(row.stages.ms[stage]).c_str());
  } else if (!row.stages.why_not.empty()) {
    line += "; no stages: " + row.stages.why_not;
  }
  if (row.host_calls > 0)
    line += format("; host %.1f us a call (median of %d back to back)", row.host_us, row.host_calls);
  return line;
}

std::vector<GeometricMean> geometric_means(const std::vector<Row> &rows, const std::string &cublas_name) {
  std::vector<GeometricMean> means;
  std::vector<double> log_sums;
  for (const Row &row : rows) {
    if (row.algo == cublas_name || row.outcome != Outcome::ok) continue;
    if (!std::isfinite(row.ratio_to_cublas) || row.ratio_to_cublas <= 0) continue;
    const std::string name = row.mode.empty() ? row.algo : row.algo + " " + row.mode;
    size_t index = 0;
    while (index < means.size() && means[index].algo != name) ++index;
    if (index == means.size()) {
      means.push_back({name, kNoValue, 0});
      log_sums.push_back(0);
    }
    log_sums[index] += std::log(row.ratio_to_cublas);
    ++means[index].cases;
  }
  for (size_t i = 0; i < means.size(); ++i) means[i].ratio = std::exp(log_sums[i] / means[i].cases);
  return means;
}

std::string geometric_mean_line(const std::vector<GeometricMean> &means, size_t case_count) {
  std::vector<std::string> parts;
  for (const GeometricMean &mean : means) {
    std::string part = mean.algo + " " + percent(100 * mean.ratio);
    if (static_cast<size_t>(mean.cases) != case_count) part += format(" (%d of %zu)", mean.cases, case_count);
    parts.push_back(part);
  }
  return format("Geometric mean of the speed relative to cuBLAS over %zu problems: %s", case_count,
                join(parts, ", ").c_str());
}

void write_csv(std::ostream &out, const RunInfo &run, const std::vector<Row> &rows) {
  if (rows.empty()) return;
  const std::vector<Field> shared = run_fields(run);
  std::vector<std::string> header;
  for (const Field &field : row_fields(rows.front(), run.metric)) header.push_back(field.key);
  for (const Field &field : shared) header.push_back(field.key);
  out << join(header, ",") << "\n";
  for (const Row &row : rows) {
    std::vector<std::string> values;
    for (const Field &field : row_fields(row, run.metric)) values.push_back(csv_value(field.value));
    for (const Field &field : shared) values.push_back(csv_value(field.value));
    out << join(values, ",") << "\n";
  }
}

void write_json(std::ostream &out, const RunInfo &run, const std::vector<Row> &rows,
                const std::vector<GeometricMean> &means) {
  std::vector<Field> top = {text_field("tool", "fastgemm-bench"), text_field("op", run.metric.op),
                            text_field("command", run.command), text_field("timing", run.timing)};
  const std::vector<Field> shared = run_fields(run);
  top.insert(top.end(), shared.begin(), shared.end());
  out << "{\n";
  for (const Field &field : top) out << "  " << json_string(field.key) << ": " << json_value(field) << ",\n";
  out << "  \"results\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    out << (i == 0 ? "\n    " : ",\n    ") << json_object(row_fields(rows[i], run.metric));
  }
  out << "\n  ],\n  \"geometric_mean_ratio_to_cublas\": {";
  for (size_t i = 0; i < means.size(); ++i) {
    out << (i == 0 ? "\n    " : ",\n    ") << json_string(means[i].algo) << ": "
        << json_object({number_field("ratio", means[i].ratio), integer_field("cases", means[i].cases)});
  }
  out << "\n  }\n}\n";
}

void write_field_csv(std::ostream &out, const std::vector<std::vector<Field>> &rows) {
  if (rows.empty()) return;
  std::vector<std::string> header;
  for (const Field &field : rows.front()) header.push_back(field.key);
  out << join(header, ",") << "\n";
  for (const std::vector<Field> &row : rows) {
    std::vector<std::string> values;
    for (const Field &field : row) values.push_back(csv_value(field.value));
    out << join(values, ",") << "\n";
  }
}

void write_field_json(std::ostream &out, const std::vector<Field> &top, const std::vector<std::vector<Field>> &rows) {
  out << "{\n";
  for (const Field &field : top) out << "  " << json_string(field.key) << ": " << json_value(field) << ",\n";
  out << "  \"results\": [";
  for (size_t i = 0; i < rows.size(); ++i) out << (i == 0 ? "\n    " : ",\n    ") << json_object(rows[i]);
  out << "\n  ]\n}\n";
}

Progress::Progress() : enabled_(isatty(fileno(stderr)) != 0) {}

void Progress::show(const std::string &text) {
  if (!enabled_) return;
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void Progress::clear() {
  if (!shown_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace bench
