// SPDX-License-Identifier: Apache-2.0
// fg_sgemm_host in the emulated mode: its tiles run the emulation (tiles of 4096, each one step over all of k,
// lib/host/plan.hpp), every element within the per-element guarantee against a double reference on whole rows and
// columns that cross the tiles' edges, C poisoned before the call.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
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

TEST_CASE("host: AUTO's emulation runs only on steps over all of k; a grid that cuts k runs FP32",
          "[host][host_emulated]") {
  // FASTGEMM_HOST_TILE=4096 cuts k = 6000 in two chunks, each step large enough for the emulation: its certificate
  // would hold only a chunk's elements, so the steps run FP32, bit for bit the FP32 mode's product on that grid.
  const int64_t m = 8192, n = 4096, k = 6000;
  const Operands o = make_operands(Inputs{Distribution::uniform}, m, n, k, 903);
  const ScopedEnvironment tile("FASTGEMM_HOST_TILE", "4096");
  std::vector<float> emulated(m * n, std::numeric_limits<float>::quiet_NaN()), fp32 = emulated;
  Handle handle;
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
  REQUIRE_FG_OK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, o.a.data(), k, o.b.data(), n,
                              0.0f, emulated.data(), n));
  CHECK(last_algo(handle.get()) != FG_SGEMM_OZAKI_INT8);
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32));
  REQUIRE_FG_OK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, o.a.data(), k, o.b.data(), n,
                              0.0f, fp32.data(), n));
  int64_t differing = 0;
  for (size_t i = 0; i < fp32.size(); ++i) differing += std::memcmp(&emulated[i], &fp32[i], sizeof(float)) != 0 ? 1 : 0;
  CHECK(differing == 0);
}

TEST_CASE(
    "host: a forced emulation computes in FP32 the tiles whose operands it declines, and refuses up front "
    "what fg_sgemm refuses before looking",
    "[host][host_emulated]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_OZAKI_INT8));
  // Tiles of 2048 over all of k; every row of A from 4096 on holds one +Inf, so the emulation declines the tiles of
  // those rows (each of its rows flagged: too many for its fix-up) and runs the others. The Inf rows of C are then
  // FP32's +-Inf (the sign of B's element in that column), never the poison.
  const int64_t m = 8192, n = 4096, k = 2048;
  Operands o = make_operands(Inputs{Distribution::uniform}, m, n, k, 905);
  const auto inf_column = [k](int64_t i) { return (i * 37) % k; };
  for (int64_t i = 4096; i < m; ++i) o.a[i * k + inf_column(i)] = std::numeric_limits<float>::infinity();
  std::vector<float> c(m * n, std::numeric_limits<float>::quiet_NaN());
  REQUIRE_FG_OK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, o.a.data(), k, o.b.data(), n,
                              0.0f, c.data(), n));
  int64_t wrong_inf = 0;
  for (int64_t i = 4096; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const float b = o.b[inf_column(i) * n + j];
      const float expected = b > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
      wrong_inf += b != 0 && c[i * n + j] != expected ? 1 : 0;
    }
  CHECK(wrong_inf == 0);
  const std::vector<int64_t> rows = {0, 2047, 2048, 4095};
  Operands finite = o;
  finite.a.resize(4096 * k);
  finite.m = 4096;
  std::vector<float> c_rows;
  for (int64_t i : rows) c_rows.insert(c_rows.end(), c.begin() + i * n, c.begin() + (i + 1) * n);
  CHECK(guarantee_of(c_rows, reference_of(rows_of(finite, rows)), k).beyond == 0);

  // Refused before any tile runs, C untouched: k past the emulation's depth, and alpha not finite.
  const int64_t deep = 131072;
  const Operands d = make_operands(Inputs{Distribution::uniform}, 64, 64, deep, 907);
  std::vector<float> untouched(64 * 64, std::numeric_limits<float>::quiet_NaN());
  CHECK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 64, 64, deep, 1.0f, d.a.data(), deep, d.b.data(),
                      64, 0.0f, untouched.data(), 64) == FG_STATUS_NOT_SUPPORTED);
  CHECK(std::string(fg_last_error_message()).find("131071") != std::string::npos);
  const Operands s = make_operands(Inputs{Distribution::uniform}, 64, 64, 2048, 909);
  CHECK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 64, 64, 2048,
                      std::numeric_limits<float>::infinity(), s.a.data(), 2048, s.b.data(), 64, 0.0f, untouched.data(),
                      64) == FG_STATUS_NOT_SUPPORTED);
  int64_t written = 0;
  for (float x : untouched) written += std::isnan(x) ? 0 : 1;
  CHECK(written == 0);
}
