// SPDX-License-Identifier: Apache-2.0
// The emulated mode's plan of every element's need (lib/sgemm/ozaki_int8/kernels.hpp's plan_needs), an internal
// function, on lines whose facts and codes' products are made on the host: every element's need is sound (its count
// certifies it, as element_need decides it from the element's own facts, so it is at least the fewest that do), FP32
// exactly where no count certifies it, 0 exactly where NaN or Inf reaches it; every element written; the summary's
// histogram the needs' own count. The lines mix magnitudes, exponent spreads and zeros so that neighbours' needs
// agree and differ: the kernel answers a group of rows whose codes' products lie in its guess's window at once, and
// the others one by one. Run by test_gpu_internal's main (skipped without a CUDA device).
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gpu_internal/line_facts_reference.hpp"
#include "sgemm/ozaki_int8/kernels.hpp"
#include "sgemm/ozaki_int8/math.hpp"
#include "sgemm/ozaki_int8/plan.hpp"
#include "support/test_support.hpp"

namespace ozaki = fastgemm::detail::ozaki;

namespace {

// The line's codes: floor(|x_l| 2^g), g its code exponent. A line holding NaN or Inf gets the codes of its finite
// elements (the operands' pass writes zeros there): its elements' need is 0 whatever their codes' products.
std::vector<int> codes_of(const std::vector<float> &line, const ozaki::LineFacts &facts) {
  int exponent = facts.code_exponent;
  if ((facts.flags & ozaki::kLineNonFinite) != 0) {
    float largest = 0;
    for (const float x : line)
      if (std::isfinite(x)) largest = std::fmax(largest, std::fabs(x));
    exponent = largest > 0 ? ozaki::code_exponent_of(largest) : 0;
  }
  std::vector<int> codes(line.size(), 0);
  for (size_t l = 0; l < line.size(); ++l)
    if (std::isfinite(line[l]))
      codes[l] = static_cast<int>(std::floor(std::ldexp(std::fabs(static_cast<double>(line[l])), exponent)));
  return codes;
}

// Lines of k elements: uniform in [-1, 1] times 2^scale, some spread over 2^-spread .. 2^spread, some sparse, some
// scaled along k (a row's first element 2^24 times its others, a column's first 2^-24 times its others: the product
// of two such lines is made of terms whose codes are 0, so no count certifies it and it needs FP32), one of zeros,
// and, where asked, two holding NaN or Inf.
std::vector<std::vector<float>> make_lines(int64_t count, int64_t k, std::mt19937 &random, int bad_line, float bad,
                                           bool columns) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::uniform_int_distribution<int> scales(-6, 6), spreads(-12, 12), pick(0, 9);
  std::vector<std::vector<float>> lines(static_cast<size_t>(count), std::vector<float>(static_cast<size_t>(k)));
  int scale = 0;
  for (int64_t i = 0; i < count; ++i) {
    // Runs of lines alike, so that neighbouring elements need the same count, and changes between them.
    if (pick(random) < 2) scale = scales(random);
    const int kind = pick(random);
    for (auto &x : lines[static_cast<size_t>(i)]) {
      x = std::ldexp(uniform(random), scale);
      if (kind == 0) x = std::ldexp(x, spreads(random));  // wide exponents
      if (kind == 1 && pick(random) < 7) x = 0.0f;        // sparse
    }
    if (kind == 2) lines[static_cast<size_t>(i)][0] *= columns ? 0x1p-24f : 0x1p24f;  // scaled along k
    if (i == count / 3) std::fill(lines[static_cast<size_t>(i)].begin(), lines[static_cast<size_t>(i)].end(), 0.0f);
  }
  // Two lines hold it, 5 apart: whatever their place in the groups of four rows, one of them shares its group with
  // finite rows.
  for (int64_t line = bad_line; bad_line >= 0 && line < count && line <= bad_line + 5; line += 5)
    lines[static_cast<size_t>(line)][static_cast<size_t>(k / 2)] = bad;
  return lines;
}

void check_plan(int64_t m, int64_t n, int64_t k, float alpha, float beta, unsigned seed) {
  INFO("m " << m << " n " << n << " k " << k << " alpha " << alpha << " beta " << beta);
  std::mt19937 random(seed);
  const ozaki::CertificateConstants constants = ozaki::certificate_constants(k);
  const auto rows = make_lines(m, k, random, static_cast<int>(m / 2), std::numeric_limits<float>::quiet_NaN(), false);
  const auto cols = make_lines(n, k, random, static_cast<int>(n - 2), std::numeric_limits<float>::infinity(), true);
  std::vector<ozaki::LineFacts> a_facts, b_facts;
  std::vector<std::vector<int>> a_codes, b_codes;
  for (const auto &line : rows)
    a_facts.push_back(fgtest::facts_of(line, constants)), a_codes.push_back(codes_of(line, a_facts.back()));
  for (const auto &line : cols)
    b_facts.push_back(fgtest::facts_of(line, constants)), b_codes.push_back(codes_of(line, b_facts.back()));

  // The codes' products, rows of a pitch wider than n (as the products' tiles pad them), and C0.
  const int64_t pitch = n + 13;
  std::vector<int32_t> products(static_cast<size_t>(m * pitch), -1);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t sum = 0;
      for (int64_t l = 0; l < k; ++l)
        sum += static_cast<int64_t>(a_codes[static_cast<size_t>(i)][static_cast<size_t>(l)]) *
               b_codes[static_cast<size_t>(j)][static_cast<size_t>(l)];
      products[static_cast<size_t>(i * pitch + j)] = static_cast<int32_t>(sum);
    }
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> c(static_cast<size_t>(m * n));
  for (auto &x : c) x = std::ldexp(uniform(random), 4);

  fgtest::DeviceMemory d_products(products.size() * sizeof(int32_t));
  fgtest::DeviceMemory d_a(a_facts.size() * sizeof(ozaki::LineFacts)), d_b(b_facts.size() * sizeof(ozaki::LineFacts));
  fgtest::DeviceMemory d_c(c.size() * sizeof(float));
  fgtest::DeviceMemory d_needs(static_cast<size_t>(m * n));
  fgtest::DeviceMemory d_summary(sizeof(ozaki::ScanSummary));
  REQUIRE_CUDA_OK(
      cudaMemcpy(d_products.as<int32_t>(), products.data(), products.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  REQUIRE_CUDA_OK(cudaMemcpy(d_a.as<ozaki::LineFacts>(), a_facts.data(), a_facts.size() * sizeof(ozaki::LineFacts),
                             cudaMemcpyHostToDevice));
  REQUIRE_CUDA_OK(cudaMemcpy(d_b.as<ozaki::LineFacts>(), b_facts.data(), b_facts.size() * sizeof(ozaki::LineFacts),
                             cudaMemcpyHostToDevice));
  REQUIRE_CUDA_OK(cudaMemcpy(d_c.as<float>(), c.data(), c.size() * sizeof(float), cudaMemcpyHostToDevice));
  REQUIRE_CUDA_OK(
      cudaMemset(d_needs.as<uint8_t>(), 0xee, static_cast<size_t>(m * n)));  // no need is 0xee: unwritten shows
  REQUIRE_CUDA_OK(cudaMemset(d_summary.as<ozaki::ScanSummary>(), 0, sizeof(ozaki::ScanSummary)));

  fastgemm::detail::GemmProblem p;
  p.m = m, p.n = n, p.k = k, p.alpha = alpha, p.beta = beta;
  p.c = d_c.as<float>(), p.ldc = n, p.stride_c = m * n;
  p.math = FG_MATH_FP32_EMULATED;
  ozaki::ProductTile tile;
  tile.rows = m, tile.padded_rows = m, tile.cols = n, tile.padded_cols = pitch;
  int device = 0, processors = 0;
  REQUIRE_CUDA_OK(cudaGetDevice(&device));
  REQUIRE_CUDA_OK(cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device));
  const auto status =
      ozaki::plan_needs(p, tile, d_products.as<int32_t>(), d_a.as<ozaki::LineFacts>(), d_b.as<ozaki::LineFacts>(),
                        constants, d_needs.as<uint8_t>(), d_summary.as<ozaki::ScanSummary>(), processors, nullptr);
  REQUIRE(status.ok());
  REQUIRE_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint8_t> needs(static_cast<size_t>(m * n));
  ozaki::ScanSummary summary{};
  REQUIRE_CUDA_OK(cudaMemcpy(needs.data(), d_needs.as<uint8_t>(), needs.size(), cudaMemcpyDeviceToHost));
  REQUIRE_CUDA_OK(cudaMemcpy(&summary, d_summary.as<ozaki::ScanSummary>(), sizeof summary, cudaMemcpyDeviceToHost));

  std::vector<unsigned long long> histogram(ozaki::kNeedsFp32 + 1, 0);
  int64_t wrong_nonfinite = 0, unsound = 0, fp32_wrong = 0, out_of_range = 0, certified = 0, fp32 = 0;
  std::vector<int64_t> by_need(ozaki::kNeedsFp32 + 1, 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const int need = needs[static_cast<size_t>(i * n + j)];
      const ozaki::LineFacts &x = a_facts[static_cast<size_t>(i)], &y = b_facts[static_cast<size_t>(j)];
      if ((x.flags & ozaki::kLineNonFinite) != 0 || (y.flags & ozaki::kLineNonFinite) != 0) {
        wrong_nonfinite += need != 0;
        continue;
      }
      if (need < ozaki::kMinModuli || (need > ozaki::kMaxModuli && need != ozaki::kNeedsFp32)) {
        ++out_of_range;
        continue;
      }
      ++histogram[static_cast<size_t>(need)];
      ++by_need[static_cast<size_t>(need)];
      const int32_t code = products[static_cast<size_t>(i * pitch + j)];
      const float c0 = beta != 0.0f ? c[static_cast<size_t>(i * n + j)] : 0.0f;
      // The fewest count that certifies the element, from its own facts (element_need from the smallest count).
      const int fewest = ozaki::element_need(x, y, code, alpha, beta, c0, constants, ozaki::kMinModuli);
      if (need == ozaki::kNeedsFp32) {
        ++fp32;
        fp32_wrong += fewest != ozaki::kNeedsFp32;
        continue;
      }
      ++certified;
      if (fewest == ozaki::kNeedsFp32 || need < fewest) {
        ++unsound;
        continue;
      }
      // And directly: the count certifies the element before any product (unless its product is 0 by its codes).
      const double lower = ozaki::exact_double(code) * ozaki::power_of_two(-(x.code_exponent + y.code_exponent));
      const double beta_c = beta == 0.0f ? 0.0 : std::fabs(static_cast<double>(beta) * c0);
      const auto allowance =
          ozaki::element_allowance(x, y, lower, std::fabs(static_cast<double>(alpha)), beta_c, constants);
      if (fewest != ozaki::kMinModuli || code != 0)
        unsound += !ozaki::certified_before(x, y, allowance, need, constants);
    }
  INFO("needs: certified " << certified << ", FP32 " << fp32);
  CHECK(wrong_nonfinite == 0);
  CHECK(out_of_range == 0);  // among them every element left unwritten (0xee)
  CHECK(unsound == 0);
  CHECK(fp32_wrong == 0);
  for (int need = 0; need <= ozaki::kNeedsFp32; ++need) {
    INFO("need " << need);
    CHECK(summary.needs[need] == histogram[static_cast<size_t>(need)]);
  }
  // The lines make both kinds, and several counts among the certified.
  CHECK(certified > 0);
  CHECK(fp32 > 0);
  int counts_seen = 0;
  for (int need = ozaki::kMinModuli; need <= ozaki::kMaxModuli; ++need)
    counts_seen += by_need[static_cast<size_t>(need)] > 0;
  CHECK(counts_seen >= 3);
}

}  // namespace

TEST_CASE("emulation's plan: every need sound, FP32 where no count certifies, 0 where NaN or Inf reach", "[plan]") {
  // Rows in whole and partial chunks and groups of four; columns past a block's width; beta reads C0.
  check_plan(700, 333, 300, 1.5f, 0.0f, 1u);
  check_plan(517, 290, 1000, -0.75f, 2.0f, 2u);
  check_plan(1030, 70, 64, 1.0f, 0.0f, 3u);
}
