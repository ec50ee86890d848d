// SPDX-License-Identifier: Apache-2.0
// The variables libfastgemm_cublas reads, once per process, and its log.
//   FASTGEMM_MATH             fp32_emulated (or unset): products are served in fastgemm's emulated mode;
//                             fp32: every call goes to cuBLAS unchanged; any other value: the same, and the log
//                             says why
//   FASTGEMM_CUBLAS_MIN_FLOPS products of at least this many flops (2 m n k, each product of a batch alone) are
//                             served; unset: those the emulation pays on (size_refusal)
//   FASTGEMM_LOG=1            one line per call on stderr: served, and what ran, or passed through, and why
//   FASTGEMM_CUBLAS_STATS=1   at exit, each entry point's calls, where they went and their host time
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "interposer.hpp"
#include "lib/tuning/tuning.hpp"
#include "preload/loading.hpp"

namespace fastgemm_cublas {
namespace {

bool flag(const char *name) {
  const char *text = std::getenv(name);
  return text != nullptr && std::strcmp(text, "1") == 0;
}

}  // namespace

const Settings &settings() {
  static const Settings read = [] {
    Settings s;
    s.log = flag("FASTGEMM_LOG");
    s.stats = flag("FASTGEMM_CUBLAS_STATS");
    const char *math = std::getenv("FASTGEMM_MATH");
    if (math != nullptr && std::strcmp(math, "fp32") == 0) {
      s.pass_all = true;
      s.pass_all_reason = "FASTGEMM_MATH=fp32";
    } else if (math != nullptr && *math != '\0' && std::strcmp(math, "fp32_emulated") != 0) {
      s.pass_all = true;
      s.pass_all_reason = "FASTGEMM_MATH names no mode (fp32 or fp32_emulated)";
    }
    const char *text = std::getenv("FASTGEMM_CUBLAS_MIN_FLOPS");
    if (text != nullptr && *text != '\0') {
      if (fastgemm_preload::read_min_flops(text, &s.min_flops)) {
        s.default_rule = false;
      } else if (s.log) {
        std::fprintf(stderr,
                     "fastgemm_cublas: FASTGEMM_CUBLAS_MIN_FLOPS=%s is no number >= 0; the default rule applies\n",
                     text);
      }
    }
    return s;
  }();
  return read;
}

void log_line(const char *format, ...) {
  // One write per line, so that the lines of several threads do not interleave.
  char line[1024];
  const int prefix = std::snprintf(line, sizeof line, "fastgemm_cublas: ");
  va_list arguments;
  va_start(arguments, format);
  std::vsnprintf(line + prefix, sizeof line - prefix - 1, format, arguments);
  va_end(arguments);
  std::string text(line);
  text += '\n';
  std::fputs(text.c_str(), stderr);
}

// The emulation's own rule, AUTO's (lib/tuning/tuning.hpp): every edge at least 1024 and m n k at least 2^34, in one
// product or in all the products of a strided batch together. Below it fastgemm's
// AUTO runs FP32, which cuBLAS does as well, bit for bit as the program expects.
const char *size_refusal(int64_t m, int64_t n, int64_t k, int64_t batch) {
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const Settings &s = settings();
  if (!s.default_rule) return flops >= s.min_flops ? nullptr : "below FASTGEMM_CUBLAS_MIN_FLOPS";
  switch (fastgemm::tuning::emulation_size(m, n, k, batch)) {
    case fastgemm::tuning::EmulationSize::pays: return nullptr;
    case fastgemm::tuning::EmulationSize::small_edge: return "a dimension below 1024, where the emulation does not pay";
    case fastgemm::tuning::EmulationSize::small_work: break;
  }
  return batch > 1 ? "m n k of the batch's products below 2^34 in all, where the emulation does not pay"
                   : "m n k below 2^34, where the emulation does not pay";
}

}  // namespace fastgemm_cublas
