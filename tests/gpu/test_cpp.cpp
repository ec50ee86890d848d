// SPDX-License-Identifier: Apache-2.0
// fastgemm.hpp on the GPU: the typed calls reach the right C entry points and compute, in both math modes.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "fastgemm/fastgemm.hpp"
#include "gpu/gemm_harness.hpp"

using namespace fgtest;

TEST_CASE("C++: sgemm and typed rowmean_matvec through the wrapper", "[cpp]") {
  fastgemm::Handle handle;
  const int64_t m = 45, n = 33, k = 27;
  std::vector<float> a(m * k), b(k * n), c(m * n);
  fill_uniform(a, 1);
  fill_uniform(b, 2);
  fill_uniform(c, 3);
  GemmCase gc;
  gc.m = m, gc.n = n, gc.k = k, gc.alpha = 2.25f, gc.beta = -0.5f;
  gc = gc.resolved();
  const std::vector<double> reference = reference_gemm(gc, a, b, c);
  DeviceMemory a_device(a.size() * 4), b_device(b.size() * 4), c_device(c.size() * 4);
  upload(a_device, a);
  upload(b_device, b);
  upload(c_device, c);
  handle.sgemm(FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 2.25f, a_device.as<float>(), k, b_device.as<float>(), n, -0.5f,
               c_device.as<float>(), n);
  std::vector<float> result = download<float>(c_device, c.size());
  result.resize(reference.size());
  CHECK(relative_error(result, reference) <= gemm_tolerance(k));
  CHECK_THROWS_AS(handle.sgemm(FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, a_device.as<float>(), k - 1,
                               b_device.as<float>(), n, 0.0f, c_device.as<float>(), n),
                  fastgemm::Error);

  const int64_t L = 9, M = 5, N = 4;
  std::vector<double> input(N * L * M), matrix(L * L);
  fill_uniform(input, 4);
  fill_uniform(matrix, 5);
  const std::vector<long double> expected = reference_rowmean(input, matrix, L, M, N);
  DeviceMemory input_device(input.size() * 8), matrix_device(matrix.size() * 8), output_device(L * N * 8);
  upload(input_device, input);
  upload(matrix_device, matrix);
  handle.rowmean_matvec(input_device.as<double>(), matrix_device.as<double>(), output_device.as<double>(), L, M, N);
  CHECK(relative_error(download<double>(output_device, L * N), expected) <= 1e-13);
  std::vector<float> input32(input.begin(), input.end()), matrix32(matrix.begin(), matrix.end());
  upload(input_device, input32);
  upload(matrix_device, matrix32);
  handle.rowmean_matvec(input_device.as<float>(), matrix_device.as<float>(), output_device.as<float>(), L, M, N);
  const std::vector<long double> expected32 = reference_rowmean(input32, matrix32, L, M, N);
  CHECK(relative_error(download<float>(output_device, L * N), expected32) <= 1e-5);
  CHECK(handle.last_rowmean_algo() != FG_ROWMEAN_AUTO);
  handle.set_rowmean_algo(FG_ROWMEAN_TWO_PASS);
  handle.rowmean_matvec(input_device.as<float>(), matrix_device.as<float>(), output_device.as<float>(), L, M, N);
  CHECK(handle.last_rowmean_algo() == FG_ROWMEAN_TWO_PASS);
}

TEST_CASE("C++: sgemm in the emulated math mode through the wrapper", "[cpp]") {
  fastgemm::Handle handle;
  handle.set_math_mode(FG_MATH_FP32_EMULATED);
  const int64_t m = 192, n = 160, k = 1024;
  std::vector<float> a(m * k), b(k * n), c(m * n, std::nanf(""));
  fill_uniform(a, 11);
  fill_uniform(b, 12);
  GemmCase gc;
  gc.m = m, gc.n = n, gc.k = k, gc.alpha = 1.5f;
  gc = gc.resolved();
  const std::vector<double> reference = reference_gemm(gc, a, b, c);
  DeviceMemory a_device(a.size() * 4), b_device(b.size() * 4), c_device(c.size() * 4);
  upload(a_device, a);
  upload(b_device, b);
  // AUTO in this mode runs an emulating algorithm or plain FP32, with FP32's accuracy either way; forced, the
  // emulating algorithm runs or declines the problem (FG_STATUS_NOT_SUPPORTED).
  for (const bool forced : {false, true}) {
    INFO((forced ? "FG_SGEMM_OZAKI_INT8 forced" : "AUTO"));
    if (forced) {
      try {
        handle.set_sgemm_algo(FG_SGEMM_OZAKI_INT8);
      } catch (const fastgemm::Error &error) {
        CHECK(error.status() == FG_STATUS_NOT_SUPPORTED);  // a build without it
        CHECK(std::string(fg_sgemm_algo_name(FG_SGEMM_OZAKI_INT8)) == "unknown");
        continue;
      }
    }
    upload(c_device, c);
    try {
      handle.sgemm(FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.5f, a_device.as<float>(), k, b_device.as<float>(), n,
                   0.0f, c_device.as<float>(), n);
    } catch (const fastgemm::Error &error) {
      CHECK(forced);
      CHECK(error.status() == FG_STATUS_NOT_SUPPORTED);
      continue;
    }
    CHECK(relative_error(download<float>(c_device, c.size()), reference) <= gemm_tolerance(k));
    const fg_sgemm_algo_t ran = handle.last_sgemm_algo();
    CHECK(ran != FG_SGEMM_AUTO);
    if (forced) CHECK(ran == FG_SGEMM_OZAKI_INT8);
    int moduli = -1;
    int64_t fp32_elements = -1;
    REQUIRE(fg_get_last_sgemm_emulation(handle.get(), &moduli, &fp32_elements) == FG_STATUS_SUCCESS);
    const fastgemm::SgemmEmulation emulation = handle.last_sgemm_emulation();
    CHECK(emulation.moduli == moduli);
    CHECK(emulation.fp32_elements == fp32_elements);
    if (ran == FG_SGEMM_OZAKI_INT8) CHECK(emulation.moduli > 0);
  }
  fastgemm::Handle moved(std::move(handle));
  CHECK(moved.last_sgemm_emulation().moduli >= 0);
  try {
    handle.last_sgemm_emulation();  // the moved-from handle is NULL
    FAIL("last_sgemm_emulation() on a moved-from handle did not throw");
  } catch (const fastgemm::Error &error) {
    CHECK(error.status() == FG_STATUS_INVALID_HANDLE);
    CHECK(std::string(error.what()) == "fg_get_last_sgemm_emulation: handle is NULL");
  }
  handle = std::move(moved);
  CHECK(handle.math_mode() == FG_MATH_FP32_EMULATED);
}
