// SPDX-License-Identifier: Apache-2.0
// fg_sgemm_host in the emulated mode: its tiles run the emulation (tiles of 4096, each one step over all of k,
// lib/host/plan.hpp), every element within the per-element guarantee against a double reference on whole rows and
// columns that cross the tiles' edges, C poisoned before the call.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "gpu/emulated_support.hpp"

using namespace fgtest;

namespace {

// The tile (rows x columns x depth) of the first call that FASTGEMM_HOST_PROFILE wrote to `path`, or "".
std::string profiled_tile(const std::string &path) {
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    const size_t at = line.find(" tile=");
    if (line.rfind("# ", 0) == 0 && at != std::string::npos)
      return line.substr(at + 6, line.find(' ', at + 6) - at - 6);
  }
  return "";
}

// The listed rows of C as a product of their own: those rows of A times B.
Operands rows_of(const Operands &o, const std::vector<int64_t> &rows) {
  Operands part{static_cast<int64_t>(rows.size()), o.n, o.k, {}, o.b};
  for (int64_t i : rows) part.a.insert(part.a.end(), o.a.begin() + i * o.k, o.a.begin() + (i + 1) * o.k);
  return part;
}

// The listed columns of C as a product of their own: A times those columns of B.
Operands columns_of(const Operands &o, const std::vector<int64_t> &cols) {
  Operands part{o.m, static_cast<int64_t>(cols.size()), o.k, o.a, {}};
  for (int64_t l = 0; l < o.k; ++l)
    for (int64_t j : cols) part.b.push_back(o.b[l * o.n + j]);
  return part;
}

}  // namespace

TEST_CASE("host: the emulated mode's tiles keep every element within the guarantee", "[host][host_emulated]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
  // 2 x 3 tiles of 4096 (the last 1536 wide), each one step over all of k: every step large enough for the
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
  CHECK(profiled_tile(file.path()) == "4096x4096x6000");
  int64_t unwritten = 0;
  for (float x : c) unwritten += std::isnan(x) ? 1 : 0;
  CHECK(unwritten == 0);
  // Rows and columns on both sides of the tiles' edges, and the last ones, against their double references, held to
  // the header's guarantee (each element one emulated call over all of k).
  const std::vector<int64_t> rows = {0, 4095, 4096, m - 1}, cols = {0, 4095, 4096, 8191, 8192, n - 1};
  std::vector<float> c_rows, c_cols;
  for (int64_t i : rows) c_rows.insert(c_rows.end(), c.begin() + i * n, c.begin() + (i + 1) * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j : cols) c_cols.push_back(c[i * n + j]);
  CHECK(guarantee_of(c_rows, reference_of(rows_of(o, rows)), k).beyond == 0);
  CHECK(guarantee_of(c_cols, reference_of(columns_of(o, cols)), k).beyond == 0);
}
