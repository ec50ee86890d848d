// SPDX-License-Identifier: Apache-2.0
// `fastgemm-bench accuracy`: the accuracy contract of FG_MATH_FP32_EMULATED, measured. For each depth k and input
// distribution, C = A B (m = n = 1024) by cuBLAS FP32 and by fastgemm in the emulated mode, each compared with the
// exact product; every fastgemm row is judged against cuBLAS's figures on the same inputs and against the
// per-element guarantee, with what the emulation did (its moduli, the elements it sent to FP32) beside it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "distributions.hpp"
#include "error_measures.hpp"
#include "gpu.hpp"
#include "ops.hpp"
#include "products.hpp"
#include "report.hpp"
#include "text.hpp"

namespace bench {
namespace {

constexpr int64_t kSize = 1024;  // m = n
// The emulating algorithms, forced beside AUTO when the build carries them. New ones join this list.
constexpr fg_sgemm_algo_t kEmulatingAlgos[] = {FG_SGEMM_OZAKI_INT8};
// cublasSgemm called directly, as in the sgemm command's rows.
constexpr const char *kCublasName = "cublas_direct";
constexpr uint64_t kSeedA = 0xACC0A;
constexpr uint64_t kSeedB = 0xACC0B;

enum class Verdict { baseline, met, missed, declined, failed };

const char *verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::baseline: return "baseline";
    case Verdict::met: return "met";
    case Verdict::missed: return "missed";
    case Verdict::declined: return "declined";
    case Verdict::failed: return "failed";
  }
  return "failed";
}

struct AccuracyRow {
  int64_t k = 0;
  const char *distribution = "";
  bool integer = false;  // the distribution's: inexact elements are counted
  std::string algo;
  std::string ran;  // what AUTO chose
  Verdict verdict = Verdict::failed;
  std::string message;  // what was missed, or why the call declined or failed
  bool measured = false;
  ErrorMeasures errors;
  CertificateCounts certificate;
  bool emulation_known = false;  // fastgemm rows: fg_get_last_sgemm_emulation's report
  int moduli = 0;
  int64_t fp32_elements = 0;
  double normwise_ratio = kNoValue;  // to cuBLAS's
  double median_ratio = kNoValue;
  double largest_ratio = kNoValue;
};

AccuracyRow new_row(int64_t k, const DistributionInfo &distribution, const std::string &algo) {
  AccuracyRow row;
  row.k = k;
  row.distribution = distribution.name;
  row.integer = distribution.integer;
  row.algo = algo;
  return row;
}

double ratio(double value, double base) { return base > 0 ? value / base : kNoValue; }

double fp32_fraction(const AccuracyRow &row) {
  return row.emulation_known ? static_cast<double>(row.fp32_elements) / static_cast<double>(kSize * kSize) : kNoValue;
}

// An integer column that some rows leave empty.
Field optional_integer(const std::string &key, int64_t value, bool present) {
  Field field = integer_field(key, value);
  if (!present) field.value.clear();
  return field;
}

std::string figure(double value, double ratio_to_cublas) {
  std::string text = format("%.2e", value);
  if (std::isfinite(ratio_to_cublas)) text += format(" (%.2fx)", ratio_to_cublas);
  return text;
}

std::string table_line(const AccuracyRow &row) {
  std::string line = format("k %6lld  %-16s %-12s", static_cast<long long>(row.k), row.distribution, row.algo.c_str());
  if (!row.measured) return line + " " + verdict_name(row.verdict) + ": " + row.message;
  line += format("  normwise %-18s median %-18s max %-18s NaN/Inf %lld",
                 figure(row.errors.normwise, row.normwise_ratio).c_str(),
                 figure(row.errors.median, row.median_ratio).c_str(),
                 figure(row.errors.largest, row.largest_ratio).c_str(), static_cast<long long>(row.errors.nonfinite));
  line += format("  uncertified %lld", static_cast<long long>(row.certificate.uncertified));
  if (row.integer) line += format("  inexact %lld", static_cast<long long>(row.certificate.inexact));
  if (row.emulation_known)
    line += format("  moduli %d fp32 %lld (%.2f%%)", row.moduli, static_cast<long long>(row.fp32_elements),
                   100 * fp32_fraction(row));
  if (row.verdict != Verdict::baseline) line += std::string("  ") + verdict_name(row.verdict);
  if (!row.message.empty()) line += " (" + row.message + ")";
  if (!row.ran.empty() && row.ran != row.algo) line += "  ran " + row.ran;
  return line;
}

std::vector<Field> row_fields(const AccuracyRow &row) {
  return {text_field("op", "accuracy"),
          integer_field("m", kSize),
          integer_field("n", kSize),
          integer_field("k", row.k),
          text_field("dist", row.distribution),
          text_field("algo", row.algo),
          text_field("ran", row.ran),
          text_field("math", row.algo == kCublasName ? "fp32" : "fp32_emulated"),
          text_field("verdict", verdict_name(row.verdict)),
          number_field("normwise", row.measured ? row.errors.normwise : kNoValue),
          number_field("median", row.measured ? row.errors.median : kNoValue),
          number_field("max", row.measured ? row.errors.largest : kNoValue),
          integer_field("nonfinite", row.measured ? row.errors.nonfinite : 0),
          optional_integer("uncertified", row.certificate.uncertified, row.measured),
          optional_integer("inexact", row.certificate.inexact, row.measured && row.integer),
          optional_integer("moduli", row.moduli, row.emulation_known),
          optional_integer("fp32_elements", row.fp32_elements, row.emulation_known),
          number_field("fp32_fraction", fp32_fraction(row)),
          number_field("normwise_ratio", row.normwise_ratio),
          number_field("median_ratio", row.median_ratio),
          number_field("max_ratio", row.largest_ratio),
          text_field("message", row.message)};
}

// Against the contract: normwise and median error no larger than cuBLAS's, the largest at most twice cuBLAS's,
// no more NaN or Inf than cuBLAS's; and, where the call emulated (moduli above 0), the per-element guarantee: no
// element over the bound, and on integer operands none other than the exact product. A call that ran plain FP32
// is outside the guarantee (FP32's own largest error passes the bound on some inputs: cuBLAS's rows show it), so
// that its counts are reported, not judged. Under pairwise cancellation cuBLAS's summation
// order, which adds each pair before the pairs meet, makes its error unusually small: there the ratios are
// reported, and only the per-element guarantee is judged. Fills the ratios, the verdict and, for a miss, what
// was missed.
void judge(AccuracyRow &row, const ErrorMeasures &cublas, bool judge_ratios) {
  const ErrorMeasures &e = row.errors;
  row.normwise_ratio = ratio(e.normwise, cublas.normwise);
  row.median_ratio = ratio(e.median, cublas.median);
  row.largest_ratio = ratio(e.largest, cublas.largest);
  std::vector<std::string> missed;
  if (judge_ratios) {
    // Written so that a NaN figure misses.
    if (!(e.normwise <= cublas.normwise)) missed.push_back("normwise");
    if (!(e.median <= cublas.median)) missed.push_back("median");
    if (!(e.largest <= 2 * cublas.largest)) missed.push_back("max");
    if (e.nonfinite > cublas.nonfinite) missed.push_back("NaN/Inf");
  }
  const bool emulated = row.emulation_known && row.moduli > 0;
  if (emulated && row.certificate.uncertified > 0) missed.push_back("uncertified elements");
  if (emulated && row.integer && row.certificate.inexact > 0) missed.push_back("inexact integer sums");
  row.verdict = missed.empty() ? Verdict::met : Verdict::missed;
  if (!missed.empty())
    row.message = join(missed, ", ") + " over the contract";
  else if (!judge_ratios)
    row.message = "ratios not judged: pairwise cancellation";
}

uint64_t seed_for(uint64_t base, size_t distribution_index, int64_t k) {
  return base ^ (static_cast<uint64_t>(distribution_index + 1) << 40) ^ static_cast<uint64_t>(k);
}

class AccuracyRun {
 public:
  AccuracyRun(const AccuracyPlan &plan, fg_handle_t handle) : plan_(plan), handle_(handle) {}

  // Every distribution at depth k; appends the rows and prints them as they complete.
  void run_depth(int64_t k) {
    GemmShape shape;
    shape.m = kSize;
    shape.n = kSize;
    shape.k = k;
    DeviceBuffer a(static_cast<size_t>(a_elements(shape)) * sizeof(float));
    DeviceBuffer b(static_cast<size_t>(b_elements(shape)) * sizeof(float));
    DeviceBuffer c(static_cast<size_t>(c_elements(shape)) * sizeof(float));
    DeviceBuffer exact(static_cast<size_t>(c_elements(shape)) * sizeof(double));
    DeviceBuffer absolute(exact.bytes());
    for (Distribution distribution : plan_.distributions) {
      const DistributionInfo &info = distribution_info(distribution);
      const size_t index = static_cast<size_t>(distribution);
      OperandLayout a_layout{true, kSize, k, 1, true, false, k, kSize * k, k};
      OperandLayout b_layout{false, k, kSize, 1, true, false, kSize, k * kSize, k};
      fill_distribution(a.as<float>(), a_layout, distribution, seed_for(kSeedA, index, k));
      fill_distribution(b.as<float>(), b_layout, distribution, seed_for(kSeedB, index, k));
      double_products(shape, a.as<float>(), b.as<float>(), exact.as<double>(), absolute.as<double>());
      ++cases_;

      AccuracyRow cublas = new_row(k, info, kCublasName);
      poison(c.get(), c.bytes());
      cublas_product(shape, a.as<float>(), b.as<float>(), c.as<float>());
      check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize after cublasSgemm");
      measure(cublas, a, b, c, exact, absolute, k);
      cublas.verdict = Verdict::baseline;
      record(cublas);

      for (int algo : plan_.algos) {
        AccuracyRow row = new_row(k, info, fg_sgemm_algo_name(static_cast<fg_sgemm_algo_t>(algo)));
        if (run_fastgemm(row, static_cast<fg_sgemm_algo_t>(algo), shape, a, b, c)) {
          measure(row, a, b, c, exact, absolute, k);
          judge(row, cublas.errors, !info.pairwise_cancellation);
        }
        record(row);
      }
    }
  }

  const std::vector<AccuracyRow> &rows() const { return rows_; }
  size_t cases() const { return cases_; }

 private:
  static void measure(AccuracyRow &row, const DeviceBuffer &a, const DeviceBuffer &b, const DeviceBuffer &c,
                      const DeviceBuffer &exact, const DeviceBuffer &absolute, int64_t k) {
    const int64_t count = kSize * kSize;
    row.errors = measure_errors(c.as<float>(), exact.as<double>(), absolute.as<double>(), count);
    row.certificate = certificate_counts(c.as<float>(), exact.as<double>(), absolute.as<double>(), a.as<float>(),
                                         b.as<float>(), kSize, kSize, k, row.integer);
    row.measured = true;
  }

  // Whether the call succeeded and left its result in c.
  bool run_fastgemm(AccuracyRow &row, fg_sgemm_algo_t algo, const GemmShape &shape, const DeviceBuffer &a,
                    const DeviceBuffer &b, DeviceBuffer &c) {
    check_fastgemm(fg_set_sgemm_algo(handle_, algo), "fg_set_sgemm_algo");
    poison(c.get(), c.bytes());
    const fg_status_t status = fg_sgemm(handle_, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, shape.m, shape.n, shape.k, 1.0f,
                                        a.as<float>(), shape.k, b.as<float>(), shape.n, 0.0f, c.as<float>(), shape.n);
    if (status != FG_STATUS_SUCCESS) {
      row.verdict = status == FG_STATUS_NOT_SUPPORTED && algo != FG_SGEMM_AUTO ? Verdict::declined : Verdict::failed;
      row.message = std::string(fg_status_name(status)) + ": " + fg_last_error_message();
      return false;
    }
    const cudaError_t synchronized = cudaDeviceSynchronize();
    if (synchronized != cudaSuccess) {
      row.verdict = Verdict::failed;
      row.message = std::string("the product failed: ") + cudaGetErrorString(synchronized);
      if (!device_still_usable()) throw BenchError(row.message);
      return false;
    }
    fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
    check_fastgemm(fg_get_last_sgemm_algo(handle_, &ran), "fg_get_last_sgemm_algo");
    row.ran = fg_sgemm_algo_name(ran);
    check_fastgemm(fg_get_last_sgemm_emulation(handle_, &row.moduli, &row.fp32_elements),
                   "fg_get_last_sgemm_emulation");
    row.emulation_known = true;
    return true;
  }

  void record(const AccuracyRow &row) {
    std::printf("%s\n", table_line(row).c_str());
    std::fflush(stdout);
    rows_.push_back(row);
  }

  const AccuracyPlan &plan_;
  fg_handle_t handle_;
  std::vector<AccuracyRow> rows_;
  size_t cases_ = 0;
};

bool write_reports(const Options &options, const RunInfo &run, const std::vector<AccuracyRow> &rows,
                   const std::vector<Field> &summary) {
  std::vector<std::vector<Field>> table;
  for (const AccuracyRow &row : rows) {
    std::vector<Field> fields = row_fields(row);
    const std::vector<Field> shared = run_fields(run);
    fields.insert(fields.end(), shared.begin(), shared.end());
    table.push_back(std::move(fields));
  }
  bool written = true;
  if (!options.csv_path.empty()) {
    std::ofstream csv(options.csv_path);
    write_field_csv(csv, table);
    csv.close();
    written &= static_cast<bool>(csv);
  }
  if (!options.json_path.empty()) {
    std::vector<Field> top = {text_field("tool", "fastgemm-bench"), text_field("op", "accuracy"),
                              text_field("command", options.command_line)};
    top.insert(top.end(), summary.begin(), summary.end());
    std::ofstream json(options.json_path);
    write_field_json(json, top, table);
    json.close();
    written &= static_cast<bool>(json);
  }
  if (!written) std::fprintf(stderr, "fastgemm-bench: writing a report failed\n");
  return written;
}

int run_checked(const AccuracyPlan &plan, const Options &options, fg_handle_t handle) {
  int ordinal = 0;
  check_cuda(cudaGetDevice(&ordinal), "cudaGetDevice");
  RunInfo run;
  run.device = query_device(ordinal);
  run.fastgemm_version = format("%d.%d.%d", fg_version() / 10000, fg_version() / 100 % 100, fg_version() % 100);
  // Opened first, so that a path that cannot be written fails before the run rather than after it.
  for (const std::string &path : {options.csv_path, options.json_path}) {
    if (!path.empty() && !std::ofstream(path)) throw BenchError("cannot open " + path + " for writing");
  }
  check_fastgemm(fg_set_math_mode(handle, FG_MATH_FP32_EMULATED), "fg_set_math_mode");
  const DeviceInfo &device = run.device;
  std::printf("fastgemm-bench accuracy on %s: sm_%d%d, %d SMs; CUDA driver %s, runtime %s; fastgemm %s\n",
              device.name.c_str(), device.cc_major, device.cc_minor, device.sm_count,
              cuda_version_string(device.driver_version).c_str(), cuda_version_string(device.runtime_version).c_str(),
              run.fastgemm_version.c_str());
  std::printf(
      "C = A B, m = n = %lld, row-major. cublas: cublasSgemm, FP32 (TF32 off); fastgemm: a handle in fp32_emulated. "
      "Errors against the exact product R (from cublasDgemm on the inputs widened to double): normwise "
      "||C - R||_F / ||R||_F, median and max of |C - R|_ij / (|A||B|)_ij; (x) is the ratio to cuBLAS's. "
      "uncertified: elements over 2^-24 (1 + sqrt(t)) (|A||B|)_ij, t = min(k, nonzeros of row i of A, of column j "
      "of B) (plus 2 k 2^-53 for R's own rounding); "
      "inexact: on integer operands, elements below 2^24 not bitwise R; moduli and fp32: the emulation's moduli "
      "and the elements it recomputed in FP32 (fg_get_last_sgemm_emulation).\n",
      static_cast<long long>(kSize));
  for (fg_sgemm_algo_t algo : kEmulatingAlgos)
    if (std::string(fg_sgemm_algo_name(algo)) == "unknown")
      std::printf("Algorithm %d is not carried by this build: only AUTO runs the emulated mode.\n", algo);

  AccuracyRun runner(plan, handle);
  for (int64_t k : plan.depths) runner.run_depth(k);

  int fastgemm_rows = 0, met = 0, missed = 0, declined = 0, failed = 0;
  for (const AccuracyRow &row : runner.rows()) {
    if (row.verdict == Verdict::baseline) continue;
    ++fastgemm_rows;
    met += row.verdict == Verdict::met;
    missed += row.verdict == Verdict::missed;
    declined += row.verdict == Verdict::declined;
    failed += row.verdict == Verdict::failed;
  }
  std::printf(
      "Accuracy contract (normwise and median error at most cuBLAS FP32's, max at most twice, no more NaN/Inf; "
      "where emulated, no uncertified element; cancel judged on the elements alone): %zu cases, %d fastgemm rows: %d "
      "met, %d missed, "
      "%d declined, %d failed\n",
      runner.cases(), fastgemm_rows, met, missed, declined, failed);
  const std::vector<Field> summary = {integer_field("cases", static_cast<int64_t>(runner.cases())),
                                      integer_field("fastgemm_rows", fastgemm_rows),
                                      integer_field("met", met),
                                      integer_field("missed", missed),
                                      integer_field("declined", declined),
                                      integer_field("failed", failed)};
  const bool written = write_reports(options, run, runner.rows(), summary);
  return missed == 0 && failed == 0 && written ? 0 : 1;
}

}  // namespace

AccuracyPlan make_accuracy_plan(const Options &options) {
  const std::vector<std::string> allowed = {"--k", "--dist", "--algo", "--device", "--csv", "--json"};
  for (const std::string &name : options.given) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
      throw UsageError(name + " is no accuracy option (" + join(allowed, ", ") + ")");
  }
  AccuracyPlan plan;
  plan.depths = options.depths;
  if (plan.depths.empty()) plan.depths = {256, 1024, 4096, 16384, 65536};
  for (const std::string &name : options.distributions) plan.distributions.push_back(parse_distribution(name));
  if (plan.distributions.empty())
    for (const DistributionInfo &info : distributions()) plan.distributions.push_back(info.id);
  const AlgoFamily &family = sgemm_algos();
  const std::vector<int> carried = carried_algos(family);
  const auto add = [&](int id) {
    if (std::find(plan.algos.begin(), plan.algos.end(), id) == plan.algos.end()) plan.algos.push_back(id);
  };
  if (options.algos.empty()) {
    add(FG_SGEMM_AUTO);
    for (fg_sgemm_algo_t algo : kEmulatingAlgos)
      if (std::find(carried.begin(), carried.end(), algo) != carried.end()) add(algo);
  }
  for (const std::string &name : options.algos) {
    if (name == "all") {
      for (int id : carried) add(id);
      continue;
    }
    add(algo_named(name, family, carried));
  }
  return plan;
}

int run_accuracy(const AccuracyPlan &plan, const Options &options, fg_handle_t handle) {
  try {
    return run_checked(plan, options, handle);
  } catch (const BenchError &error) {
    std::fprintf(stderr, "fastgemm-bench: %s\n", error.what());
    return 1;
  }
}

}  // namespace bench
