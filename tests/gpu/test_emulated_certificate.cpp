// SPDX-License-Identifier: Apache-2.0
// The emulated mode's per-element guarantee: an element that overflows, operands that defeat a scaling by lines
// (integers exact), AUTO on large ones, and the plan's codes at half depth.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "gpu/emulated_support.hpp"

using namespace fgtest;

namespace {

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
  struct Size {
    int64_t m, n, k;
  };
  // 300 deep: the moduli's INT32 sums; 1024^3: on Hopper, the own INT8 product's residues in bytes, and the
  // reconstruction's rows of four elements rebuilt at once, which an overflow sends to the element-by-element path.
  for (const Size &size : {Size{200, 180, 300}, Size{1024, 1024, 1024}}) {
    const int64_t m = size.m, n = size.n, k = size.k;
    INFO(m << " x " << n << " x " << k);
    // Row 3 of A about 2^120 and column 5 of B about 2^10, all positive: their element is near k 2^129, past
    // FLT_MAX, while every other element stays finite. The certificate passes it (nothing cancels); its float
    // overflows.
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

TEST_CASE("emulated: whole rows and columns recomputed in FP32, the last ones in partial tiles", "[emulated]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_OZAKI_INT8));
  // Edges that leave partial tiles of the recomputation (32 x 128) on both sides. An outlier in column 3 of rows
  // 5 and m - 1 of A, against a zero row 3 of B, leaves those rows of C to FP32; one in row 5 of B, columns 7 and
  // n - 1, against a zero column 5 of A, those columns.
  const int64_t m = 1037, n = 1163, k = 700;
  Operands o = make_operands(Inputs{Distribution::uniform, 0}, m, n, k, 4200);
  for (int64_t j = 0; j < n; ++j) o.b[3 * n + j] = 0.0f;
  for (int64_t i = 0; i < m; ++i) o.a[i * k + 5] = 0.0f;
  for (const int64_t row : {int64_t{5}, m - 1}) o.a[row * k + 3] = std::ldexp(o.a[row * k + 3] + 2.0f, 40);
  for (const int64_t col : {int64_t{7}, n - 1}) o.b[5 * n + col] = std::ldexp(o.b[5 * n + col] + 2.0f, 40);
  const PoisonedRun run = run_over_poison(handle.get(), o);
  const Emulation e = emulation_of(handle.get());
  std::printf("emulated: 2 rows and 2 columns of wide range, %lld x %lld x %lld: moduli %d, %lld elements in FP32\n",
              static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), e.moduli,
              static_cast<long long>(e.fp32_elements));
  CHECK(e.moduli >= 2);
  CHECK(e.fp32_elements >= 2 * n + 2 * m - 4);
  CHECK(run.got.beyond == 0);
  int64_t nan = 0;
  for (const float x : run.c) nan += std::isnan(x);
  CHECK(nan == 0);
  // Those rows and columns are FP32's bits: the sum in k order with FMA (math-mode.md), whatever way the device
  // spreads its loads.
  const auto fp32 = [&](int64_t i, int64_t j) {
    float sum = 0.0f;
    for (int64_t l = 0; l < k; ++l) sum = std::fma(o.a[i * k + l], o.b[l * n + j], sum);
    return sum;
  };
  const auto differs = [&](int64_t i, int64_t j) {
    const float expected = fp32(i, j);
    return std::memcmp(&run.c[i * n + j], &expected, sizeof expected) != 0;
  };
  int64_t differ = 0;
  for (const int64_t row : {int64_t{5}, m - 1})
    for (int64_t j = 0; j < n; ++j) differ += differs(row, j);
  for (const int64_t col : {int64_t{7}, n - 1})
    for (int64_t i = 0; i < m; ++i) differ += differs(i, col);
  CHECK(differ == 0);
}
