// SPDX-License-Identifier: Apache-2.0
// FG_MATH_FP32_EMULATED and FG_SGEMM_OZAKI_INT8: the accuracy contract against cuBLAS FP32 on the accuracy
// suite's distributions, NaN/Inf patterns, reproducibility, fg_sgemm's shapes, and the refusals.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gpu/emulated_support.hpp"

using namespace fgtest;

namespace {

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

std::vector<double> as_double(const std::vector<float> &values) { return {values.begin(), values.end()}; }

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

// A strided batch of `batch` products of edge^3, row-major, each its own operands (product i's from inputs(i) and
// seed + i), on the device; run() calls fg_sgemm_strided_batched over the first `count` of them with all of C
// poisoned (NaN) first, and returns all of C.
class SquareBatch {
 public:
  template <typename InputsOf>
  SquareBatch(int64_t edge, int64_t batch, InputsOf inputs, uint64_t seed)
      : edge_(edge),
        batch_(batch),
        a_(static_cast<size_t>(batch * edge * edge) * 4),
        b_(static_cast<size_t>(batch * edge * edge) * 4),
        c_(static_cast<size_t>(batch * edge * edge) * 4) {
    std::vector<float> a, b;
    a.reserve(static_cast<size_t>(batch * elements()));
    b.reserve(static_cast<size_t>(batch * elements()));
    for (int64_t i = 0; i < batch; ++i) {
      products_.push_back(make_operands(inputs(i), edge, edge, edge, seed + static_cast<uint64_t>(i)));
      a.insert(a.end(), products_.back().a.begin(), products_.back().a.end());
      b.insert(b.end(), products_.back().b.begin(), products_.back().b.end());
    }
    upload(a_, a);
    upload(b_, b);
  }
  int64_t elements() const { return edge_ * edge_; }
  const Operands &product(int64_t i) const { return products_[static_cast<size_t>(i)]; }
  std::vector<float> run(fg_handle_t handle, int64_t count) {
    const size_t bytes = static_cast<size_t>(batch_ * elements()) * 4;
    REQUIRE_CUDA_OK(cudaMemset(c_.get(), 0xff, bytes));  // NaN
    REQUIRE_CUDA_OK(cudaDeviceSynchronize());
    REQUIRE_FG_OK(fg_sgemm_strided_batched(handle, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, edge_, edge_, edge_, 1.0f,
                                           a_.as<float>(), edge_, elements(), b_.as<float>(), edge_, elements(), 0.0f,
                                           c_.as<float>(), edge_, elements(), count));
    return download<float>(c_, static_cast<size_t>(batch_ * elements()));
  }
  // Product i's slice of C.
  std::vector<float> slice(const std::vector<float> &c, int64_t i) const {
    return std::vector<float>(c.begin() + i * elements(), c.begin() + (i + 1) * elements());
  }

 private:
  int64_t edge_, batch_;
  std::vector<Operands> products_;
  DeviceMemory a_, b_, c_;
};

TEST_CASE("emulated: AUTO emulates a strided batch of 16 products of 1024^3 (2^34 in all), not 8 of them",
          "[emulated][emulated-large]") {
  constexpr int64_t kEdge = 1024, kBatch = 16;
  Handle handle;
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
  // Each product its own operands, uniform and wide exponents by turns (one moduli count serves the whole call).
  SquareBatch batch(
      kEdge, kBatch,
      [](int64_t i) {
        return i % 2 == 0 ? Inputs{Distribution::uniform, 0} : Inputs{Distribution::exponents, 0};
      },
      2100);
  std::vector<float> c = batch.run(handle.get(), kBatch);
  CHECK(last_algo(handle.get()) == FG_SGEMM_OZAKI_INT8);
  CHECK(emulation_of(handle.get()).moduli >= 7);
  std::vector<Reference> references;
  for (int64_t i = 0; i < kBatch; ++i) {
    INFO("product " << i);
    references.push_back(reference_of(batch.product(i)));
    CHECK(guarantee_of(batch.slice(c, i), references.back(), kEdge).beyond == 0);
  }
  // Half of them: 2^33 in all, FP32's products; nothing past the batch's C written.
  c = batch.run(handle.get(), kBatch / 2);
  CHECK(last_algo(handle.get()) != FG_SGEMM_OZAKI_INT8);
  for (int64_t i = 0; i < kBatch / 2; ++i) {
    INFO("product " << i);
    CHECK(relative_error(batch.slice(c, i), references[static_cast<size_t>(i)].product) <= gemm_tolerance(kEdge));
  }
  CHECK(all_nan(std::vector<float>(c.begin() + kBatch / 2 * batch.elements(), c.end())));
}

TEST_CASE("emulated: 128 products of 1024^3 in one pass of byte sums, AUTO and forced: each product certified",
          "[emulated][emulated-large]") {
  // With the own product's sums written as bytes, the 128 products' 7 moduli (uniform operands' need) fit one pass
  // (INT32 sums took two, 73 and 55 products): every product is written, and those about the old boundary and at the
  // ends are checked whole.
  constexpr int64_t kEdge = 1024, kBatch = 128;
  Handle handle;
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
  SquareBatch batch(
      kEdge, kBatch,
      [](int64_t) {
        return Inputs{Distribution::uniform, 0};
      },
      5100);
  const int64_t checked[] = {0, 1, 72, 73, 126, 127};
  std::vector<Reference> references;
  for (const int64_t i : checked) references.push_back(reference_of(batch.product(i)));
  for (const fg_sgemm_algo_t algo : {FG_SGEMM_AUTO, FG_SGEMM_OZAKI_INT8}) {
    INFO("algorithm " << static_cast<int>(algo));
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), algo));
    const std::vector<float> c = batch.run(handle.get(), kBatch);
    CHECK(last_algo(handle.get()) == FG_SGEMM_OZAKI_INT8);
    CHECK(emulation_of(handle.get()).moduli == 7);
    CHECK(std::none_of(c.begin(), c.end(), [](float x) { return std::isnan(x); }));
    for (size_t at = 0; at < references.size(); ++at) {
      INFO("product " << checked[at]);
      CHECK(guarantee_of(batch.slice(c, checked[at]), references[at], kEdge).beyond == 0);
    }
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
