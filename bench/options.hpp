// SPDX-License-Identifier: Apache-2.0
// The command line: parsed into plain values here; what they mean for sgemm or rowmean is decided by
// the op that reads them.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "measure.hpp"

namespace bench {

// A command line the bench cannot run; exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string command;             // "sgemm", "rowmean", "overhead" or "accuracy"; empty with --help or --list
  std::vector<std::string> given;  // the options on the command line, by name ("--k"), each once
  bool help = false;
  bool help_all = false;  // --help-all: the whole text, not the short one
  bool list = false;
  std::vector<std::string> algos;   // names as given, each may be "all"; empty: auto
  std::vector<int64_t> sizes;       // --sizes
  std::vector<std::string> shapes;  // --shape entries, unparsed
  bool suite = false;
  bool profile = false;    // overhead --profile
  bool stages = false;     // sgemm --stages: each emulated row's time by stage, from a trace of one more call
  bool host_time = false;  // sgemm --host-time: each row's host time per call, over calls back to back
  // sgemm --host / --pinned: operands in pageable / pinned host memory, through fg_sgemm_host; empty:
  // device memory, through fg_sgemm.
  std::string host_memory;
  std::vector<int> host_devices;     // sgemm --devices: the devices fg_sgemm_host spreads a product over
  std::vector<std::string> trans;    // --trans entries
  std::vector<std::string> layouts;  // --layout entries
  std::optional<int64_t> batch;
  std::optional<std::string> dtype;
  std::optional<fg_math_mode_t> math;      // sgemm --math
  std::vector<std::string> distributions;  // --dist names, unparsed
  std::vector<int64_t> depths;             // accuracy --k
  TimingPolicy timing;
  bool cold = true;  // --mode: the timing modes to run, cold (after an L2 flush) and hot (back to back)
  bool hot = false;
  int device = 0;
  std::string csv_path;
  std::string json_path;
  std::string command_line;  // argv joined, for the reports
};

// Throws UsageError.
Options parse_options(int argc, char **argv);

const std::string &usage_text();        // --help-all
const std::string &short_usage_text();  // --help: under 60 lines

// "4096" -> 4096; anything but a whole number >= 1 is a UsageError naming what.
int64_t parse_positive(const std::string &text, const std::string &what);

// "4096x1024x512" -> {4096, 1024, 512}; what names the expected form in the error, e.g. "MxNxK".
std::vector<int64_t> parse_dimensions(const std::string &text, size_t count, const std::string &what);

}  // namespace bench
