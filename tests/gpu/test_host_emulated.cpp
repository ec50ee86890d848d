// SPDX-License-Identifier: Apache-2.0
// fg_sgemm_host in the emulated mode: its tiles run the emulation (steps of 4096 on every side, lib/host/plan.hpp),
// every element within the per-element guarantee against a double reference on whole rows and columns that cross the
// tiles' edges, C poisoned before the call. A large product: left out of the sanitizers' runs (scripts/gpu-check.sh).
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "gpu/emulated_support.hpp"

using namespace fgtest;

namespace {

// The tile edge (tile_m) of the first call that FASTGEMM_HOST_PROFILE wrote to `path`, or 0.
int64_t profiled_tile_edge(const std::string &path) {
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    const size_t at = line.find(" tile=");
    if (line.rfind("# ", 0) == 0 && at != std::string::npos) return std::stoll(line.substr(at + 6));
  }
  return 0;
}

// Elements of the listed rows and columns of C beyond |C - R| <= 2^-24 (1 + sqrt(k)) |A||B|, the double reference's own
// error (below k 2^-53 |A||B|) allowed on top; C, A and B row-major. Non-finite elements count as beyond.
int64_t beyond_guarantee(const Operands &o, const std::vector<float> &c, const std::vector<int64_t> &rows,
                         const std::vector<int64_t> &cols) {
  const double unit = std::ldexp(1.0, -24) * (1.0 + std::sqrt(static_cast<double>(o.k))) +
                      static_cast<double>(o.k) * std::ldexp(1.0, -53);
  int64_t beyond = 0;
  const auto judge = [&](int64_t i, int64_t j, double exact, double magnitude) {
    const double got = c[i * o.n + j];
    if (!std::isfinite(got) || !(std::fabs(got - exact) <= unit * magnitude)) ++beyond;
  };
  std::vector<double> sum(o.n), magnitude(o.n);
  for (int64_t i : rows) {
    std::fill(sum.begin(), sum.end(), 0.0);
    std::fill(magnitude.begin(), magnitude.end(), 0.0);
    for (int64_t l = 0; l < o.k; ++l) {
      const double a = o.a[i * o.k + l];
      const float *b = &o.b[l * o.n];
      for (int64_t j = 0; j < o.n; ++j) {
        sum[j] += a * b[j];
        magnitude[j] += std::fabs(a * b[j]);
      }
    }
    for (int64_t j = 0; j < o.n; ++j) judge(i, j, sum[j], magnitude[j]);
  }
  std::vector<double> column(o.k);
  for (int64_t j : cols) {
    for (int64_t l = 0; l < o.k; ++l) column[l] = o.b[l * o.n + j];
    for (int64_t i = 0; i < o.m; ++i) {
      const float *a = &o.a[i * o.k];
      double s = 0, s_abs = 0;
      for (int64_t l = 0; l < o.k; ++l) {
        s += a[l] * column[l];
        s_abs += std::fabs(a[l] * column[l]);
      }
      judge(i, j, s, s_abs);
    }
  }
  return beyond;
}

}  // namespace

TEST_CASE("host: the emulated mode's tiles keep every element within the guarantee", "[host][host_emulated]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
  // 2 x 3 tiles of 4096 (the last 1536 wide) and two chunks of k (3072 and 2928): every step large enough for the
  // emulation. Rows of A and columns of B scaled by 2^-20 .. 2^20.
  const int64_t m = 8192, n = 9728, k = 6000;
  const Operands o = make_operands(Inputs{Distribution::scaled_lines}, m, n, k, 901);
  std::vector<float> c(m * n, std::numeric_limits<float>::quiet_NaN());
  const TemporaryFile file("fastgemm-host-emulated");
  REQUIRE(!file.path().empty());
  {
    const ScopedEnvironment profile("FASTGEMM_HOST_PROFILE", file.path().c_str());
    REQUIRE_FG_OK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, o.a.data(), k, o.b.data(),
                                n, 0.0f, c.data(), n));
  }
  // The steps took the emulation, in tiles of the size the plan gives.
  CHECK(last_algo(handle.get()) == FG_SGEMM_OZAKI_INT8);
  CHECK(profiled_tile_edge(file.path()) == 4096);
  int64_t unwritten = 0;
  for (float x : c) unwritten += std::isnan(x) ? 1 : 0;
  CHECK(unwritten == 0);
  // Rows and columns on both sides of the tiles' edges, and the last ones.
  CHECK(beyond_guarantee(o, c, {0, 4095, 4096, m - 1}, {0, 4095, 4096, 8191, 8192, n - 1}) == 0);
}
