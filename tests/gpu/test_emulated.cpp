// SPDX-License-Identifier: Apache-2.0
// FG_MATH_FP32_EMULATED and FG_SGEMM_OZAKI_INT8: the accuracy contract against cuBLAS FP32 on the accuracy
// suite's distributions (small instances, double references), NaN/Inf patterns, reproducibility, the shapes of
// fg_sgemm's contract, graph capture (each replay chooses on the device), and the refusals: in a workspace too
// small, beyond the moduli.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cublas_v2.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu/gemm_harness.hpp"
#include "gpu/probe_support.hpp"

using namespace fgtest;

namespace {

enum class Distribution {
  uniform,           // (-1, 1)
  uniform_positive,  // (0, 1)
  normal,
  lognormal,      // (U - 0.5) exp(phi N(0, 1))
  exponents,      // exponents spread over +-2^16
  scaled_lines,   // rows of A and columns of B scaled by 2^-20 .. 2^20
  near_max,       // A near FLT_MAX
  near_denormal,  // A near and in the denormal range
  beyond_moduli,  // one value near 1 in each row of A and column of B, the rest near 2^-40
};

struct Inputs {
  Distribution distribution = Distribution::uniform;
  double phi = 0;
  std::string name() const {
    static const char *const names[] = {"uniform(-1,1)", "uniform(0,1)",  "normal",
                                        "lognormal",     "exponents+-16", "lines scaled 2^+-20",
                                        "near FLT_MAX",  "near denormal", "isolated values"};
    std::string text = names[static_cast<int>(distribution)];
    if (distribution == Distribution::lognormal) text += " phi " + std::to_string(phi).substr(0, 3);
    return text;
  }
};

// Row-major op(A) (m x k) and op(B) (k x n) of the distribution.
struct Operands {
  int64_t m = 0, n = 0, k = 0;
  std::vector<float> a, b;
};

Operands make_operands(const Inputs &inputs, int64_t m, int64_t n, int64_t k, uint64_t seed) {
  Operands o{m, n, k, std::vector<float>(m * k), std::vector<float>(k * n)};
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> gauss(0.0, 1.0);
  const auto value = [&]() -> double {
    const double u = 2 * unit(random) - 1;
    switch (inputs.distribution) {
      case Distribution::uniform_positive: return unit(random);
      case Distribution::normal: return gauss(random);
      case Distribution::lognormal: return (unit(random) - 0.5) * std::exp(inputs.phi * gauss(random));
      case Distribution::exponents: return std::ldexp(u, static_cast<int>(random() % 33) - 16);
      case Distribution::beyond_moduli: return std::ldexp(u, -40);
      default: return u;
    }
  };
  for (float &x : o.a) x = static_cast<float>(value());
  for (float &x : o.b) x = static_cast<float>(value());
  if (inputs.distribution == Distribution::scaled_lines) {
    for (int64_t i = 0; i < m; ++i) {
      const int e = static_cast<int>(random() % 41) - 20;
      for (int64_t l = 0; l < k; ++l) o.a[i * k + l] = std::ldexp(o.a[i * k + l], e);
    }
    for (int64_t j = 0; j < n; ++j) {
      const int e = static_cast<int>(random() % 41) - 20;
      for (int64_t l = 0; l < k; ++l) o.b[l * n + j] = std::ldexp(o.b[l * n + j], e);
    }
  }
  if (inputs.distribution == Distribution::beyond_moduli) {
    for (int64_t i = 0; i < m; ++i) o.a[i * k + i % k] = static_cast<float>(0.5 + unit(random));
    for (int64_t j = 0; j < n; ++j) o.b[(j * 7 % k) * n + j] = static_cast<float>(0.5 + unit(random));
  }
  if (inputs.distribution == Distribution::near_max) {
    for (float &x : o.a) x = std::ldexp(x, 126);  // up to FLT_MAX / 4
    for (float &x : o.b) x = std::ldexp(x, -40);
  }
  if (inputs.distribution == Distribution::near_denormal) {
    for (float &x : o.a) x = std::ldexp(x, -124);  // |x| < 2^-126 (denormal) for |u| < 1/4
    for (float &x : o.b) x = std::ldexp(x, 100);
  }
  return o;
}

// The exact product R (in double: relative error ~2^-53 sqrt(k), far below FP32's) and |A||B|.
struct Reference {
  std::vector<double> product, magnitude;
  // Nonzeros of each row of A and column of B: the guarantee's t (guarantee_of).
  std::vector<int64_t> row_nonzeros, col_nonzeros;
};

Reference reference_of(const Operands &o) {
  Reference r{std::vector<double>(o.m * o.n, 0.0), std::vector<double>(o.m * o.n, 0.0), std::vector<int64_t>(o.m, 0),
              std::vector<int64_t>(o.n, 0)};
  for (int64_t i = 0; i < o.m; ++i)
    for (int64_t l = 0; l < o.k; ++l) r.row_nonzeros[i] += o.a[i * o.k + l] != 0.0f;
  for (int64_t l = 0; l < o.k; ++l)
    for (int64_t j = 0; j < o.n; ++j) r.col_nonzeros[j] += o.b[l * o.n + j] != 0.0f;
  parallel_for(o.m, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      double *sum = &r.product[i * o.n], *size = &r.magnitude[i * o.n];
      for (int64_t l = 0; l < o.k; ++l) {
        const double x = o.a[i * o.k + l];
        const float *row = &o.b[l * o.n];
        for (int64_t j = 0; j < o.n; ++j) {
          sum[j] += x * row[j];
          size[j] += std::fabs(x * row[j]);
        }
      }
    }
  });
  return r;
}

// The contract's three measures of C against R.
struct Errors {
  double normwise = 0, median = 0, largest = 0;
};

Errors errors_of(const std::vector<float> &c, const Reference &r) {
  double difference = 0, norm = 0;
  std::vector<double> elementwise;
  elementwise.reserve(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    const double d = std::isfinite(c[i]) ? c[i] - r.product[i] : std::numeric_limits<double>::infinity();
    difference += d * d;
    norm += r.product[i] * r.product[i];
    if (r.magnitude[i] > 0) elementwise.push_back(std::fabs(d) / r.magnitude[i]);
  }
  Errors e;
  e.normwise = std::sqrt(difference / norm);
  std::nth_element(elementwise.begin(), elementwise.begin() + elementwise.size() / 2, elementwise.end());
  e.median = elementwise[elementwise.size() / 2];
  e.largest = *std::max_element(elementwise.begin(), elementwise.end());
  return e;
}

// What the last call's emulation did: its moduli count and the elements its certificate sent to FP32.
struct Emulation {
  int moduli = 0;
  int64_t fp32_elements = 0;
};

Emulation emulation_of(fg_handle_t handle) {
  Emulation e;
  REQUIRE_FG_OK(fg_get_last_sgemm_emulation(handle, &e.moduli, &e.fp32_elements));
  return e;
}

// Device copies of the operands and C, with calls through fastgemm and through cuBLAS (FP32 math).
class DeviceProduct {
 public:
  explicit DeviceProduct(const Operands &o)
      : o_(o), a_(o.a.size() * 4), b_(o.b.size() * 4), c_(static_cast<size_t>(o.m * o.n) * 4) {
    upload(a_, o.a);
    upload(b_, o.b);
  }

  void poison() { REQUIRE_CUDA_OK(cudaMemset(c_.get(), 0xff, o_.m * o_.n * 4)); }  // NaN

  fg_status_t run(fg_handle_t handle, float alpha = 1.0f, float beta = 0.0f) {
    return fg_sgemm(handle, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, o_.m, o_.n, o_.k, alpha, a_.as<float>(), o_.k,
                    b_.as<float>(), o_.n, beta, c_.as<float>(), o_.n);
  }

  std::vector<float> cublas_fp32() {
    cublasHandle_t handle = nullptr;
    REQUIRE(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH) == CUBLAS_STATUS_SUCCESS);  // no TF32
    const float one = 1.0f, zero = 0.0f;
    poison();
    // Row-major C = A B is column-major C^T = B^T A^T.
    const cublasStatus_t status =
        cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(o_.n), static_cast<int>(o_.m),
                    static_cast<int>(o_.k), &one, b_.as<float>(), static_cast<int>(o_.n), a_.as<float>(),
                    static_cast<int>(o_.k), &zero, c_.as<float>(), static_cast<int>(o_.n));
    REQUIRE(status == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasDestroy(handle) == CUBLAS_STATUS_SUCCESS);
    return result();
  }

  std::vector<float> result() { return download<float>(c_, o_.m * o_.n); }
  float *c() { return c_.as<float>(); }
  // Other operands of the same shape into the same device memory: what a captured graph reads at its next replay.
  void load(const Operands &o) {
    REQUIRE(o.a.size() == o_.a.size());
    REQUIRE(o.b.size() == o_.b.size());
    upload(a_, o.a);
    upload(b_, o.b);
  }

 private:
  const Operands &o_;
  DeviceMemory a_, b_, c_;
};

fg_sgemm_algo_t last_algo(fg_handle_t handle) {
  fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
  REQUIRE_FG_OK(fg_get_last_sgemm_algo(handle, &ran));
  return ran;
}

std::vector<double> as_double(const std::vector<float> &values) { return {values.begin(), values.end()}; }

bool all_nan(const std::vector<float> &values) {
  return std::all_of(values.begin(), values.end(), [](float x) { return std::isnan(x); });
}

void check_contract(const Errors &got, const Errors &fp32) {
  CHECK(got.normwise <= fp32.normwise);
  CHECK(got.median <= fp32.median);
  CHECK(got.largest <= 2 * fp32.largest);
}

const Inputs kSuite[] = {
    {Distribution::uniform, 0},     {Distribution::uniform_positive, 0}, {Distribution::normal, 0},
    {Distribution::lognormal, 0.5}, {Distribution::lognormal, 1},        {Distribution::lognormal, 2},
    {Distribution::lognormal, 4},   {Distribution::exponents, 0},        {Distribution::scaled_lines, 0},
    {Distribution::near_max, 0},    {Distribution::near_denormal, 0},
};

// The suite's distributions where the operands' range is within the moduli's: the emulation must run them.
bool must_run(const Inputs &inputs) { return !(inputs.distribution == Distribution::lognormal && inputs.phi >= 2); }

}  // namespace

TEST_CASE("emulated: the accuracy contract against cuBLAS FP32 on every distribution of the suite",
          "[emulated][emulated-accuracy]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
  struct Size {
    int64_t m, n, k;
  };
  const Size sizes[] = {{256, 256, 256}, {192, 320, 4096}, {512, 512, 1024}};
  uint64_t seed = 1000;
  for (const Inputs &inputs : kSuite)
    for (const Size &size : sizes) {
      const Operands o = make_operands(inputs, size.m, size.n, size.k, seed++);
      INFO(inputs.name() << ", " << size.m << " x " << size.n << " x " << size.k);
      const Reference reference = reference_of(o);
      DeviceProduct product(o);
      const Errors fp32 = errors_of(product.cublas_fp32(), reference);
      for (fg_sgemm_algo_t algo : {FG_SGEMM_OZAKI_INT8, FG_SGEMM_AUTO}) {
        INFO("algorithm " << fg_sgemm_algo_name(algo));
        REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), algo));
        product.poison();
        const fg_status_t status = product.run(handle.get());
        const std::string message = fg_last_error_message();
        INFO(fg_status_name(status) << ": " << message);
        if (status == FG_STATUS_NOT_SUPPORTED && algo == FG_SGEMM_OZAKI_INT8 && !must_run(inputs)) {
          CHECK(message.find("moduli") != std::string::npos);
          CHECK(all_nan(product.result()));  // nothing written
          std::printf("emulated accuracy: %-20s %4lld x %4lld x %5lld  declined\n", inputs.name().c_str(),
                      static_cast<long long>(o.m), static_cast<long long>(o.n), static_cast<long long>(o.k));
          continue;
        }
        REQUIRE(status == FG_STATUS_SUCCESS);
        const Errors got = errors_of(product.result(), reference);
        if (last_algo(handle.get()) == FG_SGEMM_OZAKI_INT8) {
          check_contract(got, fp32);
        } else {  // AUTO chose an FP32 algorithm: FP32's accuracy
          CHECK(algo == FG_SGEMM_AUTO);
          CHECK(relative_error(product.result(), reference.product) <= gemm_tolerance(o.k));
        }
        if (algo == FG_SGEMM_OZAKI_INT8) {
          const Emulation e = emulation_of(handle.get());
          std::printf(
              "emulated accuracy: %-20s %4lld x %4lld x %5lld  moduli %2d, FP32 %6lld  normwise %.2e (fp32 %.2e)  "
              "median %.2e (%.2e)  largest %.2e (%.2e)\n",
              inputs.name().c_str(), static_cast<long long>(o.m), static_cast<long long>(o.n),
              static_cast<long long>(o.k), e.moduli, static_cast<long long>(e.fp32_elements), got.normwise,
              fp32.normwise, got.median, fp32.median, got.largest, fp32.largest);
        }
      }
    }
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_AUTO));
}

TEST_CASE("emulated: AUTO runs the INT8 emulation on large products in FG_MATH_FP32_EMULATED only",
          "[emulated][emulated-large]") {
  Handle handle;
  uint64_t seed = 2000;
  for (const Inputs &inputs : {Inputs{Distribution::uniform, 0}, Inputs{Distribution::exponents, 0}}) {
    INFO(inputs.name());
    const Operands o = make_operands(inputs, 1024, 2048, 8192, seed++);
    const Reference reference = reference_of(o);
    DeviceProduct product(o);
    const Errors fp32 = errors_of(product.cublas_fp32(), reference);
    REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
    product.poison();
    REQUIRE_FG_OK(product.run(handle.get()));
    CHECK(last_algo(handle.get()) == FG_SGEMM_OZAKI_INT8);
    const Errors got = errors_of(product.result(), reference);
    check_contract(got, fp32);
    std::printf(
        "emulated AUTO: %s 1024 x 2048 x 8192  normwise %.2e (fp32 %.2e)  median %.2e (%.2e)  largest %.2e "
        "(%.2e)\n",
        inputs.name().c_str(), got.normwise, fp32.normwise, got.median, fp32.median, got.largest, fp32.largest);
    // Bitwise the same on a second call.
    const std::vector<float> first = product.result();
    product.poison();
    REQUIRE_FG_OK(product.run(handle.get()));
    CHECK(std::memcmp(first.data(), product.result().data(), first.size() * 4) == 0);
    CHECK(emulation_of(handle.get()).moduli >= 7);
    // FG_MATH_FP32: never the emulation, and the report says so.
    REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32));
    product.poison();
    REQUIRE_FG_OK(product.run(handle.get()));
    CHECK(last_algo(handle.get()) != FG_SGEMM_OZAKI_INT8);
    CHECK(emulation_of(handle.get()).moduli == 0);
    int moduli = 0;
    CHECK(fg_get_last_sgemm_emulation(handle.get(), &moduli, nullptr) == FG_STATUS_INVALID_VALUE);
  }
}

TEST_CASE("emulated: operands beyond the moduli's range are declined when forced and run in FP32 by AUTO",
          "[emulated][emulated-large]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
  const Operands o = make_operands(Inputs{Distribution::beyond_moduli, 0}, 1024, 2048, 8192, 3000);
  DeviceProduct product(o);
  const std::vector<double> fp32 = as_double(product.cublas_fp32());
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_OZAKI_INT8));
  product.poison();
  CHECK(product.run(handle.get()) == FG_STATUS_NOT_SUPPORTED);
  CHECK(std::string(fg_last_error_message()).find("moduli") != std::string::npos);
  CHECK(all_nan(product.result()));
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_AUTO));
  product.poison();
  REQUIRE_FG_OK(product.run(handle.get()));
  CHECK(last_algo(handle.get()) == FG_SGEMM_CUBLAS);
  CHECK(relative_error(product.result(), fp32) <= gemm_tolerance(o.k));
}

TEST_CASE("emulated: NaN and Inf give FP32's pattern; many of them decline", "[emulated]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
  const int64_t m = 300, n = 260, k = 100;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  struct Case {
    const char *what;
    std::vector<std::pair<int64_t, float>> in_a, in_b;  // (index, value)
    float alpha, beta;
  };
  const Case cases[] = {
      {"NaN in A", {{7 * k + 3, nan}}, {}, 1.0f, 0.0f},
      {"Inf in B", {}, {{5 * n + 11, inf}}, 1.0f, 0.0f},
      {"Inf in A meets -Inf in B and a zero",
       {{2 * k + 4, inf}, {9 * k + 50, -inf}},
       {{4 * n + 9, -inf}, {50 * n + 1, 0}},
       -0.5f,
       2.25f},
      {"Inf in A and B, same sign", {{100 * k, inf}}, {{0, inf}, {n * (k - 1) + 7, nan}}, 1.0f, 1.0f},
  };
  for (const Case &cs : cases) {
    INFO(cs.what);
    Operands o = make_operands(Inputs{Distribution::uniform, 0}, m, n, k, 4000);
    for (const auto &entry : cs.in_a) o.a[entry.first] = entry.second;
    for (const auto &entry : cs.in_b) o.b[entry.first] = entry.second;
    std::vector<float> c0(m * n);
    fill_uniform(c0, 4001);
    // FP32 reference: FMA in k order, then alpha and beta as FP32 arithmetic.
    std::vector<float> expected(m * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float sum = 0.0f;
        for (int64_t l = 0; l < k; ++l) sum = std::fma(o.a[i * k + l], o.b[l * n + j], sum);
        expected[i * n + j] = cs.beta == 0.0f ? cs.alpha * sum : std::fma(cs.beta, c0[i * n + j], cs.alpha * sum);
      }
    DeviceProduct product(o);
    for (fg_sgemm_algo_t algo : {FG_SGEMM_OZAKI_INT8, FG_SGEMM_AUTO}) {
      INFO("algorithm " << fg_sgemm_algo_name(algo));
      REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), algo));
      std::vector<float> c = c0;
      REQUIRE_CUDA_OK(cudaMemcpy(product.c(), c.data(), c.size() * 4, cudaMemcpyHostToDevice));
      REQUIRE_FG_OK(product.run(handle.get(), cs.alpha, cs.beta));
      const std::vector<float> got = product.result();
      int64_t mismatches = 0, nonfinite = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        const float e = expected[i];
        nonfinite += std::isfinite(e) ? 0 : 1;
        const bool same = std::isnan(e) ? std::isnan(got[i])
                          : std::isinf(e)
                              ? got[i] == e
                              : std::isfinite(got[i]) && std::fabs(got[i] - e) <= 1e-5f * (1 + std::fabs(e));
        mismatches += same ? 0 : 1;
      }
      CHECK(nonfinite > 0);
      CHECK(mismatches == 0);
    }
  }
  // NaN in a quarter of A's rows of a larger product: too many for the fix-up. Forced: declined, nothing
  // written; AUTO: FP32.
  const int64_t big = 1024, depth = 512;
  Operands o = make_operands(Inputs{Distribution::uniform, 0}, big, big, depth, 4002);
  for (int64_t i = 0; i < big; i += 4) o.a[i * depth + i % depth] = nan;
  DeviceProduct product(o);
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_OZAKI_INT8));
  REQUIRE_CUDA_OK(cudaMemset(product.c(), 0x7f, big * big * 4));  // 3.4e38 everywhere: finite, so a write shows
  CHECK(product.run(handle.get()) == FG_STATUS_NOT_SUPPORTED);
  CHECK(std::string(fg_last_error_message()).find("NaN or Inf") != std::string::npos);
  const std::vector<float> untouched = product.result();
  CHECK(std::all_of(untouched.begin(), untouched.end(), [](float x) { return x > 3e38f; }));
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_AUTO));
  REQUIRE_FG_OK(product.run(handle.get()));
  const std::vector<float> got = product.result();
  for (int64_t i = 0; i < big; ++i) CHECK(std::isnan(got[i * big + 1]) == (i % 4 == 0));
}

TEST_CASE("emulated: bitwise the same C from run to run", "[emulated]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_OZAKI_INT8));
  for (const Inputs &inputs : {Inputs{Distribution::normal, 0}, Inputs{Distribution::lognormal, 1}}) {
    const Operands o = make_operands(inputs, 384, 640, 1500, 5000);
    DeviceProduct product(o);
    product.poison();
    REQUIRE_FG_OK(product.run(handle.get(), 1.5f));
    const std::vector<float> first = product.result();
    for (int run = 0; run < 2; ++run) {
      product.poison();
      REQUIRE_FG_OK(product.run(handle.get(), 1.5f));
      CHECK(std::memcmp(first.data(), product.result().data(), first.size() * 4) == 0);
    }
  }
}

TEST_CASE("emulated: every layout, transpose, alpha and beta, batch and alignment", "[emulated]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
  const std::vector<fg_sgemm_algo_t> algos{FG_SGEMM_OZAKI_INT8, FG_SGEMM_AUTO};
  const float scalars[][2] = {{1.0f, 0.0f}, {-0.5f, 2.25f}, {2.25f, 1.0f}, {1.0f, -0.5f}};
  uint64_t seed = 6000;
  for (fg_layout_t layout : {FG_ROW_MAJOR, FG_COL_MAJOR})
    for (fg_op_t transa : {FG_OP_N, FG_OP_T})
      for (fg_op_t transb : {FG_OP_N, FG_OP_T}) {
        GemmCase gc;
        gc.layout = layout, gc.transa = transa, gc.transb = transb;
        gc.m = 97, gc.n = 131, gc.k = 203;
        gc.alpha = scalars[seed % 4][0], gc.beta = scalars[seed % 4][1];
        check_gemm_case(handle.get(), algos, gc, seed++);
        GemmCase padded = gc;  // leading dimensions above the minimum, pointers off by one float
        const GemmCase minimal = gc.resolved();
        padded.lda = minimal.lda + 3, padded.ldb = minimal.ldb + 1, padded.ldc = minimal.ldc + 5;
        padded.offset_a = 1, padded.offset_b = 3, padded.offset_c = 1;
        check_gemm_case(handle.get(), algos, padded, seed++);
        GemmCase batched = gc;  // batches, then A broadcast (stride 0) with beta == 0 over NaN
        batched.m = 45, batched.n = 38, batched.k = 70, batched.batch = 4;
        check_gemm_case(handle.get(), algos, batched, seed++);
        batched.stride_a = 0, batched.beta = 0.0f;
        check_gemm_case(handle.get(), algos, batched, seed++);
      }
  GemmCase tiny;  // one element, depth 1
  check_gemm_case(handle.get(), algos, tiny, seed++);
  GemmCase tall;  // one column, many rows
  tall.m = 5000, tall.n = 1, tall.k = 33, tall.beta = 0.5f;
  check_gemm_case(handle.get(), algos, tall, seed++);
}

TEST_CASE("emulated: a caller's workspace too small: forced NOT_SUPPORTED naming the bytes, AUTO falls back",
          "[emulated][emulated-large]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
  const Operands o = make_operands(Inputs{Distribution::uniform, 0}, 1024, 2048, 8192, 8000);
  DeviceProduct product(o);
  const std::vector<double> fp32 = as_double(product.cublas_fp32());
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_OZAKI_INT8));
  size_t needed = 0;
  REQUIRE_FG_OK(fg_sgemm_workspace_size(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, o.m, o.n, o.k, 1, &needed));
  REQUIRE(needed > 0);
  DeviceMemory workspace(needed);
  // Enough: the emulation runs in it.
  REQUIRE_FG_OK(fg_set_workspace(handle.get(), workspace.get(), needed));
  product.poison();
  REQUIRE_FG_OK(product.run(handle.get()));
  CHECK(relative_error(product.result(), fp32) <= gemm_tolerance(o.k));
  // One byte short.
  REQUIRE_FG_OK(fg_set_workspace(handle.get(), workspace.get(), needed - 256));
  product.poison();
  CHECK(product.run(handle.get()) == FG_STATUS_NOT_SUPPORTED);
  CHECK(std::string(fg_last_error_message()).find(std::to_string(needed) + " bytes") != std::string::npos);
  CHECK(all_nan(product.result()));
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_AUTO));
  product.poison();
  REQUIRE_FG_OK(product.run(handle.get()));
  CHECK(last_algo(handle.get()) != FG_SGEMM_OZAKI_INT8);
  CHECK(relative_error(product.result(), fp32) <= gemm_tolerance(o.k));
  REQUIRE_FG_OK(fg_set_workspace(handle.get(), nullptr, 0));
}

TEST_CASE("emulated: k past the INT32 sums' exact range is NOT_SUPPORTED naming k", "[emulated]") {
  Handle handle;
  const int64_t k = 131072;
  DeviceMemory a(k * 4), b(k * 4), c(4);
  REQUIRE_CUDA_OK(cudaMemset(a.get(), 0, k * 4));
  REQUIRE_CUDA_OK(cudaMemset(b.get(), 0, k * 4));
  REQUIRE_CUDA_OK(cudaMemset(c.get(), 0xff, 4));
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_OZAKI_INT8));
  CHECK(fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 1, 1, k, 1.0f, a.as<float>(), k, b.as<float>(), 1, 0.0f,
                 c.as<float>(), 1) == FG_STATUS_NOT_SUPPORTED);
  CHECK(std::string(fg_last_error_message()).find("k = 131072") != std::string::npos);
  CHECK(std::isnan(download<float>(c, 1)[0]));
}

namespace {

enum class Hard { inner, outlier, sparse, binary, counts, integers, cancel };

struct HardCase {
  Hard family;
  int parameter;  // inner: the exponents' spread; outlier: its size; sparse: nonzeros per 1000
  const char *name;
};

// Operands that defeat a scaling by each line alone: magnitude varying along k (A D times D^-1 B), an outlier
// column of A against a zero row of B, sparse operands stored dense, integers (exact in FP32), and columns
// that cancel in pairs.
Operands make_hard(const HardCase &hc, int64_t m, int64_t n, int64_t k, uint64_t seed) {
  Operands o{m, n, k, std::vector<float>(m * k), std::vector<float>(k * n)};
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<int> scale(k, 0);
  for (int64_t l = 0; l < k; ++l) scale[l] = static_cast<int>(random() % (2 * hc.parameter + 1)) - hc.parameter;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t l = 0; l < k; ++l) {
      float &x = o.a[i * k + l];
      switch (hc.family) {
        case Hard::inner: x = std::ldexp(uniform(random), scale[l]); break;
        case Hard::outlier: x = l == 3 ? std::ldexp(uniform(random), hc.parameter) : uniform(random); break;
        case Hard::sparse: x = static_cast<int>(random() % 1000) < hc.parameter ? uniform(random) : 0.0f; break;
        case Hard::binary: x = static_cast<float>(random() % 2); break;
        case Hard::counts: x = static_cast<float>(random() % 6); break;
        case Hard::integers: x = static_cast<float>(random() % 2048); break;
        case Hard::cancel: x = l % 2 == 1 ? o.a[i * k + l - 1] : uniform(random); break;
      }
    }
  for (int64_t l = 0; l < k; ++l)
    for (int64_t j = 0; j < n; ++j) {
      float &y = o.b[l * n + j];
      switch (hc.family) {
        case Hard::inner: y = std::ldexp(uniform(random), -scale[l]); break;
        case Hard::outlier: y = l == 3 ? 0.0f : uniform(random); break;
        case Hard::sparse: y = static_cast<int>(random() % 1000) < hc.parameter ? uniform(random) : 0.0f; break;
        case Hard::binary:
        case Hard::integers: y = static_cast<float>(random() % 2); break;
        case Hard::counts: y = static_cast<float>(random() % 4); break;
        case Hard::cancel:
          y = l % 2 == 1 ? -o.b[(l - 1) * n + j] * (1.0f + std::ldexp(uniform(random), -12)) : uniform(random);
          break;
      }
    }
  return o;
}

// A reference with every element scaled by alpha.
Reference scaled(const Reference &r, double alpha) {
  Reference s = r;
  for (double &x : s.product) x *= alpha;
  for (double &x : s.magnitude) x *= std::fabs(alpha);
  return s;
}

// Elements of C beyond the guarantee |C - R| <= 2^-24 (1 + sqrt(t)) |A||B|, t = min(k, nonzeros of the row of A, of
// the column of B) at least 1 (the double reference's own error, below k 2^-53 |A||B|, allowed on top), and the
// largest |C - R| / (|A||B|) in units of 2^-24 sqrt(t).
struct Guarantee {
  int64_t beyond = 0;
  double worst = 0;
};

Guarantee guarantee_of(const std::vector<float> &c, const Reference &r, int64_t k) {
  Guarantee g;
  const int64_t n = static_cast<int64_t>(r.col_nonzeros.size());
  for (size_t i = 0; i < c.size(); ++i) {
    const int64_t row = static_cast<int64_t>(i) / n, col = static_cast<int64_t>(i) % n;
    const int64_t terms = std::max<int64_t>(1, std::min({k, r.row_nonzeros[row], r.col_nonzeros[col]}));
    const double unit = std::ldexp(std::sqrt(static_cast<double>(terms)), -24);
    const double allowed = std::ldexp(1.0, -24) + unit + std::ldexp(double(k), -52);
    const double error = std::fabs(static_cast<double>(c[i]) - r.product[i]);
    if (!(error <= allowed * r.magnitude[i])) ++g.beyond;
    if (r.magnitude[i] > 0) g.worst = std::max(g.worst, error / (r.magnitude[i] * unit));
  }
  return g;
}

// One call of `o` through fastgemm over C poisoned with NaN: the double reference, C, and C against the guarantee.
struct PoisonedRun {
  Reference reference;
  std::vector<float> c;
  Guarantee got;
};
PoisonedRun run_over_poison(fg_handle_t handle, const Operands &o) {
  PoisonedRun run;
  run.reference = reference_of(o);
  DeviceProduct product(o);
  product.poison();
  REQUIRE_FG_OK(product.run(handle));
  run.c = product.result();
  run.got = guarantee_of(run.c, run.reference, o.k);
  return run;
}

bool is_integer_family(Hard family) {
  return family == Hard::binary || family == Hard::counts || family == Hard::integers;
}

}  // namespace

TEST_CASE("emulated: an element whose float overflows is FP32's; the others keep the guarantee", "[emulated]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
  const int64_t m = 200, n = 180, k = 300;
  // Row 3 of A about 2^120 and column 5 of B about 2^10, all positive: their element is near k 2^129, past FLT_MAX,
  // while every other element stays finite. The certificate passes it (nothing cancels); its float overflows.
  Operands o = make_operands(Inputs{Distribution::uniform, 0}, m, n, k, 4100);
  for (int64_t l = 0; l < k; ++l) {
    o.a[3 * k + l] = std::ldexp(0.5f + 0.5f * std::fabs(o.a[3 * k + l]), 120);
    o.b[l * n + 5] = std::ldexp(0.5f + 0.5f * std::fabs(o.b[l * n + 5]), 10);
  }
  const Reference reference = reference_of(o);
  REQUIRE(reference.product[3 * n + 5] > std::ldexp(1.0, 128));
  DeviceProduct product(o);
  for (fg_sgemm_algo_t algo : {FG_SGEMM_OZAKI_INT8, FG_SGEMM_AUTO}) {
    INFO("algorithm " << fg_sgemm_algo_name(algo));
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), algo));
    product.poison();
    REQUIRE_FG_OK(product.run(handle.get()));
    std::vector<float> c = product.result();
    CHECK(c[3 * n + 5] == std::numeric_limits<float>::infinity());  // FP32's sum overflows too
    c[3 * n + 5] = 0.0f;                                            // the others against the guarantee
    Reference others = reference;
    others.product[3 * n + 5] = 0.0;
    CHECK(guarantee_of(c, others, k).beyond == 0);
  }
}

TEST_CASE("emulated: the per-element guarantee on operands that defeat a scaling by lines; integers exact",
          "[emulated][emulated-certificate]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_OZAKI_INT8));
  const HardCase cases[] = {{Hard::inner, 10, "inner 2^+-10"}, {Hard::inner, 20, "inner 2^+-20"},
                            {Hard::inner, 40, "inner 2^+-40"}, {Hard::outlier, 30, "outlier 2^30"},
                            {Hard::sparse, 10, "sparse 1%"},   {Hard::sparse, 1, "sparse 0.1%"},
                            {Hard::binary, 0, "0/1"},          {Hard::counts, 0, "counts"},
                            {Hard::integers, 0, "up to 2^11"}, {Hard::cancel, 0, "cancelling pairs"}};
  struct Size {
    int64_t m, n, k;
  };
  uint64_t seed = 9000;
  for (const HardCase &hc : cases)
    for (const Size &size : {Size{256, 256, 1024}, Size{96, 160, 4096}}) {
      INFO(hc.name << ", " << size.m << " x " << size.n << " x " << size.k);
      const Operands o = make_hard(hc, size.m, size.n, size.k, seed++);
      const Reference reference = reference_of(o);
      DeviceProduct product(o);
      const Guarantee fp32 = guarantee_of(product.cublas_fp32(), reference, o.k);
      product.poison();
      const fg_status_t status = product.run(handle.get());
      INFO(fg_status_name(status) << ": " << fg_last_error_message());
      if (status == FG_STATUS_NOT_SUPPORTED) {  // declined: FP32 throughout is faster; nothing written
        CHECK(!is_integer_family(hc.family));
        CHECK(all_nan(product.result()));
        std::printf("emulated certificate: %-18s %4lld x %4lld x %5lld  declined (%s)\n", hc.name,
                    static_cast<long long>(o.m), static_cast<long long>(o.n), static_cast<long long>(o.k),
                    fg_last_error_message());
        continue;
      }
      REQUIRE(status == FG_STATUS_SUCCESS);
      const std::vector<float> c = product.result();
      const Guarantee got = guarantee_of(c, reference, o.k);
      const Emulation e = emulation_of(handle.get());
      CHECK(e.moduli >= 2);
      CHECK(got.beyond == 0);
      if (is_integer_family(hc.family)) {
        int64_t inexact = 0;
        for (size_t i = 0; i < c.size(); ++i) inexact += static_cast<double>(c[i]) != reference.product[i];
        CHECK(inexact == 0);
      }
      std::printf(
          "emulated certificate: %-18s %4lld x %4lld x %5lld  moduli %2d, FP32 %6lld of %lld; beyond the guarantee "
          "%lld (cuBLAS %lld); worst %.3f (cuBLAS %.3f) x 2^-24 sqrt(t) |A||B|\n",
          hc.name, static_cast<long long>(o.m), static_cast<long long>(o.n), static_cast<long long>(o.k), e.moduli,
          static_cast<long long>(e.fp32_elements), static_cast<long long>(o.m * o.n),
          static_cast<long long>(got.beyond), static_cast<long long>(fp32.beyond), got.worst, fp32.worst);
    }
}

TEST_CASE("emulated: AUTO on large integer operands is exact, and on inner-scaled ones FP32's",
          "[emulated][emulated-large][emulated-certificate]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
  for (const HardCase &hc : {HardCase{Hard::binary, 0, "0/1"}, HardCase{Hard::inner, 20, "inner 2^+-20"}}) {
    INFO(hc.name);
    // 0/1 at 2048 x 2048 x 16384: products the own INT8 product takes on Hopper, deep enough for its residues in
    // bytes.
    const int64_t rows = hc.family == Hard::binary ? 2048 : 1024, depth = hc.family == Hard::binary ? 16384 : 8192;
    const Operands o = make_hard(hc, rows, 2048, depth, 9500);
    const PoisonedRun run = run_over_poison(handle.get(), o);
    const Reference &reference = run.reference;
    const std::vector<float> &c = run.c;
    const Guarantee &got = run.got;
    if (hc.family == Hard::binary) {
      CHECK(got.beyond == 0);
      CHECK(last_algo(handle.get()) == FG_SGEMM_OZAKI_INT8);
      int64_t inexact = 0;
      for (size_t i = 0; i < c.size(); ++i) inexact += static_cast<double>(c[i]) != reference.product[i];
      CHECK(inexact == 0);
    } else {
      CHECK(last_algo(handle.get()) != FG_SGEMM_OZAKI_INT8);  // the certificate declined: FP32 throughout
      CHECK(relative_error(c, reference.product) <= gemm_tolerance(o.k));
    }
    const Emulation e = emulation_of(handle.get());
    std::printf("emulated certificate, AUTO: %-14s %lld x 2048 x %lld  ran %s, moduli %d, FP32 %lld; worst %.3f\n",
                hc.name, static_cast<long long>(rows), static_cast<long long>(depth),
                fg_sgemm_algo_name(last_algo(handle.get())), e.moduli, static_cast<long long>(e.fp32_elements),
                got.worst);
  }
}

TEST_CASE("emulated: the plan's codes at half depth: the guarantee where they are taken and where pairs defeat them",
          "[emulated][emulated-large][emulated-certificate]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_OZAKI_INT8));
  // 1024 x 2048 x 16384: a codes' product the own INT8 product takes on Hopper, whose half-depth set uniform and
  // normal operands choose; pairs of a large and a tiny element (x_2m+1 = x_2m 2^-20 in size) keep the full depth.
  // Either way, every element within the guarantee against the double reference, and uniform operands at the
  // moduli count and with no element in FP32, as at full depth. Then a batch, a transposed A and an odd depth.
  for (const int kind : {0, 1, 2, 3}) {
    const char *const names[] = {"uniform", "normal", "pairs 1 : 2^-20", "every 4th row 0"};
    INFO(names[kind]);
    Operands o = make_operands(Inputs{kind == 1 ? Distribution::normal : Distribution::uniform, 0}, 1024, 2048, 16384,
                               9600 + kind);
    if (kind == 2) {
      for (int64_t i = 0; i < o.m; ++i)
        for (int64_t l = 1; l < o.k; l += 2) o.a[i * o.k + l] = std::ldexp(o.a[i * o.k + l], -20);
      for (int64_t l = 1; l < o.k; l += 2)
        for (int64_t j = 0; j < o.n; ++j) o.b[l * o.n + j] = std::ldexp(o.b[l * o.n + j], -20);
    }
    if (kind == 3)  // rows of zeros: certified without a product (every term 0), none sent to FP32
      for (int64_t i = 0; i < o.m; i += 4) std::fill(o.a.begin() + i * o.k, o.a.begin() + (i + 1) * o.k, 0.0f);
    const PoisonedRun run = run_over_poison(handle.get(), o);
    const Reference &reference = run.reference;
    const std::vector<float> &c = run.c;
    const Guarantee &got = run.got;
    const Emulation e = emulation_of(handle.get());
    CHECK(got.beyond == 0);
    if (kind == 0 || kind == 3) {
      CHECK(e.moduli <= 7);
      CHECK(e.fp32_elements == 0);
    }
    if (kind == 3) {
      int64_t nonzero = 0;
      for (int64_t i = 0; i < o.m; i += 4)
        for (int64_t j = 0; j < o.n; ++j) nonzero += c[i * o.n + j] != 0.0f;
      CHECK(nonzero == 0);
    }
    std::printf("emulated, codes at half depth: %-16s 1024 x 2048 x 16384  moduli %d, FP32 %lld; worst %.3f\n",
                names[kind], e.moduli, static_cast<long long>(e.fp32_elements), got.worst);
  }
  // A batch of two, op(A) = A^T (rows of op(A) strided, as B's columns), odd k (the last pair padded with a zero),
  // beta != 0 over C0: both products within the guarantee.
  const int64_t m = 1024, n = 2048, k = 16383, batch = 2;
  const Operands first = make_operands(Inputs{Distribution::uniform, 0}, m, n, k, 9610),
                 second = make_operands(Inputs{Distribution::uniform, 0}, m, n, k, 9611);
  const float alpha = 0.75f, beta = -1.5f;
  std::vector<float> a_t(static_cast<size_t>(batch * k * m)), b(static_cast<size_t>(batch * k * n)),
      c0(static_cast<size_t>(batch * m * n));
  fill_uniform(c0, 9612);
  for (int64_t p = 0; p < batch; ++p) {
    const Operands &o = p == 0 ? first : second;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t l = 0; l < k; ++l) a_t[p * k * m + l * m + i] = o.a[i * k + l];
    std::copy(o.b.begin(), o.b.end(), b.begin() + p * k * n);
  }
  DeviceMemory da(a_t.size() * 4), db(b.size() * 4), dc(c0.size() * 4);
  upload(da, a_t);
  upload(db, b);
  upload(dc, c0);
  REQUIRE_FG_OK(fg_sgemm_strided_batched(handle.get(), FG_ROW_MAJOR, FG_OP_T, FG_OP_N, m, n, k, alpha, da.as<float>(),
                                         m, k * m, db.as<float>(), n, k * n, beta, dc.as<float>(), n, m * n, batch));
  REQUIRE_CUDA_OK(cudaDeviceSynchronize());
  const std::vector<float> c = download<float>(dc, c0.size());
  for (int64_t p = 0; p < batch; ++p) {
    INFO("batch " << p << " of 2, A transposed, k " << k);
    Reference expected = scaled(reference_of(p == 0 ? first : second), alpha);
    for (int64_t e = 0; e < m * n; ++e) {
      const double before = static_cast<double>(beta) * c0[p * m * n + e];
      expected.product[e] += before;
      expected.magnitude[e] += std::fabs(before);
    }
    const std::vector<float> slice(c.begin() + p * m * n, c.begin() + (p + 1) * m * n);
    CHECK(guarantee_of(slice, expected, k).beyond == 0);
  }
  const Emulation e = emulation_of(handle.get());
  CHECK(e.moduli <= 7);
  CHECK(e.fp32_elements == 0);
}

namespace {

// A handle in the emulated mode on a non-blocking stream of its own, both given back at the end.
struct EmulatedOnStream {
  Handle handle;
  cudaStream_t stream = nullptr;
  EmulatedOnStream() {
    REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
    REQUIRE_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    REQUIRE_FG_OK(fg_set_stream(handle.get(), stream));
  }
  ~EmulatedOnStream() {
    (void)fg_set_stream(handle.get(), nullptr);
    (void)cudaStreamDestroy(stream);
  }
  EmulatedOnStream(const EmulatedOnStream &) = delete;
  EmulatedOnStream &operator=(const EmulatedOnStream &) = delete;
};

// One replay over C poisoned with NaN; C after it.
std::vector<float> replay(cudaGraphExec_t exec, DeviceProduct &product, cudaStream_t stream) {
  product.poison();
  REQUIRE_CUDA_OK(cudaGraphLaunch(exec, stream));
  REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
  return product.result();
}

int64_t inexact_elements(const std::vector<float> &c, const Reference &r) {
  int64_t inexact = 0;
  for (size_t i = 0; i < c.size(); ++i) inexact += static_cast<double>(c[i]) != r.product[i];
  return inexact;
}

bool same_bits(const std::vector<float> &x, const std::vector<float> &y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("emulated: a captured call runs the emulation, and each replay chooses for its own operands",
          "[emulated][emulated-large][graph]") {
  EmulatedOnStream on;
  Handle &handle = on.handle;
  const cudaStream_t stream = on.stream;

  SECTION("AUTO on a large product: the replay's bits are the direct call's; integers exact") {
    const Operands uniform = make_operands(Inputs{Distribution::uniform, 0}, 1024, 2048, 8192, 7000);
    const Operands binary = make_hard(HardCase{Hard::binary, 0, "0/1"}, 1024, 2048, 8192, 7001);
    const Reference binary_reference = reference_of(binary);
    DeviceProduct product(uniform);
    product.poison();
    REQUIRE_FG_OK(product.run(handle.get()));  // outside a capture, for the bits to compare with
    CHECK(last_algo(handle.get()) == FG_SGEMM_OZAKI_INT8);
    REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
    const std::vector<float> direct = product.result();
    cudaGraphExec_t exec = capture_call(stream, [&] { return product.run(handle.get()); });
    CHECK(last_algo(handle.get()) == FG_SGEMM_OZAKI_INT8);
    CHECK(emulation_of(handle.get()).moduli == 0);  // a replay's choice is the device's: none to report at capture
    for (int round = 0; round < 2; ++round) {
      product.load(uniform);
      CHECK(same_bits(replay(exec, product, stream), direct));
      product.load(binary);
      CHECK(inexact_elements(replay(exec, product, stream), binary_reference) == 0);
    }
    REQUIRE_CUDA_OK(cudaGraphExecDestroy(exec));
  }

  SECTION("forced: emulated, declined to FP32 and NaN rows fixed up, as each replay's operands ask") {
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_OZAKI_INT8));
    const int64_t m = 256, n = 320, k = 1024;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const Operands uniform = make_operands(Inputs{Distribution::uniform, 0}, m, n, k, 7100);
    Operands few_nan = uniform, many_nan = uniform;
    for (int64_t i : {3, 100, 255}) few_nan.a[i * k + 17] = nan;
    for (int64_t i = 0; i < m; i += 2) many_nan.a[i * k + i % k] = nan;
    const Operands inner = make_hard(HardCase{Hard::inner, 40, "inner 2^+-40"}, m, n, k, 7101);
    const Operands counts = make_hard(HardCase{Hard::counts, 0, "counts"}, m, n, k, 7102);
    DeviceProduct product(uniform);
    REQUIRE_FG_OK(product.run(handle.get()));  // the first call of the shape grows the workspace, outside the capture
    REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
    cudaGraphExec_t exec = capture_call(stream, [&] { return product.run(handle.get()); });
    struct Replay {
      const char *what;
      const Operands *operands;
    };
    for (const Replay &r : {Replay{"uniform", &uniform}, Replay{"counts", &counts}, Replay{"inner 2^+-40", &inner},
                            Replay{"NaN in 3 rows", &few_nan}, Replay{"NaN in half the rows", &many_nan},
                            Replay{"uniform again", &uniform}}) {
      INFO(r.what);
      product.load(*r.operands);
      const std::vector<float> replayed = replay(exec, product, stream);
      // The same operands through a direct call: the emulation's bits, or its refusal (then FP32 throughout).
      product.poison();
      const fg_status_t status = product.run(handle.get());
      REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
      const std::vector<float> direct = product.result();
      Reference reference = reference_of(*r.operands);
      // NaN exactly where the double reference has it; the rest measured without those elements.
      std::vector<float> finite = replayed;
      int64_t wrong_nan = 0;
      for (size_t i = 0; i < finite.size(); ++i) {
        const bool expect_nan = std::isnan(reference.product[i]);
        wrong_nan += std::isnan(finite[i]) != expect_nan;
        if (expect_nan) finite[i] = 0, reference.product[i] = 0, reference.magnitude[i] = 0;
      }
      CHECK(wrong_nan == 0);
      if (status == FG_STATUS_SUCCESS) {
        CHECK(same_bits(replayed, direct));
        CHECK(guarantee_of(finite, reference, k).beyond == 0);
      } else {
        CHECK(status == FG_STATUS_NOT_SUPPORTED);
        CHECK(relative_error(finite, reference.product) <= gemm_tolerance(k));
      }
      if (r.operands == &counts) CHECK(inexact_elements(replayed, reference) == 0);
      std::printf("emulated, captured and replayed: %-22s direct call %s\n", r.what, fg_status_name(status));
    }
    REQUIRE_CUDA_OK(cudaGraphExecDestroy(exec));
  }
}

namespace {

// A host function that holds its stream for `*milliseconds`: work enqueued behind it cannot have run before.
void CUDART_CB hold_stream(void *milliseconds) {
  std::this_thread::sleep_for(std::chrono::milliseconds(*static_cast<const int *>(milliseconds)));
}

}  // namespace

TEST_CASE("emulated: AUTO enqueues and returns; each launch of the call's graph chooses for its operands",
          "[emulated][emulated-large][async]") {
  EmulatedOnStream on;
  Handle &handle = on.handle;
  const cudaStream_t stream = on.stream;
  const int64_t m = 1024, n = 2048, k = 8192;
  const Operands uniform = make_operands(Inputs{Distribution::uniform, 0}, m, n, k, 7200);
  {
    // The handle's cuBLAS and workspace are made by a first call of the shape, on other memory.
    DeviceProduct first(uniform);
    REQUIRE_FG_OK(first.run(handle.get()));
    REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
  }
  const Reference uniform_reference = reference_of(uniform);

  SECTION("the call returns while its stream is held; the report waits for the device's choice") {
    const Operands inner = make_hard(HardCase{Hard::inner, 40, "inner 2^+-40"}, m, n, k, 7201);
    const Operands binary = make_hard(HardCase{Hard::binary, 0, "0/1"}, m, n, k, 7202);
    const Reference inner_reference = reference_of(inner), binary_reference = reference_of(binary);
    DeviceProduct product(uniform);
    struct Launch {
      const char *what;
      const Operands *operands;
      const Reference *reference;
    };
    std::vector<float> first_uniform;
    // The first launch captures the call's graph; the others launch it again, over the operands loaded between.
    for (const Launch &l :
         {Launch{"uniform", &uniform, &uniform_reference}, Launch{"inner 2^+-40", &inner, &inner_reference},
          Launch{"0/1", &binary, &binary_reference}, Launch{"uniform again", &uniform, &uniform_reference}}) {
      INFO(l.what);
      product.load(*l.operands);
      product.poison();
      REQUIRE_CUDA_OK(cudaDeviceSynchronize());
      const int held_ms = 400;
      REQUIRE_CUDA_OK(cudaLaunchHostFunc(stream, hold_stream, const_cast<int *>(&held_ms)));
      const auto start = std::chrono::steady_clock::now();
      REQUIRE_FG_OK(product.run(handle.get()));
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      CHECK(seconds < 0.2);  // it did not wait for the held stream
      CHECK(cudaStreamQuery(stream) == cudaErrorNotReady);
      const fg_sgemm_algo_t ran = last_algo(handle.get());  // waits for the device's choice
      const Emulation e = emulation_of(handle.get());
      REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
      const std::vector<float> c = product.result();
      std::printf("emulated AUTO, asynchronous: %-14s call %.3f ms, ran %s, moduli %d\n", l.what, seconds * 1e3,
                  fg_sgemm_algo_name(ran), e.moduli);
      if (l.operands == &inner) {  // no moduli count pays: FP32 throughout, reported so
        CHECK(ran != FG_SGEMM_OZAKI_INT8);
        CHECK(e.moduli == 0);
        CHECK(relative_error(c, inner_reference.product) <= gemm_tolerance(k));
      } else {
        CHECK(ran == FG_SGEMM_OZAKI_INT8);
        CHECK(e.moduli >= 2);
        CHECK(guarantee_of(c, *l.reference, k).beyond == 0);
      }
      if (l.operands == &binary) CHECK(inexact_elements(c, binary_reference) == 0);
      if (l.operands == &uniform) {
        if (first_uniform.empty()) first_uniform = c;
        CHECK(same_bits(c, first_uniform));
      }
    }
  }

  SECTION("more layouts than the handle keeps graphs for: each still right, nothing written past C's columns") {
    // ldc = n + i for 70 values of i: the key holds the layout, so 70 graphs, more than the handle keeps; the first
    // ones are evicted and made again. alpha varies too, which the graph is given at each launch.
    const int64_t widest = n + 70;
    DeviceMemory da(uniform.a.size() * 4), db(uniform.b.size() * 4), dc(static_cast<size_t>(m * widest) * 4);
    upload(da, uniform.a);
    upload(db, uniform.b);
    std::vector<int> order;
    for (int i = 0; i < 70; ++i) order.push_back(i);
    for (int i : {0, 1, 2, 69}) order.push_back(i);
    for (int i : order) {
      const int64_t ldc = n + i;
      const float alpha = 1.0f + static_cast<float>(i) / 128.0f;
      INFO("ldc " << ldc << ", alpha " << alpha);
      REQUIRE_CUDA_OK(cudaMemset(dc.get(), 0xff, static_cast<size_t>(m * widest) * 4));  // NaN
      REQUIRE_CUDA_OK(cudaDeviceSynchronize());
      REQUIRE_FG_OK(fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, alpha, da.as<float>(), k,
                             db.as<float>(), n, 0.0f, dc.as<float>(), ldc));
      CHECK(last_algo(handle.get()) == FG_SGEMM_OZAKI_INT8);
      REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
      const std::vector<float> all = download<float>(dc, m * widest);
      std::vector<float> c(static_cast<size_t>(m * n));
      int64_t written_outside = 0;
      for (int64_t at = 0; at < m * widest; ++at) {
        const int64_t r = at / ldc, col = at % ldc;
        if (r < m && col < n)
          c[r * n + col] = all[at];
        else
          written_outside += !std::isnan(all[at]);
      }
      CHECK(written_outside == 0);
      CHECK(guarantee_of(c, scaled(uniform_reference, alpha), k).beyond == 0);
    }
  }

  SECTION("calls on other memory and with other scalars launch the call's graph again, each on its own operands") {
    // The handle's graph of this shape was made by the first call above, on memory since freed: every call here
    // launches it again (or its beta != 0 twin), given its own addresses and scalars. Each call writes its own C
    // and no other; inner 2^+-40 runs FP32 throughout, the FP32 mode's product captured again for its operands. The
    // last calls repeat earlier operands and scalars: the graph sets the FP32 product it kept for them; then the same
    // operands with new scalars, beta 0 and not: cuBLAS's FP32 product reads them where the graph published them.
    const Operands second = make_operands(Inputs{Distribution::uniform, 0}, m, n, k, 7203);
    const Operands inner = make_hard(HardCase{Hard::inner, 40, "inner 2^+-40"}, m, n, k, 7204);
    const Reference second_reference = reference_of(second), inner_reference = reference_of(inner);
    DeviceProduct first_product(uniform), second_product(second), inner_product(inner);
    std::vector<float> c0(static_cast<size_t>(m * n));
    fill_uniform(c0, 7205);
    struct Call {
      DeviceProduct *product;
      const Reference *reference;
      float alpha, beta;
    };
    DeviceProduct *all[] = {&first_product, &second_product, &inner_product};
    for (const Call &call :
         {Call{&second_product, &second_reference, 1.0f, 0.0f}, Call{&first_product, &uniform_reference, -0.75f, 0.0f},
          Call{&inner_product, &inner_reference, 2.0f, 0.0f}, Call{&second_product, &second_reference, 0.5f, 0.25f},
          Call{&first_product, &uniform_reference, 1.5f, -2.0f}, Call{&inner_product, &inner_reference, -1.0f, 0.5f},
          Call{&first_product, &uniform_reference, 1.0f, 0.0f}, Call{&inner_product, &inner_reference, 2.0f, 0.0f},
          Call{&second_product, &second_reference, 1.0f, 0.0f}, Call{&inner_product, &inner_reference, 2.0f, 0.0f},
          Call{&inner_product, &inner_reference, -1.0f, 0.5f}, Call{&first_product, &uniform_reference, 1.5f, -2.0f},
          Call{&inner_product, &inner_reference, -1.0f, 0.5f}, Call{&inner_product, &inner_reference, 0.75f, 0.0f},
          Call{&inner_product, &inner_reference, 3.0f, -0.25f}, Call{&inner_product, &inner_reference, -2.5f, 1.5f}}) {
      const int which = static_cast<int>(std::find(std::begin(all), std::end(all), call.product) - std::begin(all));
      INFO("operands " << which << ", alpha " << call.alpha << ", beta " << call.beta);
      for (DeviceProduct *each : all) each->poison();
      if (call.beta != 0.0f)
        REQUIRE_CUDA_OK(cudaMemcpy(call.product->c(), c0.data(), c0.size() * 4, cudaMemcpyHostToDevice));
      REQUIRE_CUDA_OK(cudaDeviceSynchronize());
      REQUIRE_FG_OK(call.product->run(handle.get(), call.alpha, call.beta));
      const fg_sgemm_algo_t ran = last_algo(handle.get());
      REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
      Reference expected = scaled(*call.reference, call.alpha);
      for (size_t i = 0; i < c0.size(); ++i) {
        const double before = call.beta != 0.0f ? static_cast<double>(call.beta) * c0[i] : 0.0;
        expected.product[i] += before;
        expected.magnitude[i] += std::fabs(before);
      }
      const std::vector<float> c = call.product->result();
      if (call.product == &inner_product) {
        CHECK(ran != FG_SGEMM_OZAKI_INT8);
        CHECK(relative_error(c, expected.product) <= gemm_tolerance(k));
        int64_t unwritten = 0;
        for (float x : c) unwritten += std::isnan(x);
        CHECK(unwritten == 0);
      } else {
        CHECK(ran == FG_SGEMM_OZAKI_INT8);
        CHECK(guarantee_of(c, expected, k).beyond == 0);
      }
      for (DeviceProduct *other : all) {
        if (other == call.product) continue;
        int64_t written = 0;
        for (float x : other->result()) written += !std::isnan(x);
        CHECK(written == 0);
      }
    }
    // Declined operands give the FP32 mode's bits: the graph's FP32 product is the FP32 mode's call.
    for (const float beta : {0.0f, 0.5f}) {
      INFO("declined, beta " << beta);
      const auto run_in = [&](fg_math_mode_t mode) {
        REQUIRE_FG_OK(fg_set_math_mode(handle.get(), mode));
        REQUIRE_CUDA_OK(cudaMemcpy(inner_product.c(), c0.data(), c0.size() * 4, cudaMemcpyHostToDevice));
        REQUIRE_FG_OK(inner_product.run(handle.get(), -3.0f, beta));
        REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
        return inner_product.result();
      };
      const std::vector<float> fp32 = run_in(FG_MATH_FP32), emulated = run_in(FG_MATH_FP32_EMULATED);
      CHECK(same_bits(emulated, fp32));
    }
    // A batch of two declined products, on two sets of memory in turn.
    std::vector<float> a2(inner.a), b2(inner.b);
    a2.insert(a2.end(), inner.a.begin(), inner.a.end());
    b2.insert(b2.end(), inner.b.begin(), inner.b.end());
    for (int place = 0; place < 2; ++place) {
      INFO("batched, memory " << place);
      DeviceMemory da(a2.size() * 4), db(b2.size() * 4), dc(static_cast<size_t>(2 * m * n) * 4);
      upload(da, a2);
      upload(db, b2);
      REQUIRE_CUDA_OK(cudaMemset(dc.get(), 0xff, static_cast<size_t>(2 * m * n) * 4));
      REQUIRE_CUDA_OK(cudaDeviceSynchronize());
      REQUIRE_FG_OK(fg_sgemm_strided_batched(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f,
                                             da.as<float>(), k, m * k, db.as<float>(), n, k * n, 0.0f, dc.as<float>(),
                                             n, m * n, 2));
      CHECK(last_algo(handle.get()) != FG_SGEMM_OZAKI_INT8);
      REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
      const std::vector<float> c = download<float>(dc, 2 * m * n);
      for (int t = 0; t < 2; ++t) {
        const std::vector<float> one(c.begin() + t * m * n, c.begin() + (t + 1) * m * n);
        CHECK(relative_error(one, inner_reference.product) <= gemm_tolerance(k));
      }
    }
  }

  SECTION("declined operands on memory taken in turn, whether the FP32 product holds the addresses or reads them") {
    // cuBLAS's FP32 product in the graph reads the addresses at launch where its batched entry point runs
    // cublasSgemm's kernels (on the H100, 1024 x 16384 x 1024), and is captured again for each set of addresses
    // elsewhere (B's rows of 2050 floats). Two places hold the same declined operands; each call writes its own C and
    // no other, with alpha and beta changing, and the last gives the FP32 mode's bits.
    struct Shape {
      int64_t m, n, k;
    };
    for (const Shape &shape : {Shape{1030, 2050, 8190}, Shape{1024, 16384, 1024}}) {
      INFO("shape " << shape.m << " x " << shape.n << " x " << shape.k);
      REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
      const Operands inner = make_hard(HardCase{Hard::inner, 40, "inner 2^+-40"}, shape.m, shape.n, shape.k, 7210);
      const Reference inner_reference = reference_of(inner);
      DeviceProduct here(inner), there(inner);
      DeviceProduct *places[] = {&here, &there};
      std::vector<float> c0(static_cast<size_t>(shape.m * shape.n));
      fill_uniform(c0, 7211);
      const float alphas[] = {1.0f, -2.0f, 0.5f, 3.0f, 1.0f}, betas[] = {0.0f, 0.0f, 0.75f, -1.5f, 0.0f};
      for (int call = 0; call < 5; ++call) {
        DeviceProduct &product = *places[call % 2];
        INFO("call " << call);
        for (DeviceProduct *each : places) each->poison();
        if (betas[call] != 0.0f)
          REQUIRE_CUDA_OK(cudaMemcpy(product.c(), c0.data(), c0.size() * 4, cudaMemcpyHostToDevice));
        REQUIRE_CUDA_OK(cudaDeviceSynchronize());
        REQUIRE_FG_OK(product.run(handle.get(), alphas[call], betas[call]));
        CHECK(last_algo(handle.get()) != FG_SGEMM_OZAKI_INT8);
        REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
        Reference expected = scaled(inner_reference, alphas[call]);
        for (size_t i = 0; i < c0.size(); ++i)
          expected.product[i] += betas[call] != 0.0f ? static_cast<double>(betas[call]) * c0[i] : 0.0;
        CHECK(relative_error(product.result(), expected.product) <= gemm_tolerance(shape.k));
        int64_t written_elsewhere = 0;
        for (float x : places[(call + 1) % 2]->result()) written_elsewhere += !std::isnan(x);
        CHECK(written_elsewhere == 0);
      }
      const std::vector<float> emulated = here.result();
      REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32));
      here.poison();
      REQUIRE_FG_OK(here.run(handle.get(), alphas[4], 0.0f));
      REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
      CHECK(same_bits(emulated, here.result()));
    }
  }

  SECTION("batched and transposed, with alpha and beta: the graph's bits are the forced algorithm's") {
    struct Case {
      fg_op_t transa, transb;
      int64_t m, n, k, batch;
      float alpha, beta;
    };
    for (const Case &c : {Case{FG_OP_N, FG_OP_N, 1024, 2048, 8192, 2, 1.0f, 0.0f},
                          Case{FG_OP_T, FG_OP_T, 1024, 1280, 16384, 2, -0.5f, 0.75f}}) {
      INFO("transa " << c.transa << ", transb " << c.transb << ", batch " << c.batch);
      const int64_t size_a = c.m * c.k, size_b = c.k * c.n, size_c = c.m * c.n;
      std::vector<float> a(size_a * c.batch), b(size_b * c.batch), c0(size_c * c.batch);
      fill_uniform(a, 7300);
      fill_uniform(b, 7301);
      fill_uniform(c0, 7302);
      // The operands twice, in two places: a call on the copies launches the first call's graph again.
      DeviceMemory da(a.size() * 4), db(b.size() * 4), dc(c0.size() * 4);
      DeviceMemory copy_a(a.size() * 4), copy_b(b.size() * 4), copy_c(c0.size() * 4);
      for (DeviceMemory *x : {&da, &copy_a}) upload(*x, a);
      for (DeviceMemory *x : {&db, &copy_b}) upload(*x, b);
      const int64_t lda = c.transa == FG_OP_N ? c.k : c.m, ldb = c.transb == FG_OP_N ? c.n : c.k;
      const auto run_on = [&](fg_sgemm_algo_t algo, DeviceMemory &da, DeviceMemory &db, DeviceMemory &dc) {
        REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), algo));
        upload(dc, c0);
        REQUIRE_CUDA_OK(cudaDeviceSynchronize());
        REQUIRE_FG_OK(fg_sgemm_strided_batched(handle.get(), FG_ROW_MAJOR, c.transa, c.transb, c.m, c.n, c.k, c.alpha,
                                               da.as<float>(), lda, size_a, db.as<float>(), ldb, size_b, c.beta,
                                               dc.as<float>(), c.n, size_c, c.batch));
        CHECK(last_algo(handle.get()) == FG_SGEMM_OZAKI_INT8);
        CHECK(emulation_of(handle.get()).moduli >= 2);
        REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
        return download<float>(dc, c0.size());
      };
      const auto run = [&](fg_sgemm_algo_t algo) { return run_on(algo, da, db, dc); };
      const std::vector<float> graph = run(FG_SGEMM_AUTO), forced = run(FG_SGEMM_OZAKI_INT8);
      CHECK(same_bits(graph, forced));
      CHECK(same_bits(run(FG_SGEMM_AUTO), graph));
      CHECK(same_bits(run_on(FG_SGEMM_AUTO, copy_a, copy_b, copy_c), graph));
      // Every 7th row and 5th column of the last batch within the guarantee, against a double reference.
      const int64_t last = c.batch - 1;
      int64_t beyond = 0;
      for (int64_t i = 0; i < c.m; i += 7)
        for (int64_t j = 0; j < c.n; j += 5) {
          double sum = 0, magnitude = 0;
          for (int64_t l = 0; l < c.k; ++l) {
            const double x = a[last * size_a + (c.transa == FG_OP_N ? i * c.k + l : l * c.m + i)];
            const double y = b[last * size_b + (c.transb == FG_OP_N ? l * c.n + j : j * c.k + l)];
            sum += x * y;
            magnitude += std::fabs(x * y);
          }
          const double before = c0[last * size_c + i * c.n + j];
          const double exact = c.alpha * sum + c.beta * before;
          const double allowed = std::ldexp(1.0 + std::sqrt(static_cast<double>(c.k)), -24) *
                                 (std::fabs(c.alpha) * magnitude + std::fabs(c.beta * before));
          beyond += !(std::fabs(graph[last * size_c + i * c.n + j] - exact) <= allowed);
        }
      CHECK(beyond == 0);
    }
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_AUTO));
  }

  SECTION("NaN and Inf through the graph: FP32's pattern where they reach, the guarantee elsewhere") {
    Operands flagged = uniform;
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    for (int64_t i : {3, 900}) flagged.a[i * k + 17] = nan;
    flagged.b[40 * n + 17] = inf;       // column 17 of B
    flagged.b[4000 * n + 1500] = -inf;  // column 1500
    const Reference reference = reference_of(flagged);
    DeviceProduct product(flagged);
    product.poison();
    REQUIRE_CUDA_OK(cudaDeviceSynchronize());
    REQUIRE_FG_OK(product.run(handle.get()));
    CHECK(last_algo(handle.get()) == FG_SGEMM_OZAKI_INT8);  // a few lines: the emulation and its FP32 fix-up
    REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
    const std::vector<float> c = product.result();
    int64_t wrong = 0, nonfinite = 0;
    std::vector<float> finite = c;
    Reference finite_reference = reference;
    for (size_t i = 0; i < c.size(); ++i) {
      const double r = reference.product[i];
      if (std::isfinite(r)) continue;
      ++nonfinite;
      wrong += std::isnan(r) ? !std::isnan(c[i]) : c[i] != static_cast<float>(r);
      finite[i] = 0, finite_reference.product[i] = 0, finite_reference.magnitude[i] = 0;
    }
    CHECK(nonfinite == 2 * n + 2 * (m - 2));
    CHECK(wrong == 0);
    CHECK(guarantee_of(finite, finite_reference, k).beyond == 0);
  }

  SECTION("the preview's sample of lines and the plan of every element: right whichever decides") {
    // The preview samples every 32nd row of op(A) (32 of them). An outlier in column 3 of A against B's zero row 3
    // leaves a row's elements to FP32: first in every row the preview does not see (it finds nothing wrong; the
    // plan declines), then in 8 rows it sees (it declines from a quarter of its rows, where the plan alone would
    // recompute 8 rows of 1024).
    const auto sampled = [](int64_t row) { return row % 32 == 0; };
    for (const bool hard_sampled : {false, true}) {
      INFO((hard_sampled ? "outliers in 8 sampled rows" : "outliers in every row not sampled"));
      Operands hard = uniform;
      for (int64_t j = 0; j < n; ++j) hard.b[3 * n + j] = 0.0f;
      for (int64_t i = 0; i < m; ++i)
        if (hard_sampled ? sampled(i) && i < 8 * 32 : !sampled(i))
          hard.a[i * k + 3] = std::ldexp(hard.a[i * k + 3], 40);
      const Reference reference = reference_of(hard);
      DeviceProduct product(hard);
      product.poison();
      REQUIRE_CUDA_OK(cudaDeviceSynchronize());
      REQUIRE_FG_OK(product.run(handle.get()));
      const fg_sgemm_algo_t ran = last_algo(handle.get());
      const Emulation e = emulation_of(handle.get());
      REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
      const std::vector<float> c = product.result();
      std::printf("emulated AUTO, preview: %-36s ran %s, moduli %d, %lld elements in FP32\n",
                  hard_sampled ? "outliers in 8 sampled rows" : "outliers in every row not sampled",
                  fg_sgemm_algo_name(ran), e.moduli, static_cast<long long>(e.fp32_elements));
      CHECK((ran == FG_SGEMM_OZAKI_INT8) == (e.moduli >= 2));
      if (e.moduli == 0)
        CHECK(relative_error(c, reference.product) <= gemm_tolerance(k));
      else
        CHECK(guarantee_of(c, reference, k).beyond == 0);
      if (!hard_sampled) CHECK(e.moduli == 0);  // 97% of the elements need FP32: the plan declines
    }
  }

  SECTION("two handles on two streams at once") {
    EmulatedOnStream other;
    DeviceProduct mine(uniform), theirs(uniform);
    mine.poison();
    theirs.poison();
    REQUIRE_CUDA_OK(cudaDeviceSynchronize());
    for (int round = 0; round < 3; ++round) {
      REQUIRE_FG_OK(mine.run(handle.get()));
      REQUIRE_FG_OK(theirs.run(other.handle.get()));
    }
    REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
    REQUIRE_CUDA_OK(cudaStreamSynchronize(other.stream));
    const std::vector<float> c = mine.result();
    CHECK(guarantee_of(c, uniform_reference, k).beyond == 0);
    CHECK(same_bits(c, theirs.result()));
  }
}
