// SPDX-License-Identifier: Apache-2.0
// Programs as a user writes them against the public header, on values and sizes: NaN and Inf in the
// operands and scalars, m past the grid's row-tile limit, and k past 2^30.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gpu/probe_support.hpp"

using namespace fgtest;

TEST_CASE("NaN and Inf in A, B, alpha and beta follow FP32 semantics in every algorithm", "[sgemm-nonfinite]") {
  Handle handle;
  const int64_t m = 37, n = 45, k = 29;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  struct Case {
    const char *what;
    int64_t a_at, b_at;  // where a NaN/Inf goes in A / B (-1: none)
    float a_value, b_value, alpha, beta, c_value;
  };
  const Case cases[] = {
      {"NaN in A", 5 * k + 3, -1, nan, 0, 1.0f, 0.0f, 0.0f},
      {"Inf in B", -1, 7 * n + 11, 0, inf, 1.0f, 0.0f, 0.0f},
      {"Inf in A meets -Inf in B", 2 * k + 4, 4 * n + 9, inf, -inf, 1.0f, 0.0f, 0.0f},
      {"alpha NaN", -1, -1, 0, 0, nan, 0.0f, 0.0f},
      {"alpha Inf", -1, -1, 0, 0, inf, 0.0f, 0.0f},
      {"beta Inf over C", -1, -1, 0, 0, 1.0f, inf, 0.5f},
      {"beta NaN", -1, -1, 0, 0, 1.0f, nan, 0.5f},
      {"beta 0 over NaN C", -1, -1, 0, 0, 1.0f, 0.0f, nan},
  };
  std::vector<float> a(m * k), b(k * n);
  fill_uniform(a, 41);
  fill_uniform(b, 42);
  for (const Case &cs : cases) {
    std::vector<float> ca = a, cb = b, cc(m * n, cs.c_value);
    if (cs.a_at >= 0) ca[cs.a_at] = cs.a_value;
    if (cs.b_at >= 0) cb[cs.b_at] = cs.b_value;
    // The reference: each element in double, as IEEE arithmetic does it; beta == 0 never reads C.
    std::vector<double> expected(m * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) sum += double(ca[i * k + p]) * double(cb[p * n + j]);
        expected[i * n + j] = double(cs.alpha) * sum + (cs.beta == 0.0f ? 0.0 : double(cs.beta) * cc[i * n + j]);
      }
    DeviceMemory da(ca.size() * 4), db(cb.size() * 4), dc(cc.size() * 4);
    upload(da, ca);
    upload(db, cb);
    for (fg_sgemm_algo_t algo : algos_under_test(handle.get())) {
      INFO(cs.what << ", algorithm " << fg_sgemm_algo_name(algo));
      upload(dc, cc);
      REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), algo));
      const fg_status_t status = fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, cs.alpha,
                                          da.as<float>(), k, db.as<float>(), n, cs.beta, dc.as<float>(), n);
      if (status == FG_STATUS_NOT_SUPPORTED && algo != FG_SGEMM_AUTO) continue;
      REQUIRE_FG_OK(status);
      const std::vector<float> got = download<float>(dc, cc.size());
      int64_t mismatches = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        const double e = expected[i];
        const bool same_class = std::isnan(e) ? std::isnan(got[i])
                                : std::isinf(e)
                                    ? (std::isinf(got[i]) && std::signbit(got[i]) == std::signbit(e))
                                    : (std::isfinite(got[i]) && std::fabs(got[i] - e) <= 1e-4 * (1 + std::fabs(e)));
        mismatches += same_class ? 0 : 1;
      }
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("m past the grid's row-tile limit: m = 9,000,000, n = 3, k = 5 in every algorithm", "[tall]") {
  Handle handle;
  GemmCase gc;
  gc.m = 9000000, gc.n = 3, gc.k = 5, gc.alpha = 1.25f, gc.beta = 0.0f;
  check_gemm_case(handle.get(), algos_under_test(handle.get()), gc, 77);
}

TEST_CASE("k past 2^30: every algorithm sums all of k", "[huge]") {
  Handle handle;
  const int64_t tail = 4096, k = (int64_t{1} << 30) + tail;
  DeviceMemory a(k * 4), b(k * 4), c(4);
  REQUIRE_CUDA_OK(cudaMemset(a.get(), 0, k * 4));
  const std::vector<float> ones(tail, 1.0f);
  REQUIRE_CUDA_OK(cudaMemcpy(a.as<float>() + (k - tail), ones.data(), tail * 4, cudaMemcpyHostToDevice));
  // B all ones: 1.0f is 0x3f800000, so fill through a 32-bit pattern.
  std::vector<float> chunk(size_t{1} << 24, 1.0f);
  for (int64_t done = 0; done < k; done += static_cast<int64_t>(chunk.size())) {
    const int64_t count = std::min<int64_t>(chunk.size(), k - done);
    REQUIRE_CUDA_OK(cudaMemcpy(b.as<float>() + done, chunk.data(), count * 4, cudaMemcpyHostToDevice));
  }
  // The ladder's one-block kernels would take minutes over 2^30 steps of k; the tiled pipelines, the
  // split-k kernel, cuBLAS and AUTO are those whose k bookkeeping this checks.
  for (fg_sgemm_algo_t algo :
       {FG_SGEMM_AUTO, FG_SGEMM_PIPELINED, FG_SGEMM_SMALL_TILE, FG_SGEMM_SPLIT_K, FG_SGEMM_CUBLAS}) {
    if (fg_set_sgemm_algo(handle.get(), algo) != FG_STATUS_SUCCESS) continue;
    INFO("algorithm " << fg_sgemm_algo_name(algo));
    REQUIRE_CUDA_OK(cudaMemset(c.get(), 0xff, 4));
    REQUIRE_FG_OK(fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 1, 1, k, 1.0f, a.as<float>(), k, b.as<float>(),
                           1, 0.0f, c.as<float>(), 1));
    CHECK(download<float>(c, 1)[0] == static_cast<float>(tail));
  }
}
