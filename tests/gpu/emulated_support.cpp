// SPDX-License-Identifier: Apache-2.0
// The helpers that the emulated mode's tests share (emulated_support.hpp): operands and references, the
// guarantee, and the device product with its cuBLAS FP32 twin.
#include "gpu/emulated_support.hpp"

#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace fgtest {

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

Emulation emulation_of(fg_handle_t handle) {
  Emulation e;
  REQUIRE_FG_OK(fg_get_last_sgemm_emulation(handle, &e.moduli, &e.fp32_elements));
  return e;
}

DeviceProduct::DeviceProduct(const Operands &o)
    : o_(o), a_(o.a.size() * 4), b_(o.b.size() * 4), c_(static_cast<size_t>(o.m * o.n) * 4) {
  upload(a_, o.a);
  upload(b_, o.b);
}

// Waited for: cudaMemset runs on the legacy stream, which the calls' non-blocking streams do not wait for, so that a
// poison not yet landed could overwrite the product that follows it.
void DeviceProduct::poison() {
  REQUIRE_CUDA_OK(cudaMemset(c_.get(), 0xff, o_.m * o_.n * 4));
  REQUIRE_CUDA_OK(cudaDeviceSynchronize());
}

fg_status_t DeviceProduct::run(fg_handle_t handle, float alpha, float beta) {
  return fg_sgemm(handle, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, o_.m, o_.n, o_.k, alpha, a_.as<float>(), o_.k, b_.as<float>(),
                  o_.n, beta, c_.as<float>(), o_.n);
}

std::vector<float> DeviceProduct::cublas_fp32() {
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

std::vector<float> DeviceProduct::result() { return download<float>(c_, o_.m * o_.n); }

void DeviceProduct::load(const Operands &o) {
  REQUIRE(o.a.size() == o_.a.size());
  REQUIRE(o.b.size() == o_.b.size());
  upload(a_, o.a);
  upload(b_, o.b);
}

fg_sgemm_algo_t last_algo(fg_handle_t handle) {
  fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
  REQUIRE_FG_OK(fg_get_last_sgemm_algo(handle, &ran));
  return ran;
}

bool all_nan(const std::vector<float> &values) {
  return std::all_of(values.begin(), values.end(), [](float x) { return std::isnan(x); });
}

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

Reference scaled(const Reference &r, double alpha) {
  Reference s = r;
  for (double &x : s.product) x *= alpha;
  for (double &x : s.magnitude) x *= std::fabs(alpha);
  return s;
}

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

}  // namespace fgtest
