// SPDX-License-Identifier: Apache-2.0
// FG_SGEMM_OZAKI_INT8's host arithmetic, without a GPU: the residues and the Chinese-remainder reconstruction
// (the kernels' own functions) against 128-bit integer products, the certificate against exact arithmetic on
// random and adversarial operands, the choice of the moduli count, and the tiling's bounds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "sgemm/ozaki_int8/choice.hpp"
#include "sgemm/ozaki_int8/math.hpp"
#include "sgemm/ozaki_int8/plan.hpp"
#include "sgemm/ozaki_int8/wgmma_products.hpp"

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

TEST_CASE("ozaki: residues in integer and in FP32 arithmetic are the representatives in [-p / 2, p / 2)", "[ozaki]") {
  const CrtConstants constants = crt_constants(kMaxModuli, 64);
  std::mt19937_64 random(11);
  const auto expected = [](int64_t x, int64_t p) {
    const int64_t r = (x % p + p) % p;
    return static_cast<int>(2 * r >= p ? r - p : r);
  };
  for (int l = 0; l < constants.count; ++l) {
    const int64_t p = kModuli[l];
    REQUIRE(constants.integer_modulus[l] == static_cast<uint32_t>(p));
    const auto check = [&](int64_t x, bool narrow) {
      const int got = narrow ? integer_residue<true>(x, constants.integer_modulus[l], constants.reciprocal[l],
                                                     constants.power24_residue[l])
                             : integer_residue<false>(x, constants.integer_modulus[l], constants.reciprocal[l],
                                                      constants.power24_residue[l]);
      INFO("x = " << x << ", p = " << p << (narrow ? " (narrow)" : " (wide)"));
      REQUIRE(got == expected(x, p));
      if (narrow) {
        // The FP32 arithmetic of the narrow residues (the first modulus, 256, takes the low byte): the same bytes.
        const auto v = static_cast<int32_t>(x);
        const uint32_t bits = l == 0 ? static_cast<uint32_t>(v)
                                     : float_residue_bits(split_integer(v), constants.float_modulus[l],
                                                          constants.float_inverse[l], constants.split_residue[l]);
        REQUIRE(static_cast<int>(static_cast<int8_t>(bits & 0xffu)) == expected(x, p));
      }
    };
    const int64_t narrow_edge = (int64_t{1} << 28) - 1, wide_edge = (int64_t{1} << 52) - 1;
    for (int64_t edge : {int64_t{0}, int64_t{1}, p / 2, p / 2 + 1, p - 1, p, narrow_edge, narrow_edge - p / 2}) {
      check(edge, true), check(-edge, true), check(edge, false), check(-edge, false);
    }
    for (int64_t edge : {wide_edge, wide_edge - p / 2, (int64_t{1} << 51) + p / 2, (int64_t{1} << 24) * p - 1})
      check(edge, false), check(-edge, false);
    // Every narrow value whose split part h c + l reaches the most in magnitude (h = +-2^16 - 1, c = 2^12 mod p).
    for (int64_t low = 0; low < 4096; ++low) {
      check((int64_t{1} << 28) - 4096 + low, true), check(-(int64_t{1} << 28) + low, true);
    }
    for (int trial = 0; trial < 20000; ++trial) {
      const int64_t narrow = static_cast<int64_t>(random() >> (36 + trial % 28));  // below 2^28
      const int64_t wide = static_cast<int64_t>(random() >> (12 + trial % 52));    // below 2^52
      const int64_t sign = trial % 2 ? -1 : 1;
      // Near multiples of p, and halfway between them, too.
      check(sign * narrow, true), check(sign * (narrow - narrow % p + p / 2), true);
      check(sign * wide, false), check(sign * (wide - wide % p + p / 2), false);
    }
  }
}

TEST_CASE("ozaki: the own product's residue bytes of INT32 sums are the bytes of s - p rint(s / p)", "[ozaki]") {
  // The epilogue of wgmma_products.cu (sum_residue_byte): the bytes the reconstruction reads must be those of
  // CrtSums::add's reduction in doubles, over all of INT32's range.
  std::mt19937_64 random(17);
  std::vector<int> moduli(kModuli, kModuli + kMaxModuli);  // and every odd modulus the function takes, fewer trials
  for (int p = 3; p < 256; p += 2)
    if (std::find(moduli.begin(), moduli.end(), p) == moduli.end()) moduli.push_back(p);
  for (size_t l = 0; l < moduli.size(); ++l) {
    const int p = moduli[l];
    const int trials = l < static_cast<size_t>(kMaxModuli) ? 20000 : 500;
    const float inverse = 1.0f / static_cast<float>(p);
    const int split = sum_split_residue(p);
    const auto check = [&](int64_t wide) {
      const auto s = static_cast<int32_t>(wide);
      const double v = s;
      const auto expected =
          static_cast<uint32_t>(static_cast<int>(std::fma(-std::nearbyint(v / p), static_cast<double>(p), v))) & 0xffu;
      const uint32_t got = sum_residue_byte(s, split, inverse, p);
      INFO("s = " << s << ", p = " << p);
      REQUIRE(got == expected);
    };
    for (int64_t edge : {int64_t{0}, int64_t{1}, int64_t{p / 2}, int64_t{p / 2 + 1}, int64_t{p - 1}, int64_t{p},
                         int64_t{65535}, int64_t{65536}, int64_t{INT32_MAX}, int64_t{INT32_MAX} - p / 2})
      check(edge), check(-edge);
    check(INT32_MIN), check(int64_t{INT32_MIN} + p / 2);
    // Where |h c + l| is largest: h = -2^15 or 2^15 - 1 with every low part near 0 and 2^16.
    for (int64_t low = 0; low < 65536; low += low < 256 || low > 65280 ? 1 : 97)
      check(-(int64_t{1} << 31) + low), check((int64_t{1} << 31) - 65536 + low);
    for (int trial = 0; trial < trials; ++trial) {
      const auto raw = static_cast<int64_t>(static_cast<uint32_t>(random()) >> (1 + trial % 31));
      const int64_t sum = trial % 2 ? -raw : raw;
      check(sum), check(sum / p * p + p / 2);  // halfway between multiples too
    }
  }
}

TEST_CASE("ozaki: exact conversions, and the sums of reduced residues (bytes) equal add's", "[ozaki]") {
  for (int c : {0, 1, -1, 127, -128, 255, 1 << 20, -(1 << 24) - 1, INT32_MAX, INT32_MIN + 1, INT32_MIN})
    REQUIRE(exact_double(c) == static_cast<double>(c));
  std::mt19937_64 random(13);
  // Every signed byte, at each of a word's four places among random neighbours, converted biased.
  for (int c = -128; c <= 127; ++c) {
    for (int t = 0; t < 4; ++t) {
      const auto others = static_cast<uint32_t>(random()) & ~(0xffu << (8 * t));
      const uint32_t word = others | (static_cast<uint32_t>(c) & 0xffu) << (8 * t);
      REQUIRE(biased_byte_double(biased_bytes(word), t) == static_cast<double>(c));
    }
  }
  const CrtConstants constants = crt_constants(kMaxModuli, 64);
  for (int trial = 0; trial < 20000; ++trial) {
    CrtSums by_add, by_reduced;
    bool bytes_zero = true;
    for (int l = 0; l < kMaxModuli; ++l) {
      const auto raw = static_cast<int64_t>(static_cast<uint32_t>(random()) >> (1 + trial % 31));
      int64_t sum = trial % 2 ? -raw : raw;
      if (trial % 5 == 0) sum = sum / kModuli[l] * kModuli[l] + kModuli[l] / 2;  // 256's ties, odd p's edges
      if (sum > INT32_MAX) sum -= kModuli[l];
      REQUIRE(exact_double(static_cast<int>(sum)) == static_cast<double>(sum));
      // What the own product writes for the sum (wgmma_products.cu): its residue as add reduces it, in a byte.
      const double c = std::fma(-std::rint(static_cast<double>(sum) * constants.inverse_modulus[l]),
                                constants.modulus[l], static_cast<double>(sum));
      const auto byte = static_cast<int8_t>(static_cast<uint32_t>(static_cast<int>(c)) & 0xffu);
      by_add.add(static_cast<double>(byte), constants, l);  // reduces it again, to itself
      // The byte at place l % 4 of a word, as the reconstruction reads it.
      const int t = l % 4;
      const uint32_t word = (static_cast<uint32_t>(random()) & ~(0xffu << (8 * t))) |
                            (static_cast<uint32_t>(static_cast<uint8_t>(byte)) << (8 * t));
      by_reduced.add_reduced(biased_byte_double(biased_bytes(word), t), constants, l);
      bytes_zero = bytes_zero && byte == 0;
    }
    REQUIRE(by_add.high == by_reduced.high);
    REQUIRE(by_add.low == by_reduced.low);
    REQUIRE(by_add.all_zero == bytes_zero);
  }
}

TEST_CASE("ozaki: the reconstruction from residue products gives the exact integer product", "[ozaki]") {
  std::mt19937_64 random(7);
  for (int count = kMinModuli; count <= kMaxModuli; ++count) {
    for (int64_t k : {1, 7, 64, 1000}) {
      const CrtConstants constants = crt_constants(count, k);
      REQUIRE(constants.scale_target >= 1.0);
      const double scale_target = constants.scale_target;
      for (int trial = 0; trial < 40; ++trial) {
        const bool heavy = trial % 2 == 1;
        std::vector<double> a = scaled_line(k, scale_target, random, heavy);
        std::vector<double> b = scaled_line(k, scale_target, random, heavy);
        if (trial == 0) b = a;  // the Cauchy-Schwarz bound met: the largest product there is
        if (trial == 2)
          for (double &x : b) x = -x;
        Wide exact = 0;
        for (int64_t l = 0; l < k; ++l) exact += static_cast<Wide>(a[l]) * static_cast<Wide>(b[l]);
        // The residues as the kernels make them (|x| < 2^52).
        const auto residue = [&](double x, int m) {
          return integer_residue<false>(static_cast<int64_t>(x), constants.integer_modulus[m], constants.reciprocal[m],
                                        constants.power24_residue[m]);
        };
        CrtSums sums;
        for (int m = 0; m < count; ++m) {
          int64_t sum = 0;  // what the INT8 product gives: exact INT32 sums of residue products
          for (int64_t l = 0; l < k; ++l) sum += residue(a[l], m) * residue(b[l], m);
          REQUIRE(std::llabs(sum) < (int64_t{1} << 31));
          sums.add(static_cast<double>(sum), constants, m);
        }
        const double got = sums.value(constants);
        INFO("moduli " << count << ", k " << k << ", trial " << trial << ": exact " << to_double(exact) << ", got "
                       << got);
        // Far below the operands' rounding to integers, which moves the product by about Q.
        CHECK(std::fabs(got - to_double(exact)) <= std::ldexp(std::fabs(to_double(exact)), -50) + 1e-6 * scale_target);
      }
    }
  }
}

namespace {

// Exact sums of doubles, as a nonoverlapping expansion (Shewchuk's grow-expansion): the exact product and the exact
// error of an emulated element.
class ExactSum {
 public:
  void add(double value) {
    std::vector<double> next;
    double carry = value;
    for (double part : parts_) {
      const double sum = carry + part;
      const double part_virtual = sum - carry;
      const double carry_virtual = sum - part_virtual;
      const double error = (carry - carry_virtual) + (part - part_virtual);
      if (error != 0) next.push_back(error);
      carry = sum;
    }
    next.push_back(carry);
    parts_ = next;
  }
  // a * b, exactly: its rounded product and the product's error.
  void add_product(double a, double b) {
    const double product = a * b;
    add(product);
    add(std::fma(a, b, -product));
  }
  // The parts grow in magnitude and do not overlap: summed from the smallest, the double is faithful.
  double value() const {
    double sum = 0;
    for (double part : parts_) sum += part;
    return sum;
  }

 private:
  std::vector<double> parts_;
};

LineFacts facts_of(const std::vector<float> &line, int64_t k = 4096) {
  double squares = 0, absolutes = 0;
  float largest = 0, smallest = HUGE_VALF;
  int nonzeros = 0, integral = kNoIntegralExponent;
  for (float x : line) {
    squares = std::fma(static_cast<double>(x), static_cast<double>(x), squares);
    absolutes += std::fabs(static_cast<double>(x));
    if (x != 0.0f) {
      ++nonzeros;
      largest = std::fmax(largest, std::fabs(x));
      smallest = std::fmin(smallest, std::fabs(x));
      integral = std::max(integral, integral_exponent_of(x));
    }
  }
  return line_facts(squares, absolutes, largest, smallest, nonzeros, integral, true, certificate_constants(k));
}

Wide product_of(int count) {
  Wide product = 1;
  for (int l = 0; l < count; ++l) product *= kModuli[l];
  return product;
}

struct Verdict {
  int need = 0;
  int64_t checked = 0;  // emulated elements held against the guarantee
  bool exact_at_need = false;
};

// Every moduli count on one element: the emulated value, computed as the kernels compute it, against the exact
// result, wherever the a-priori need or the value's certificate says it meets the guarantee.
Verdict check_element(const std::vector<float> &x, const std::vector<float> &y, float alpha, float beta, float c0) {
  const int64_t k = static_cast<int64_t>(x.size());
  const CertificateConstants certificate = certificate_constants(k);
  const LineFacts fx = facts_of(x, k), fy = facts_of(y, k);
  int64_t code_product = 0;
  ExactSum exact, absolute;
  for (int64_t l = 0; l < k; ++l) {
    code_product +=
        static_cast<int64_t>(std::floor(std::ldexp(std::fabs(static_cast<double>(x[l])), fx.code_exponent))) *
        static_cast<int64_t>(std::floor(std::ldexp(std::fabs(static_cast<double>(y[l])), fy.code_exponent)));
    exact.add_product(alpha, static_cast<double>(x[l]) * y[l]);  // x y is exact in a double
    absolute.add(std::fabs(static_cast<double>(x[l]) * y[l]));
  }
  REQUIRE(code_product < (int64_t{1} << 31));
  if (beta != 0.0f) exact.add(static_cast<double>(beta) * c0);
  // The guarantee counts the terms that can be nonzero: t = min(k, nonzeros of x, of y), at least 1.
  const int64_t terms = std::max<int64_t>(1, std::min<int64_t>(k, std::min(fx.nonzeros, fy.nonzeros)));
  const double bound = std::ldexp(1.0 + std::sqrt(static_cast<double>(terms)), -24) *
                       (std::fabs(alpha) * absolute.value() + std::fabs(static_cast<double>(beta) * c0));
  Verdict verdict;
  verdict.need = element_need(fx, fy, static_cast<int32_t>(code_product), alpha, beta, c0, certificate, 7);
  // The need is the fewest moduli that certify, and every larger count certifies too (the search's bisection and
  // its early FP32 answer rest on that).
  {
    const double lower = static_cast<double>(code_product) * std::ldexp(1.0, -(fx.code_exponent + fy.code_exponent));
    const ElementAllowance allowance = element_allowance(
        fx, fy, lower, std::fabs(static_cast<double>(alpha)),
        beta == 0.0f ? 0.0 : std::fabs(static_cast<double>(beta) * static_cast<double>(c0)), certificate);
    // What an element is held to is 2^-24 sqrt(t), not the dense lines' 2^-24 sqrt(k).
    CHECK(allowance.allowed <= std::ldexp(std::sqrt(static_cast<double>(terms)), -24) *
                                   (std::fabs(static_cast<double>(alpha)) * lower +
                                    (beta == 0.0f ? 0.0 : std::fabs(static_cast<double>(beta) * c0))));
    int fewest = kNeedsFp32;
    for (int count = kMaxModuli; count >= kMinModuli; --count) {
      if (!certified_before(fx, fy, allowance, count, certificate)) break;
      fewest = count;
    }
    const bool no_codes = code_product == 0 && (fx.nonzeros == 0 || fy.nonzeros == 0 ||
                                                ((fx.flags & kLineFaithful) != 0 && (fy.flags & kLineFaithful) != 0));
    if (!no_codes) CHECK(verdict.need == fewest);
    for (int count = kMinModuli; count <= kMaxModuli; ++count)
      if (certified_before(fx, fy, allowance, count, certificate)) CHECK(count >= fewest);
  }
  // The search's start does not change the fewest; without descending, a start above it may stay.
  for (int guess : {kMinModuli, 5, kMaxModuli}) {
    CHECK(element_need(fx, fy, static_cast<int32_t>(code_product), alpha, beta, c0, certificate, guess) ==
          verdict.need);
    CHECK(element_need(fx, fy, static_cast<int32_t>(code_product), alpha, beta, c0, certificate, guess, true, true) ==
          verdict.need);
    const int need =
        element_need(fx, fy, static_cast<int32_t>(code_product), alpha, beta, c0, certificate, guess, false);
    CHECK(need >= verdict.need);
    if (verdict.need <= kMaxModuli) CHECK(need <= std::max(guess, verdict.need));
  }
  for (int count = kMinModuli; count <= kMaxModuli; ++count) {
    const CrtConstants constants = crt_constants(count, k);
    if (constants.scale_target == 0.0) continue;
    const LineScale sx = line_scale(fx, constants.scale_target), sy = line_scale(fy, constants.scale_target);
    Wide v = 0;
    for (int64_t l = 0; l < k; ++l) {
      const double scaled_x = static_cast<double>(x[l]) * sx.scale, scaled_y = static_cast<double>(y[l]) * sy.scale;
      REQUIRE(std::fma(static_cast<double>(x[l]), sx.scale, -scaled_x) == 0.0);  // the scaling is exact
      REQUIRE(std::fma(static_cast<double>(y[l]), sy.scale, -scaled_y) == 0.0);
      if (!sx.rounds) REQUIRE(std::rint(scaled_x) == scaled_x);
      if (!sy.rounds) REQUIRE(std::rint(scaled_y) == scaled_y);
      const double a = std::rint(scaled_x);
      const double b = std::rint(scaled_y);
      REQUIRE(std::fabs(a) < 0x1p53);
      REQUIRE(std::fabs(b) < 0x1p53);
      v += static_cast<Wide>(static_cast<int64_t>(a)) * static_cast<Wide>(static_cast<int64_t>(b));
    }
    const Wide half = product_of(count) / 2;
    REQUIRE((v < half && -v < half));  // the scaling keeps every element rebuildable
    CrtSums sums;
    for (int l = 0; l < count; ++l) {
      const Wide p = kModuli[l];
      sums.add(static_cast<double>(((v % p) + p) % p), constants, l);
    }
    CHECK(sums.all_zero == (v == 0));
    CHECK(fx.inverse_scale[count] == 1.0 / sx.scale);
    CHECK(fy.inverse_scale[count] == 1.0 / sy.scale);
    CHECK(((fx.rounding >> count & 1) != 0) == sx.rounds);
    const double value = sums.value(constants) * fx.inverse_scale[count] * fy.inverse_scale[count];
    double result = static_cast<double>(alpha) * value;
    if (beta != 0.0f) result = std::fma(static_cast<double>(beta), static_cast<double>(c0), result);
    const float emulated = static_cast<float>(result);
    ExactSum difference = exact;
    difference.add(-static_cast<double>(emulated));
    const double error = std::fabs(difference.value());
    const bool by_need = count >= verdict.need;
    const bool by_value = certified_by_value(fx, fy, value, sums.all_zero, alpha, beta, c0, count, certificate);
    if (by_need || by_value) {
      INFO("k " << k << ", moduli " << count << ", need " << verdict.need << (by_value ? ", by value" : "")
                << ": error " << error << ", guarantee " << bound);
      CHECK(error <= bound);
      ++verdict.checked;
    }
    if (count == verdict.need) verdict.exact_at_need = difference.value() == 0.0;
  }
  return verdict;
}

enum class Family {
  uniform,
  inner_scaled,
  outlier,
  sparse,
  binary,
  counts,
  large_integers,
  cancel,
  wide,
  tiny_codes,
  zero_row
};

// Row x of op(A) and column y of op(B) of one family: the acceptance probes' families and some of the
// certificate's own hard cases.
void fill_family(Family family, int64_t k, std::mt19937_64 &random, std::vector<float> &x, std::vector<float> &y,
                 int spread_bits) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-spread_bits, spread_bits);
  x.assign(k, 0.0f);
  y.assign(k, 0.0f);
  for (int64_t l = 0; l < k; ++l) {
    switch (family) {
      case Family::uniform: x[l] = uniform(random), y[l] = uniform(random); break;
      case Family::inner_scaled: {
        const int d = exponent(random);
        x[l] = std::ldexp(uniform(random), d), y[l] = std::ldexp(uniform(random), -d);
        break;
      }
      case Family::outlier:
        x[l] = l == 0 ? std::ldexp(uniform(random), spread_bits) : uniform(random);
        y[l] = l == 0 ? 0.0f : uniform(random);
        break;
      case Family::sparse:
        x[l] = random() % 10 == 0 ? uniform(random) : 0.0f;
        y[l] = random() % 10 == 0 ? uniform(random) : 0.0f;
        break;
      case Family::binary: x[l] = static_cast<float>(random() % 2), y[l] = static_cast<float>(random() % 2); break;
      case Family::counts: x[l] = static_cast<float>(random() % 8), y[l] = static_cast<float>(random() % 5); break;
      case Family::large_integers:
        x[l] = static_cast<float>(random() % 2048) - 1024.0f, y[l] = static_cast<float>(random() % 2048);
        break;
      case Family::cancel:  // pairs of columns that cancel: x_2i = x_2i+1, y_2i = -y_2i+1 (up to a little)
        if (l % 2 == 0) {
          x[l] = uniform(random), y[l] = uniform(random);
        } else {
          x[l] = x[l - 1], y[l] = -y[l - 1] * (1.0f + std::ldexp(uniform(random), -20));
        }
        break;
      case Family::wide:
        x[l] = std::ldexp(uniform(random), exponent(random)), y[l] = std::ldexp(uniform(random), exponent(random));
        break;
      case Family::zero_row:  // a row of zeros against a column whose small elements have no code
        x[l] = 0.0f, y[l] = uniform(random);
        break;
      case Family::tiny_codes:  // elements just below the codes' resolution, nothing else meeting them
        x[l] = l % 3 == 0 ? 1.0f : std::ldexp(uniform(random), -8);
        y[l] = l % 3 == 0 ? 0.0f : uniform(random);
        break;
    }
  }
}

// The families the certificate's tests run, with their spreads.
struct FamilyCase {
  Family family;
  int spread_bits;
  const char *name;
};
const FamilyCase kFamilyCases[] = {{Family::uniform, 0, "uniform"},
                                   {Family::inner_scaled, 10, "inner 2^10"},
                                   {Family::inner_scaled, 20, "inner 2^20"},
                                   {Family::inner_scaled, 40, "inner 2^40"},
                                   {Family::outlier, 30, "outlier 2^30"},
                                   {Family::sparse, 0, "sparse"},
                                   {Family::binary, 0, "0/1"},
                                   {Family::counts, 0, "counts"},
                                   {Family::large_integers, 0, "integers"},
                                   {Family::cancel, 0, "cancelling pairs"},
                                   {Family::wide, 16, "exponents 2^16"},
                                   {Family::tiny_codes, 0, "below the codes"},
                                   {Family::zero_row, 0, "a row of zeros"}};

struct Scalars {
  float alpha, beta;
};

}  // namespace

TEST_CASE("ozaki: the reconstruction's multiple of P, up to the edge of the range the scaling keeps", "[ozaki]") {
  // value() finds q from (high + low) / P: any V with |V| <= (P / 2)(1 - 2^-19) must come back as itself, from its
  // residues reduced (bytes) or as INT32 sums of any multiple of each modulus. A q off by one would be off by P.
  std::mt19937_64 random(45);
  for (int count = kMinModuli; count <= kMaxModuli; ++count) {
    const CrtConstants constants = crt_constants(count, 1);
    const Wide product = product_of(count);
    const Wide edge = static_cast<Wide>(std::ldexp(to_double(product), -1) * (1.0 - std::ldexp(1.0, -19)));
    std::vector<Wide> values = {0, 1, -1, edge, -edge, edge - 1, -edge + 1, product / 4, -product / 3};
    for (int trial = 0; trial < 200; ++trial) {
      const double fraction = std::ldexp(static_cast<double>(random() >> 11), -53);  // [0, 1)
      const Wide v = static_cast<Wide>(fraction * to_double(edge));
      values.push_back(trial % 2 ? v : -v);
    }
    for (const Wide v : values) {
      CrtSums reduced, sums;
      for (int l = 0; l < count; ++l) {
        const int p = kModuli[l];
        int c = static_cast<int>(v % p);  // in (-p, p)
        if (2 * c >= p) c -= p;
        if (2 * c < -p) c += p;
        reduced.add_reduced(static_cast<double>(c), constants, l);
        const int64_t multiple = static_cast<int64_t>(random() % 4096) - 2048;  // an INT32 sum congruent to c
        sums.add(static_cast<double>(c + multiple * p), constants, l);
      }
      const double expected = to_double(v);
      INFO("moduli " << count << ", V " << expected);
      // The doubles' roundings move V by less than P 2^-52; a wrong q by P.
      const double allowance = std::ldexp(to_double(product), -50);
      CHECK(std::fabs(reduced.value(constants) - expected) <= allowance);
      CHECK(std::fabs(sums.value(constants) - expected) <= allowance);
    }
  }
}

TEST_CASE("ozaki: every element the certificate passes meets the guarantee, against exact arithmetic", "[ozaki]") {
  std::mt19937_64 random(26);
  const Scalars scalars[] = {{1.0f, 0.0f}, {-1.5f, 0.75f}, {0x1p-10f, 0.0f}};
  for (const FamilyCase &c : kFamilyCases)
    for (int64_t k : {int64_t{1}, int64_t{3}, int64_t{16}, int64_t{257}, int64_t{2048}}) {
      int64_t checked = 0, needs_fp32 = 0;
      for (int trial = 0; trial < 6; ++trial) {
        std::vector<float> x, y;
        fill_family(c.family, k, random, x, y, c.spread_bits);
        const Scalars &s = scalars[trial % 3];
        const float c0 = s.beta != 0.0f ? std::uniform_real_distribution<float>(-1.0f, 1.0f)(random) : 0.0f;
        INFO(c.name << ", k " << k << ", trial " << trial);
        const Verdict verdict = check_element(x, y, s.alpha, s.beta, c0);
        checked += verdict.checked;
        needs_fp32 += verdict.need == kNeedsFp32;
        const bool integers =
            c.family == Family::binary || c.family == Family::counts || c.family == Family::large_integers;
        if (integers && s.alpha == 1.0f && s.beta == 0.0f) {
          // Exact where FP32 is: partial sums below 2^24 here.
          CHECK(verdict.need <= kMaxModuli);
          CHECK(verdict.exact_at_need);
        }
        if (c.family == Family::uniform && k >= 16) CHECK(verdict.need <= 8);
        if (c.family == Family::binary && k == 2048) CHECK(verdict.need <= 4);
        // Every term is 0: certified at the fewest count, whatever the column's codes miss.
        if (c.family == Family::zero_row) CHECK(verdict.need == kMinModuli);
      }
      // The guarantee was exercised, except where no count can give it.
      if (c.family != Family::inner_scaled && c.family != Family::outlier) CHECK(checked > 0);
      (void)needs_fp32;
    }
}

TEST_CASE("ozaki: the codes at half depth are the geometric means' floors, and twice their product a lower bound",
          "[ozaki]") {
  // half_code(a, b) = floor(sqrt(a b)) exactly, for every two codes.
  for (int a = 0; a < 128; ++a)
    for (int b = 0; b < 128; ++b) {
      const int code = half_code(static_cast<float>(a), static_cast<float>(b));
      INFO(a << " x " << b);
      CHECK(code >= 0);
      CHECK(code * code <= a * b);
      CHECK((code + 1) * (code + 1) > a * b);
    }
  std::mt19937_64 random(28);

  // For every family, twice the half-depth codes' product, scaled, is at most (|x||y|) exactly, and the need it
  // gives (no zero test) is at least the full codes' need: a lower bound the certificate may take as it takes
  // the full one. Uniform lines keep their need.
  std::vector<FamilyCase> cases(std::begin(kFamilyCases), std::end(kFamilyCases));
  for (const FamilyCase &c : cases)
    for (int64_t k : {int64_t{1}, int64_t{3}, int64_t{16}, int64_t{257}, int64_t{2048}}) {
      const CertificateConstants certificate = certificate_constants(k);
      for (int trial = 0; trial < 4; ++trial) {
        std::vector<float> x, y;
        fill_family(c.family, k, random, x, y, c.spread_bits);
        if (trial == 3)  // pairs of a large and a tiny element: the half depth's worst case
          for (int64_t l = 0; l < k; ++l) x[l] = l % 2 == 0 ? x[l] : std::ldexp(x[l], -20);
        INFO(c.name << ", k " << k << ", trial " << trial);
        LineFacts fx = facts_of(x, k), fy = facts_of(y, k);
        const auto code = [](float value, int exponent) {  // |x| 2^g, a float as the codes' kernel makes it
          return static_cast<float>(std::ldexp(std::fabs(static_cast<double>(value)), exponent));
        };
        int64_t full = 0, half = 0;
        ExactSum absolute;
        for (int64_t l = 0; l < k; ++l) {
          full += static_cast<int64_t>(std::floor(code(x[l], fx.code_exponent))) *
                  static_cast<int64_t>(std::floor(code(y[l], fy.code_exponent)));
          absolute.add(std::fabs(static_cast<double>(x[l]) * y[l]));
        }
        for (int64_t l = 0; l < k; l += 2) {
          const float x1 = l + 1 < k ? x[l + 1] : 0.0f, y1 = l + 1 < k ? y[l + 1] : 0.0f;
          half += int64_t{half_code(std::floor(code(x[l], fx.code_exponent)), std::floor(code(x1, fx.code_exponent)))} *
                  half_code(std::floor(code(y[l], fy.code_exponent)), std::floor(code(y1, fy.code_exponent)));
        }
        REQUIRE(2 * half < (int64_t{1} << 31));
        ExactSum room = absolute;
        room.add(-std::ldexp(static_cast<double>(2 * half), -(fx.code_exponent + fy.code_exponent)));
        CHECK(room.value() >= 0.0);
        const int full_need = element_need(fx, fy, static_cast<int32_t>(full), 1.0f, 0.0f, 0.0f, certificate, 7);
        fx.flags &= ~kLineFaithful;
        fy.flags &= ~kLineFaithful;
        const int half_need = element_need(fx, fy, static_cast<int32_t>(2 * half), 1.0f, 0.0f, 0.0f, certificate, 7);
        CHECK(half_need >= full_need);
        if (c.family == Family::uniform && k >= 16 && trial < 3) CHECK(half_need == full_need);
      }
    }

  // The choice: at most one piece in 256 lost.
  CHECK_FALSE(codes_at_half_depth(CodeChunks{0, 0}));
  CHECK(codes_at_half_depth(CodeChunks{1, 0}));
  CHECK(codes_at_half_depth(CodeChunks{256, 1}));
  CHECK_FALSE(codes_at_half_depth(CodeChunks{256, 2}));
  CHECK_FALSE(codes_at_half_depth(CodeChunks{1, 1}));
}

TEST_CASE("ozaki: the plan's thresholds for a group of rows certify every element that reaches them", "[ozaki]") {
  std::mt19937_64 random(2611);
  const Scalars scalars[] = {{1.0f, 0.0f}, {-1.5f, 0.75f}, {0x1p-10f, 0.0f}, {0x1p-100f, 2.0f}};
  constexpr int kRows = 6, kCols = 4;
  int64_t reached = 0, checked_counts = 0;
  for (const FamilyCase &c : kFamilyCases)
    for (int64_t k : {int64_t{1}, int64_t{3}, int64_t{16}, int64_t{257}, int64_t{2048}}) {
      const CertificateConstants certificate = certificate_constants(k);
      // Rows and columns from pairs of the family; some rows scaled by powers of two (alike in shape).
      std::vector<std::vector<float>> rows(kRows), cols(kCols);
      for (int r = 0; r < kRows; ++r) {
        std::vector<float> y;
        fill_family(c.family, k, random, rows[r], y, c.spread_bits);
        if (r < kCols) cols[r] = y;
        const int scale = static_cast<int>(random() % 41) - 20;
        if (r % 2 == 1)
          for (float &x : rows[r]) x = std::ldexp(x, scale);
      }
      std::vector<LineFacts> row_facts, col_facts;
      CodeBounds largest;
      for (const auto &x : rows) {
        row_facts.push_back(facts_of(x, k));
        take_largest(largest, code_bounds(row_facts.back()));
      }
      for (const auto &y : cols) col_facts.push_back(facts_of(y, k));
      for (int j = 0; j < kCols; ++j)
        for (const Scalars &s : scalars) {
          int32_t threshold[kMaxModuli + 1];
          code_thresholds(largest, code_bounds(col_facts[j]), std::fabs(static_cast<double>(s.alpha)), certificate,
                          threshold);
          for (int count = kMinModuli; count < kMaxModuli; ++count) CHECK(threshold[count] >= threshold[count + 1]);
          CHECK(threshold[kMaxModuli] >= 1);
          for (int i = 0; i < kRows; ++i) {
            const LineFacts &fx = row_facts[i], &fy = col_facts[j];
            int64_t code_product = 0;
            for (int64_t l = 0; l < k; ++l)
              code_product += static_cast<int64_t>(std::floor(
                                  std::ldexp(std::fabs(static_cast<double>(rows[i][l])), fx.code_exponent))) *
                              static_cast<int64_t>(
                                  std::floor(std::ldexp(std::fabs(static_cast<double>(cols[j][l])), fy.code_exponent)));
            const float c0 = s.beta != 0.0f ? std::uniform_real_distribution<float>(-1.0f, 1.0f)(random) : 0.0f;
            const double lower =
                static_cast<double>(code_product) * std::ldexp(1.0, -(fx.code_exponent + fy.code_exponent));
            const ElementAllowance allowance = element_allowance(
                fx, fy, lower, std::fabs(static_cast<double>(s.alpha)),
                s.beta == 0.0f ? 0.0 : std::fabs(static_cast<double>(s.beta) * static_cast<double>(c0)), certificate);
            INFO(c.name << ", k " << k << ", row " << i << ", column " << j << ", alpha " << s.alpha << ", code "
                        << code_product);
            for (int count = kMinModuli; count <= kMaxModuli; ++count) {
              if (code_product < threshold[count]) continue;
              ++checked_counts;
              CHECK(certified_before(fx, fy, allowance, count, certificate));
            }
            reached += code_product >= threshold[kMaxModuli];
            // On uniform operands every element takes the shortcut, at the element's own fewest count or one more.
            if (c.family == Family::uniform && k >= 16 && s.alpha == 1.0f) {
              CHECK(code_product >= threshold[kMaxModuli]);
              int fewest = kMaxModuli;
              while (fewest > kMinModuli && certified_before(fx, fy, allowance, fewest - 1, certificate)) --fewest;
              int need = kMinModuli;
              for (int count = kMinModuli; count < kMaxModuli; ++count) need += code_product < threshold[count];
              CHECK(need <= fewest + 1);
            }
          }
        }
    }
  CHECK(reached > 0);
  CHECK(checked_counts > 0);
}

TEST_CASE("ozaki: the plan's shortcut from its neighbour's window is the fewest count whose threshold is reached",
          "[ozaki]") {
  // Nonincreasing thresholds as code_thresholds makes them: some counts at INT32_MAX (no product reaches them), runs
  // of equal ones, and the window of every guess against products at, beside and between the thresholds.
  std::mt19937_64 random(4127);
  int64_t within = 0, outside = 0, fp32 = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    int32_t threshold[kMaxModuli + 1] = {};
    int32_t last = 1 + static_cast<int32_t>(random() % 1000);
    const int unreachable = kMinModuli + static_cast<int>(random() % (kMaxModuli - kMinModuli + 2));
    for (int count = kMaxModuli; count >= kMinModuli; --count) {
      if (random() % 4 != 0) last += static_cast<int32_t>(random() % (trial % 2 == 0 ? 300 : 3000000));
      threshold[count] = count < unreachable ? INT32_MAX : last;
    }
    const auto at = [&](int count) { return threshold[count]; };
    std::vector<int32_t> products = {0, 1, INT32_MAX - 1, INT32_MAX};
    for (int count = kMinModuli; count <= kMaxModuli; ++count)
      for (int32_t step : {-1, 0, 1})
        if (threshold[count] != INT32_MAX || step != 1) products.push_back(threshold[count] + step);
    const uint64_t span = std::min<uint64_t>(uint64_t{4} * static_cast<uint64_t>(threshold[kMaxModuli]) + 8, INT32_MAX);
    for (int r = 0; r < 8; ++r) products.push_back(static_cast<int32_t>(random() % span));
    for (const int32_t product : products) {
      if (product < 0) continue;
      int fewest = kNeedsFp32;  // the fewest count whose threshold the product reaches, by definition
      for (int count = kMaxModuli; count >= kMinModuli; --count)
        if (product >= threshold[count]) fewest = count;
      fp32 += fewest == kNeedsFp32;
      for (int guess = kMinModuli; guess <= kMaxModuli; ++guess) {
        const int32_t low = threshold[guess], high = guess > kMinModuli ? threshold[guess - 1] : INT32_MAX;
        INFO("trial " << trial << ", product " << product << ", guess " << guess);
        CHECK(shortcut_need(product, guess, low, high, at) == fewest);
        const bool in_window = product >= low && product < high;
        within += in_window;
        outside += !in_window;
        if (in_window) CHECK(fewest == guess);
      }
    }
  }
  CHECK(within > 0);
  CHECK(outside > 0);
  CHECK(fp32 > 0);
}

TEST_CASE("ozaki: the integral exponent and the line facts", "[ozaki]") {
  CHECK(integral_exponent_of(1.0f) == 0);
  CHECK(integral_exponent_of(3.0f) == 0);
  CHECK(integral_exponent_of(8.0f) == -3);
  CHECK(integral_exponent_of(0.5f) == 1);
  CHECK(integral_exponent_of(-0.375f) == 3);
  CHECK(integral_exponent_of(0x1p-149f) == 149);
  CHECK(integral_exponent_of(0x1.000002p0f) == 23);
  const LineFacts line = facts_of({3.0f, -4.0f, 0.0f});
  CHECK(line.norm2 >= 5.0);
  CHECK(line.norm2 * line.inverse_norm2 <= 1.0);
  CHECK(line.norm1 >= 7.0);
  CHECK(line.nonzeros == 2);
  CHECK(line.integral_exponent == 0);
  CHECK(line.code_exponent == 4);  // 4 * 16 = 64
  CHECK((line.flags & kLineFaithful) != 0);
  CHECK((facts_of({1.0f, 0x1p-8f}).flags & kLineFaithful) == 0);
  CHECK((facts_of({0.0f, 0.0f}).flags & kLineFaithful) != 0);
}

TEST_CASE("ozaki: a float's lowest set bit, whose least over a line gives the line's integral exponent", "[ozaki]") {
  const auto from_bits = [](uint32_t bits) {
    float x = 0;
    memcpy(&x, &bits, sizeof x);
    return x;
  };
  std::vector<float> values = {1.0f,
                               3.0f,
                               8.0f,
                               0.5f,
                               -0.375f,
                               0x1p-149f,
                               0x1.000002p0f,
                               FLT_MAX,
                               -FLT_MAX,
                               FLT_MIN,
                               0x1.fffffcp-127f,
                               0x1.000002p-126f,
                               0x1p-126f + 0x1p-149f,
                               0x1.8p-148f,
                               0x1p127f,
                               -0x1.fffffep126f};
  std::mt19937 random(20261129);
  for (int i = 0; i < 200000; ++i) values.push_back(from_bits(static_cast<uint32_t>(random())));
  for (int i = 0; i < 20000; ++i)
    values.push_back(from_bits(static_cast<uint32_t>(random()) & 0x807fffffu));  // subnormals
  int checked = 0;
  for (const float x : values) {
    if (x == 0.0f || !std::isfinite(x)) continue;
    const float bit = lowest_bit_value(x);
    INFO("x = " << std::hexfloat << x << ", its lowest bit " << bit);
    CHECK(integral_exponent_of_bit(bit) == integral_exponent_of(x));
    CHECK(std::ldexp(static_cast<double>(bit), integral_exponent_of(x)) == 1.0);
    ++checked;
  }
  CHECK(checked > 200000);
  // A line: its least lowest bit gives the largest integral exponent of its elements.
  const float line[] = {3.0f, 0x1.8p-3f, -0x1p-10f, 1536.0f};
  float finest = HUGE_VALF;
  int integral = kNoIntegralExponent;
  for (const float x : line)
    finest = std::fmin(finest, lowest_bit_value(x)), integral = std::max(integral, integral_exponent_of(x));
  CHECK(integral == 10);
  CHECK(integral_exponent_of_bit(finest) == integral);
}

TEST_CASE("ozaki: the moduli count is the cheapest, and FP32 wins where too much needs it", "[ozaki]") {
  unsigned long long needs[kNeedsFp32 + 1] = {};
  needs[7] = 4096ull * 4096;
  ModuliChoice choice = choose_moduli(needs, 4096, 4096, 4096, 1, false);
  CHECK(choice.count == 7);
  CHECK(choice.fp32_elements == 0);
  CHECK(!choice.declined);
  needs[7] -= 100, needs[kNeedsFp32] = 100;  // a few elements in FP32 cost less than more moduli
  choice = choose_moduli(needs, 4096, 4096, 4096, 1, false);
  CHECK(choice.count == 7);
  CHECK(choice.fp32_elements == 100);
  CHECK(!choice.declined);
  needs[7] = 4096ull * 4096 / 2, needs[9] = 4096ull * 4096 / 2, needs[kNeedsFp32] = 0;
  CHECK(choose_moduli(needs, 4096, 4096, 4096, 1, false).count == 9);
  needs[9] = 0, needs[kNeedsFp32] = 4096ull * 4096 / 2;  // half of C in FP32, element by element: FP32 throughout
  CHECK(choose_moduli(needs, 4096, 4096, 4096, 1, false).declined);
  unsigned long long small[kNeedsFp32 + 1] = {};
  small[2] = 1000;  // integers that two moduli certify
  CHECK(choose_moduli(small, 10, 10, 10, 10, false).count == 2);
  // Where the emulation is slower than FP32 anyway (a tall, shallow product), it runs the count that certifies
  // every element rather than decline over a few: a forced emulation then still runs.
  unsigned long long tall[kNeedsFp32 + 1] = {};
  tall[7] = 27000000 - 5, tall[8] = 5;
  choice = choose_moduli(tall, 9000000, 3, 5, 1, false);
  CHECK(!choice.declined);
  CHECK(choice.count == 8);
  CHECK(choice.fp32_elements == 0);
  tall[8] = 0, tall[kNeedsFp32] = 5;
  CHECK(choose_moduli(tall, 9000000, 3, 5, 1, false).declined);
}

TEST_CASE("ozaki: the moduli choice is the cost model's, rate by rate as divisions give it", "[ozaki]") {
  // The model written out with divisions by the rates (choice.hpp multiplies by their inverses): on random
  // histograms and shapes, the same count, the same FP32 elements and the same refusal.
  const auto reference = [](const unsigned long long(&needs)[kNeedsFp32 + 1], int64_t m, int64_t n, int64_t k,
                            int64_t batch, bool reads_c) {
    using namespace fastgemm::tuning;
    const double elements = static_cast<double>(m) * n * batch, work = 2.0 * elements * k;
    ModuliChoice choice;
    double later = static_cast<double>(needs[kNeedsFp32]), best = 1e300;
    for (int count = kMaxModuli; count >= kMinModuli; --count) {
      const double seconds = count * work / kInt8OpsPerSecond +
                             static_cast<double>(m + n) * k * batch * (4.0 + count) / kMemoryBytesPerSecond +
                             elements * (4.0 * count + 5.0 + (reads_c ? 4.0 : 0.0)) / kMemoryBytesPerSecond +
                             later * 2.0 * k / kRecomputeFlopsPerSecond;
      if (seconds <= best) best = seconds, choice.count = count, choice.fp32_elements = static_cast<int64_t>(later);
      later += static_cast<double>(needs[count]);
    }
    if (choice.fp32_elements > 0 && best > work / kFp32FlopsPerSecond && best > 50e-6) {
      choice.declined = true;
      for (int count = kMinModuli; count <= kMaxModuli && choice.declined; ++count) {
        unsigned long long above = needs[kNeedsFp32];
        for (int larger = count + 1; larger <= kMaxModuli; ++larger) above += needs[larger];
        if (above == 0) choice.count = count, choice.fp32_elements = 0, choice.declined = false;
      }
    }
    return choice;
  };
  std::mt19937_64 random(20261130);
  int declined = 0, recomputing = 0, counts_seen = 0;
  bool seen[kMaxModuli + 1] = {};
  for (int trial = 0; trial < 20000; ++trial) {
    const int64_t m = int64_t{1} << (random() % 15), n = int64_t{1} << (random() % 15);
    const int64_t k = int64_t{1} << (random() % 15), batch = 1 + static_cast<int64_t>(random() % 4);
    const bool reads_c = random() % 2 == 0;
    unsigned long long needs[kNeedsFp32 + 1] = {};
    const unsigned long long elements = static_cast<unsigned long long>(m * n * batch);
    // Most elements at one or two counts, a few elsewhere, some in FP32.
    const int main_count = kMinModuli + static_cast<int>(random() % (kMaxModuli - kMinModuli + 1));
    unsigned long long left = elements;
    for (int bin = 0; bin <= kNeedsFp32 && left > 0; ++bin) {
      const unsigned long long share = random() % 3 == 0 ? random() % (left / 64 + 2) : 0;
      const unsigned long long taken = std::min(left, share);
      needs[bin] += taken;
      left -= taken;
    }
    needs[main_count] += left;
    const ModuliChoice got = choose_moduli(needs, m, n, k, batch, reads_c);
    const ModuliChoice want = reference(needs, m, n, k, batch, reads_c);
    INFO("m " << m << " n " << n << " k " << k << " batch " << batch << " reads_c " << reads_c);
    CHECK(got.count == want.count);
    CHECK(got.fp32_elements == want.fp32_elements);
    CHECK(got.declined == want.declined);
    declined += want.declined;
    recomputing += !want.declined && want.fp32_elements > 0;
    if (!want.declined && !seen[want.count]) seen[want.count] = true, ++counts_seen;
  }
  CHECK(declined > 100);  // the histograms reach every branch of the model
  CHECK(recomputing > 100);
  CHECK(counts_seen >= 8);
}

TEST_CASE("ozaki: a line's codes' exponent brings its largest magnitude to [64, 128)", "[ozaki]") {
  std::mt19937 random(20261131);
  std::vector<float> values = {FLT_MAX, FLT_MIN, 0x1p-149f, 0x1.fffffep-127f, 1.0f, 127.0f, 128.0f, 0x1.fffffep6f};
  for (int i = 0; i < 100000; ++i) {
    uint32_t bits = static_cast<uint32_t>(random()) & 0x7fffffffu;
    float x = 0;
    memcpy(&x, &bits, sizeof x);
    if (x != 0.0f && std::isfinite(x)) values.push_back(x);
  }
  for (const float x : values) {
    INFO("x = " << std::hexfloat << x);
    const double scaled = std::ldexp(static_cast<double>(x), code_exponent_of(x));
    CHECK(scaled >= 64.0);
    CHECK(scaled < 128.0);
  }
}

TEST_CASE("ozaki: the scale target keeps every rebuilt element exact", "[ozaki]") {
  for (int count = kMinModuli; count <= kMaxModuli; ++count)
    for (int64_t k : {int64_t{1}, int64_t{16}, int64_t{4096}, kMaxDepth}) {
      const double target = scale_target(count, k);
      if (target == 0.0) continue;
      INFO("moduli " << count << ", k " << k << ", S " << target);
      CHECK(target <= 0x1p52);
      const long double limit = target * (1 + std::ldexp(1.0L, -50)) + 0.5L * std::sqrt(static_cast<long double>(k));
      CHECK(limit * limit < static_cast<long double>(product_of(count)) / 2 * (1 - std::ldexp(1.0L, -20)));
    }
  CHECK(std::log2(scale_target(7, 4096)) > 27.3);  // the scaling loses nothing to powers of two
  // Lines exact at a power of two (integers; and floats whose bits all fit) scale by it; others by S / ||x|| to 29
  // bits.
  const LineFacts integers = facts_of({3.0f, -4.0f, 0.0f}), fractions = facts_of({1.0f, 0x1.fffffep-30f});
  CHECK(!line_scale(facts_of({0.3f, -0.4f}), scale_target(7, 4096)).rounds);
  const LineScale exact = line_scale(integers, scale_target(7, 4096));
  CHECK(!exact.rounds);
  CHECK(std::exp2(std::floor(std::log2(exact.scale))) == exact.scale);
  CHECK(exact.scale * 5.0 <= scale_target(7, 4096));
  const LineScale rounded = line_scale(fractions, scale_target(7, 4096));
  CHECK(rounded.rounds);
  CHECK(rounded.scale * fractions.norm2 <= scale_target(7, 4096));
  CHECK(rounded.scale * fractions.norm2 > scale_target(7, 4096) * (1 - 1e-6));
}

TEST_CASE("ozaki: tiles cover C within the workspace bounds", "[ozaki]") {
  struct Shape {
    int64_t m, n, k, batch;
  };
  const Shape shapes[] = {{1, 1, 1, 1},
                          {16384, 16384, 16384, 1},
                          {65536, 65536, 4096, 1},
                          {9000000, 3, 5, 1},
                          {70000, 8, 40000, 1},
                          {64, 64, 64, 100000},
                          {300, 100000, 131071, 1},
                          {1000, 1000, 1000, 3},
                          {1024, 1024, 1024, 128},
                          {16384, 16384, 4096, 1},
                          {1024, 1024, 1024, 300},
                          {1024, 1024, 1024, 4097},
                          {2048, 2048, 1024, 1},
                          {8192, 8192, 512, 1}};
  // Without the own product (cuBLAS's INT32 sums throughout), and with it on 132 and on 16 multiprocessors.
  const ProductPath paths[] = {{132, false}, {132, true}, {16, true}};
  for (const ProductPath &path : paths)
    for (const Shape &s : shapes)
      for (int count = 1; count <= kMaxModuli; ++count) {  // 1: the codes' tiling, kCodeSets sets of codes
        INFO(s.m << " x " << s.n << " x " << s.k << " x " << s.batch << ", moduli " << count << ", own product "
                 << path.own_ready << " on " << path.processors);
        const Tiling t = choose_tiling(s.m, s.n, s.k, s.batch, count, path);
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
        const size_t sets = count == 1 ? kCodeSets : count;
        CHECK(t.a_residue_bytes == t.batches * sets * t.padded_rows * t.depth);
        CHECK(t.b_residue_bytes == t.batches * sets * t.padded_cols * t.depth);
        // Byte sums only for the moduli's products of the whole problem in one pass, where the INT8 product of
        // exactly that tiling writes them; INT32 sums otherwise.
        const auto whole = [&](const Tiling &x) { return x.batches == s.batch && x.rows == s.m && x.cols == s.n; };
        if (t.byte_sums) {
          CHECK((count != 1 && count <= kSpeculatedModuli));
          CHECK(whole(t));
          CHECK(residue_bytes_run(t.padded_rows, t.padded_cols, t.depth, t.batches * count, path));
          CHECK(t.product_bytes == t.batches * count * t.padded_rows * residue_pitch(t.padded_cols));
        } else {
          CHECK(t.product_bytes == t.batches * count * t.padded_rows * t.padded_cols * 4);
        }
        if (!path.own_ready) CHECK_FALSE(t.byte_sums);
        CHECK(t.padded_rows < (int64_t{1} << 31));  // the INT8 products' sizes are ints
        CHECK(t.batches * count < (int64_t{1} << 31));
        const WorkspaceLayout layout = workspace_layout(s.m, s.n, s.batch, t);
        CHECK(layout.total <= max_workspace_bytes(s.m, s.n, s.k, s.batch, path.processors, path.own_ready));
        CHECK(layout.a_residues + t.a_residue_bytes <= layout.b_residues);
        CHECK(layout.b_residues + t.b_residue_bytes <= layout.products);
        CHECK(layout.products + t.product_bytes <= layout.total);
        CHECK(layout.needs + static_cast<size_t>(s.m * s.n * s.batch) <= layout.a_residues);
        CHECK(layout.speculation + sizeof(int) <= layout.a_lines);
        // The codes' tiling leaves room before its buffers for the residues of kSpeculatedModuli moduli, where that
        // count's tiling lays them out, wherever both take whole products in one pass (and only there).
        const Tiling speculated = choose_tiling(s.m, s.n, s.k, s.batch, kSpeculatedModuli, path);
        if (count != 1 || !whole(t) || !whole(speculated)) {
          CHECK(t.speculated_bytes == 0);
        } else {
          CHECK(t.speculated_bytes != 0);
          const WorkspaceLayout at = workspace_layout(s.m, s.n, s.batch, speculated);
          CHECK(at.a_residues + t.speculated_bytes == layout.a_residues);
          CHECK(at.a_residues + speculated.a_residue_bytes <= at.b_residues);
          CHECK(at.b_residues + speculated.b_residue_bytes <= layout.a_residues);
          CHECK(speculated.padded_rows == t.padded_rows);
          CHECK(speculated.padded_cols == t.padded_cols);
          CHECK(speculated.depth == t.depth);
          CHECK(scale_target(kSpeculatedModuli, s.k) + 1.0 < 0x1p28);
        }
      }
  // Uniform 16384^3 (7 moduli) with cuBLAS's INT32 sums: B's residues whole, C in four bands of rows. With the own
  // product's byte sums, whole; so are 16384 x 16384 x 4096 and 128 products of 1024^3 (two passes of INT32 sums).
  const ProductPath int32_sums{132, false}, byte_sums{132, true};
  const Tiling big = choose_tiling(16384, 16384, 16384, 1, 7, int32_sums);
  CHECK(big.cols == 16384);
  CHECK(big.rows == 4096);
  CHECK(choose_tiling(16384, 16384, 16384, 1, 7, byte_sums).rows == 16384);
  CHECK(choose_tiling(16384, 16384, 4096, 1, 7, int32_sums).rows == 4096);
  const Tiling wide = choose_tiling(16384, 16384, 4096, 1, 7, byte_sums);
  CHECK((wide.rows == 16384 && wide.cols == 16384 && wide.byte_sums));
  CHECK(choose_tiling(16384, 16384, 4096, 1, 1, byte_sums).speculated_bytes != 0);
  CHECK(choose_tiling(16384, 16384, 4096, 1, 1, int32_sums).speculated_bytes == 0);
  CHECK(choose_tiling(1024, 1024, 1024, 128, 7, int32_sums).batches < 128);
  CHECK(choose_tiling(1024, 1024, 1024, 128, 7, byte_sums).batches == 128);
  // Shallower than kResidueBytesDepth, the own product keeps INT32 sums.
  CHECK_FALSE(choose_tiling(8192, 8192, 512, 1, 7, byte_sums).byte_sums);
  // More batches than one pass of byte sums holds: INT32 sums' tiling, every pass alike.
  CHECK_FALSE(choose_tiling(1024, 1024, 1024, 4097, 7, byte_sums).byte_sums);
  // The workspace: room for both paths where the device may run the own product, for INT32 sums' alone elsewhere.
  // Byte sums only up to kSpeculatedModuli: 128 products of 1024^3 need no more than with INT32 sums (their counts
  // from 8 on would take up to 2 GB more); 16384^3's whole 7 moduli take more.
  const auto most = [](int64_t edge, int64_t batch, const ProductPath &path) {
    size_t bytes = 0;
    for (int count = 1; count <= kMaxModuli; ++count)
      bytes = std::max(bytes,
                       workspace_layout(edge, edge, batch, choose_tiling(edge, edge, edge, batch, count, path)).total);
    return bytes;
  };
  for (const int64_t edge : {int64_t{1024}, int64_t{16384}}) {
    const int64_t batch = edge == 1024 ? 128 : 1;
    INFO(edge << "^3 x " << batch);
    CHECK(max_workspace_bytes(edge, edge, edge, batch, 132, false) == most(edge, batch, int32_sums));
    CHECK(max_workspace_bytes(edge, edge, edge, batch, 132, true) ==
          std::max(most(edge, batch, int32_sums), most(edge, batch, byte_sums)));
  }
  CHECK(most(1024, 128, byte_sums) == most(1024, 128, int32_sums));
  CHECK(most(16384, 1, byte_sums) > most(16384, 1, int32_sums));
  CHECK_FALSE(choose_tiling(1024, 1024, 1024, 128, kSpeculatedModuli + 1, byte_sums).byte_sums);
}

TEST_CASE("ozaki: the plan's chunks of rows give each multiprocessor blocks where C allows, and are cut no further",
          "[ozaki]") {
  // On 132 multiprocessors: 2048 x 2048 gives 128 blocks of 128 rows and 256 of 64, both fewer than two a
  // multiprocessor: 32. 4096 x 4096 gives 512 blocks of 128: kept. A C too small for any fill takes the fewest rows.
  CHECK(plan_chunk_rows(2048, 2048, 1, 132) == 32);
  CHECK(plan_chunk_rows(4096, 4096, 1, 132) == 128);
  CHECK(plan_chunk_rows(4096, 2048, 1, 132) == 64);  // 256 blocks of 128 rows, 512 of 64
  CHECK(plan_chunk_rows(2048, 2048, 4, 132) == 128);
  CHECK(plan_chunk_rows(1, 1, 1, 132) == 32);
  std::mt19937_64 random(47);
  const auto blocks = [](int64_t rows, int64_t cols, int64_t batches, int height) {
    return batches * ((cols + kPlanColumns - 1) / kPlanColumns) * ((rows + height - 1) / height);
  };
  for (int trial = 0; trial < 2000; ++trial) {
    const int64_t rows = 1 + static_cast<int64_t>(random() % 20000), cols = 1 + static_cast<int64_t>(random() % 20000);
    const int64_t batches = 1 + static_cast<int64_t>(random() % 3);
    const int processors = 1 + static_cast<int>(random() % 200);
    INFO(rows << " x " << cols << " x " << batches << " on " << processors);
    const int height = plan_chunk_rows(rows, cols, batches, processors);
    CHECK((height == 32 || height == 64 || height == 128));
    const int64_t fill = static_cast<int64_t>(kPlanFill) * processors;
    // Cut only where the taller chunks fall short, and no further than the fill asks.
    if (height < kPlanMostRows) CHECK(blocks(rows, cols, batches, 2 * height) < fill);
    if (height > kPlanFewestRows) CHECK(blocks(rows, cols, batches, height) >= fill);
  }
}

TEST_CASE("ozaki: powers of two from their bits", "[ozaki]") {
  for (int exponent = -1022; exponent <= 1023; ++exponent) CHECK(power_of_two(exponent) == std::ldexp(1.0, exponent));
}
