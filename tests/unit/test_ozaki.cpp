// SPDX-License-Identifier: Apache-2.0
// FG_SGEMM_OZAKI_INT8's host arithmetic, without a GPU: the residues and the Chinese-remainder reconstruction
// (the kernels' own functions) against 128-bit integer products, the moduli count, and the tiling's bounds.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "sgemm/ozaki_int8.hpp"
#include "sgemm/ozaki_int8_math.hpp"

using namespace fastgemm::detail::ozaki;

namespace {

using Wide = __int128;

double to_double(Wide value) { return static_cast<double>(value); }

// A vector of `length` random values scaled as the kernels scale a line: 2-norm Q, rounded to integers.
std::vector<double> scaled_line(int64_t length, double scale_target, std::mt19937_64 &random, bool heavy) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> line(length);
  double squares = 0;
  for (double &x : line) {
    x = uniform(random) * (heavy ? std::exp2(std::floor(uniform(random) * 30)) : 1.0);
    squares += x * x;
  }
  const double scale = scale_target / std::sqrt(squares);
  for (double &x : line) x = std::rint(x * scale);
  return line;
}

}  // namespace

TEST_CASE("ozaki: residues lie in [-128, 127] and are congruent to the integer", "[ozaki]") {
  const CrtConstants constants = crt_constants(kMaxModuli, 64);
  std::mt19937_64 random(5);
  for (int trial = 0; trial < 20000; ++trial) {
    // Integers up to 2^52 in magnitude, many of them at a multiple of p plus or minus p / 2.
    const int64_t magnitude = static_cast<int64_t>(random() >> (12 + trial % 50));
    const int64_t v = trial % 2 ? -magnitude : magnitude;
    for (int l = 0; l < constants.count; ++l) {
      const int p = kModuli[l];
      for (int64_t x : {v, v - v % p + p / 2, v - v % p - p / 2}) {
        const int r = symmetric_residue(static_cast<double>(x), constants.modulus[l], constants.inverse_modulus[l]);
        INFO("x = " << x << ", p = " << p << ", r = " << r);
        CHECK((r >= -128 && r <= 127));
        CHECK(((x - r) % p + p) % p == 0);
      }
    }
  }
}

TEST_CASE("ozaki: the reconstruction from residue products gives the exact integer product", "[ozaki]") {
  std::mt19937_64 random(7);
  for (int count = kMinModuli; count <= kMaxModuli; ++count) {
    for (int64_t k : {1, 7, 64, 1000}) {
      const CrtConstants constants = crt_constants(count, k);
      REQUIRE(constants.scale_target > 1.0);
      for (int trial = 0; trial < 40; ++trial) {
        const bool heavy = trial % 2 == 1;
        std::vector<double> a = scaled_line(k, constants.scale_target, random, heavy);
        std::vector<double> b = scaled_line(k, constants.scale_target, random, heavy);
        if (trial == 0) b = a;  // the Cauchy-Schwarz bound met: the largest product there is
        if (trial == 2)
          for (double &x : b) x = -x;
        Wide exact = 0;
        for (int64_t l = 0; l < k; ++l) exact += static_cast<Wide>(a[l]) * static_cast<Wide>(b[l]);
        CrtSums sums;
        for (int m = 0; m < count; ++m) {
          int64_t sum = 0;  // what the INT8 product gives: exact INT32 sums of residue products
          for (int64_t l = 0; l < k; ++l)
            sum += symmetric_residue(a[l], constants.modulus[m], constants.inverse_modulus[m]) *
                   symmetric_residue(b[l], constants.modulus[m], constants.inverse_modulus[m]);
          REQUIRE(std::llabs(sum) < (int64_t{1} << 31));
          sums.add(static_cast<double>(sum), constants, m);
        }
        const double got = sums.value(constants);
        INFO("moduli " << count << ", k " << k << ", trial " << trial << ": exact " << to_double(exact) << ", got "
                       << got);
        // Far below the operands' rounding to integers, which moves the product by about Q.
        CHECK(std::fabs(got - to_double(exact)) <=
              std::ldexp(std::fabs(to_double(exact)), -50) + 1e-6 * constants.scale_target);
      }
    }
  }
}

TEST_CASE("ozaki: the moduli count follows the operands' spread, and refuses beyond 13 moduli", "[ozaki]") {
  // Uniform operands (spread about 2^0.7 and concentration 2^0.2 each) take 7 moduli, as in GEMMul8's fast mode.
  CHECK(moduli_needed(1.4, 0.4, 4096) == 7);
  // Lognormal phi = 0.5: 7 as well; exponents spread over +-2^16, where the bulk carries the 1-norm: 8.
  CHECK(moduli_needed(1.7, 1.1, 256) == 7);
  CHECK(moduli_needed(11.5, 4.8, 256) == 8);
  // The same spread with the 1-norm carried by a few values (lognormal phi = 4): the spread decides.
  CHECK(needed_scale_bits(22.0, 8.0) == 24.0 + 22.0 + kSpreadMarginBits);
  CHECK(moduli_needed(30.0, 12.0, 4096) == 0);
  int previous = moduli_needed(0.0, 0.0, 4096);
  for (double bits = 0.5; bits < 40; bits += 0.5) {
    const int count = moduli_needed(bits, bits, 4096);
    const double needed = needed_scale_bits(bits, bits);
    CHECK(needed <= 24 + bits + kSpreadMarginBits);
    if (count == 0) {
      CHECK(needed > scale_target_bits(kMaxModuli, 4096) - 1e-9);
      continue;
    }
    CHECK(count >= previous);
    CHECK(scale_target_bits(count, 4096) >= needed);
    CHECK(scale_target_bits(count - 1, 4096) < needed);
    previous = count;
  }
  CHECK(scale_target_bits(kMaxModuli, kMaxDepth) < 53.0);
}

TEST_CASE("ozaki: tiles cover C within the workspace bounds", "[ozaki]") {
  struct Shape {
    int64_t m, n, k, batch;
  };
  const Shape shapes[] = {
      {1, 1, 1, 1},         {16384, 16384, 16384, 1}, {65536, 65536, 4096, 1},  {9000000, 3, 5, 1},
      {70000, 8, 40000, 1}, {64, 64, 64, 100000},     {300, 100000, 131071, 1}, {1000, 1000, 1000, 3}};
  for (const Shape &s : shapes)
    for (int count = kMinModuli; count <= kMaxModuli; ++count) {
      INFO(s.m << " x " << s.n << " x " << s.k << " x " << s.batch << ", moduli " << count);
      const Tiling t = choose_tiling(s.m, s.n, s.k, s.batch, count);
      CHECK(t.depth % kDepthAlignment == 0);
      CHECK(t.depth >= s.k);
      CHECK((t.rows >= 1 && t.rows <= s.m && t.cols >= 1 && t.cols <= s.n));
      CHECK((t.batches >= 1 && t.batches <= s.batch));
      if (t.batches > 1) CHECK((t.rows == s.m && t.cols == s.n));
      CHECK(t.padded_rows % 4 == 0);
      CHECK(t.padded_cols % 4 == 0);
      CHECK(t.product_bytes <= (size_t{2} << 30));
      CHECK(t.a_residue_bytes <= (size_t{2} << 30));
      CHECK(t.b_residue_bytes <= (size_t{2} << 30));
      CHECK(t.padded_rows < (int64_t{1} << 31));  // the INT8 products' sizes are ints
      CHECK(t.batches * count < (int64_t{1} << 31));
      const WorkspaceLayout layout = workspace_layout(s.m, s.n, s.batch, t);
      CHECK(layout.total <= max_workspace_bytes(s.m, s.n, s.k, s.batch));
      CHECK(layout.products + t.product_bytes <= layout.total);
    }
  // Uniform 16384^3 (7 moduli): B's residues whole, C in four bands of rows.
  const Tiling big = choose_tiling(16384, 16384, 16384, 1, 7);
  CHECK(big.cols == 16384);
  CHECK(big.rows == 4096);
}
