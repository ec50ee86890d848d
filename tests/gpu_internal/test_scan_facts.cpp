// SPDX-License-Identifier: Apache-2.0
// The emulated mode's scan (lib/sgemm/ozaki_int8/kernels.hpp's scan_operands), an internal function, on the lines of
// two operands in one launch: contiguous lines (one warp a line, its lanes finding the scales of a count each) at
// every alignment, and strided lines (tiles of 8, one warp finding their 96 scales), over two products, past the
// last whole tile. Each line's facts against the host's (facts_of: its sums in the line's order, so the norms within
// rounding of each other, the root of the nonzeros' count within 2^-18, everything else exact), and every count's scale
// and rounding bit exactly as the line's own facts give them (count_scale on the host): a scale written for the wrong
// count or line shows. Lines mix uniform fractions, small integers (scales that do not round at some counts and do at
// others), wide exponents, zeros, a line of zeros, NaN and Inf; the lines holding NaN or Inf are listed once each. Run
// by test_gpu_internal's main (skipped without a CUDA device).
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gpu_internal/line_facts_reference.hpp"
#include "sgemm/ozaki_int8/kernels.hpp"
#include "sgemm/ozaki_int8/math.hpp"
#include "support/test_support.hpp"

namespace ozaki = fastgemm::detail::ozaki;

namespace {

// Line i's elements: its kind by i, its values from `random`.
std::vector<float> make_line(int64_t i, int64_t k, std::mt19937_64 &random) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(-7, 7), exponent(-30, 30);
  std::vector<float> line(static_cast<size_t>(k));
  for (int64_t l = 0; l < k; ++l) {
    float &x = line[static_cast<size_t>(l)];
    switch (i % 7) {
      case 0: x = uniform(random); break;
      case 1: x = static_cast<float>(small(random)); break;              // integers, zeros among them
      case 2: x = std::ldexp(uniform(random), exponent(random)); break;  // wide exponents
      case 3: x = l % 5 == 0 ? 0.0f : std::ldexp(uniform(random), 12); break;
      case 4: x = 0.0f; break;                                       // a line of zeros
      case 5: x = static_cast<float>(small(random)) * 0.25f; break;  // quarters
      default: x = uniform(random) * 1e-3f; break;
    }
  }
  if (i % 11 == 6) line[static_cast<size_t>(k / 3)] = std::numeric_limits<float>::quiet_NaN();
  if (i % 13 == 9) line[static_cast<size_t>(k - 1)] = -std::numeric_limits<float>::infinity();
  return line;
}

}  // namespace

TEST_CASE("emulation's scan: each line's facts and every count's scale, contiguous and strided lines", "[scan]") {
  for (const int64_t k : {int64_t{1000}, int64_t{1024}}) {
    INFO("k = " << k);
    constexpr int64_t kBatch = 2, kRows = 37, kCols = 45;    // 45 columns: the last tile of 8 is cut
    const int64_t row_pitch = k + 3, col_pitch = kCols + 2;  // rows at every alignment; strided columns
    const int64_t a_stride = kRows * row_pitch + 5, b_stride = k * col_pitch + 7;
    const ozaki::CertificateConstants constants = ozaki::certificate_constants(k);
    std::mt19937_64 random(static_cast<uint64_t>(4100 + k));
    std::vector<float> a(static_cast<size_t>(kBatch * a_stride), 0.0f), b(static_cast<size_t>(kBatch * b_stride), 0.0f);
    std::vector<std::vector<float>> a_lines, b_lines;  // [batch * count + line]
    for (int64_t t = 0; t < kBatch; ++t)
      for (int64_t i = 0; i < kRows; ++i) {
        a_lines.push_back(make_line(t * kRows + i, k, random));
        for (int64_t l = 0; l < k; ++l)
          a[static_cast<size_t>(t * a_stride + i * row_pitch + l)] = a_lines.back()[static_cast<size_t>(l)];
      }
    for (int64_t t = 0; t < kBatch; ++t)
      for (int64_t j = 0; j < kCols; ++j) {
        b_lines.push_back(make_line(t * kCols + j + 3, k, random));
        for (int64_t l = 0; l < k; ++l)
          b[static_cast<size_t>(t * b_stride + l * col_pitch + j)] = b_lines.back()[static_cast<size_t>(l)];
      }
    fgtest::DeviceMemory d_a(a.size() * sizeof(float)), d_b(b.size() * sizeof(float));
    fgtest::DeviceMemory d_a_facts(a_lines.size() * sizeof(ozaki::LineFacts));
    fgtest::DeviceMemory d_b_facts(b_lines.size() * sizeof(ozaki::LineFacts));
    fgtest::DeviceMemory d_a_flagged(a_lines.size() * sizeof(int64_t)), d_b_flagged(b_lines.size() * sizeof(int64_t));
    fgtest::DeviceMemory d_summary(sizeof(ozaki::ScanSummary));
    REQUIRE_CUDA_OK(cudaMemcpy(d_a.as<float>(), a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
    REQUIRE_CUDA_OK(cudaMemcpy(d_b.as<float>(), b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
    // Facts poisoned (0xff: NaN norms, flags -1) so that an unwritten word shows.
    REQUIRE_CUDA_OK(cudaMemset(d_a_facts.as<ozaki::LineFacts>(), 0xff, a_lines.size() * sizeof(ozaki::LineFacts)));
    REQUIRE_CUDA_OK(cudaMemset(d_b_facts.as<ozaki::LineFacts>(), 0xff, b_lines.size() * sizeof(ozaki::LineFacts)));
    REQUIRE_CUDA_OK(cudaMemset(d_summary.as<ozaki::ScanSummary>(), 0, sizeof(ozaki::ScanSummary)));

    ozaki::Lines rows;  // contiguous: element l of row i at i * row_pitch + l
    rows.data = d_a.as<float>(), rows.count = kRows, rows.length = k;
    rows.line_stride = row_pitch, rows.element_stride = 1, rows.batch_stride = a_stride;
    ozaki::Lines cols;  // strided: element l of column j at l * col_pitch + j
    cols.data = d_b.as<float>(), cols.count = kCols, cols.length = k;
    cols.line_stride = 1, cols.element_stride = col_pitch, cols.batch_stride = b_stride;
    const auto status = ozaki::scan_operands(rows, cols, kBatch, constants, d_a_facts.as<ozaki::LineFacts>(),
                                             d_a_flagged.as<int64_t>(), d_b_facts.as<ozaki::LineFacts>(),
                                             d_b_flagged.as<int64_t>(), d_summary.as<ozaki::ScanSummary>(), nullptr);
    REQUIRE(status.ok());
    REQUIRE_CUDA_OK(cudaDeviceSynchronize());
    ozaki::ScanSummary summary{};
    REQUIRE_CUDA_OK(cudaMemcpy(&summary, d_summary.as<ozaki::ScanSummary>(), sizeof summary, cudaMemcpyDeviceToHost));

    const auto check = [&](const std::vector<std::vector<float>> &lines, const fgtest::DeviceMemory &d_facts,
                           const fgtest::DeviceMemory &d_flagged, unsigned long long flagged_count) {
      std::vector<ozaki::LineFacts> facts(lines.size());
      REQUIRE_CUDA_OK(cudaMemcpy(facts.data(), d_facts.as<ozaki::LineFacts>(), facts.size() * sizeof(ozaki::LineFacts),
                                 cudaMemcpyDeviceToHost));
      std::vector<int64_t> expected_flagged;
      int64_t rounding_lines = 0, plain_lines = 0;
      for (size_t id = 0; id < lines.size(); ++id) {
        INFO("line " << id);
        const ozaki::LineFacts host = fgtest::facts_of(lines[id], constants), &got = facts[id];
        CHECK(got.flags == host.flags);
        if ((host.flags & ozaki::kLineNonFinite) != 0) expected_flagged.push_back(static_cast<int64_t>(id));
        CHECK(got.nonzeros == host.nonzeros);
        CHECK(got.code_exponent == host.code_exponent);
        CHECK(got.integral_exponent == host.integral_exponent);
        const auto near = [](double x, double y) { return x == y || std::fabs(x - y) <= 1e-12 * std::fabs(y); };
        // The device's root_below is rsqrtf's, the host's a double square root's: both within 2^-19 below sqrt(t).
        CHECK(std::fabs(got.terms_root - host.terms_root) <= 0x1p-18f * host.terms_root);
        CHECK(near(got.norm1, host.norm1));
        CHECK(near(got.norm2, host.norm2));
        CHECK(near(got.inverse_norm2, host.inverse_norm2));
        // Every count's scale as the line's own facts give it, and nothing at the counts below kMinModuli.
        ozaki::LineFacts own = got;
        own.rounding = 0;
        for (int count = 0; count <= ozaki::kMaxModuli; ++count) own.inverse_scale[count] = 0.0;
        for (int count = ozaki::kMinModuli; count <= ozaki::kMaxModuli; ++count)
          ozaki::add_line_scale(own, count, ozaki::count_scale(own, constants.scale_target[count]));
        for (int count = 0; count <= ozaki::kMaxModuli; ++count) {
          INFO("count " << count);
          CHECK(got.inverse_scale[count] == own.inverse_scale[count]);
        }
        CHECK(got.rounding == own.rounding);
        rounding_lines += own.rounding != 0;
        plain_lines += (own.flags & ozaki::kLineNonFinite) == 0 && own.nonzeros > 0 &&
                       own.rounding != (((1 << (ozaki::kMaxModuli + 1)) - 1) & ~((1 << ozaki::kMinModuli) - 1));
      }
      // The lines exercise both: counts whose scale rounds and counts whose scale does not.
      CHECK(rounding_lines > 0);
      CHECK(plain_lines > 0);
      REQUIRE(flagged_count == expected_flagged.size());
      std::vector<int64_t> flagged(expected_flagged.size());
      REQUIRE_CUDA_OK(cudaMemcpy(flagged.data(), d_flagged.as<int64_t>(), flagged.size() * sizeof(int64_t),
                                 cudaMemcpyDeviceToHost));
      std::sort(flagged.begin(), flagged.end());
      CHECK(flagged == expected_flagged);
    };
    {
      INFO("contiguous lines (op(A)'s rows)");
      check(a_lines, d_a_facts, d_a_flagged, summary.flagged_lines[0]);
    }
    {
      INFO("strided lines (op(B)'s columns)");
      check(b_lines, d_b_facts, d_b_flagged, summary.flagged_lines[1]);
    }
  }
}
