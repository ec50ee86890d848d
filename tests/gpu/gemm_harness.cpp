// SPDX-License-Identifier: Apache-2.0
#include "gpu/gemm_harness.hpp"

#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace fgtest {

Handle::Handle() {
  REQUIRE_FG_OK(fg_create(&handle_));
  // FASTGEMM_TEST_DEVICES=all: fg_sgemm_host spreads every test's products over all devices, the handle's first.
  const char *devices = std::getenv("FASTGEMM_TEST_DEVICES");
  if (devices == nullptr || std::strcmp(devices, "all") != 0) return;
  int current = 0, count = 0;
  REQUIRE_CUDA_OK(cudaGetDevice(&current));
  REQUIRE_CUDA_OK(cudaGetDeviceCount(&count));
  std::vector<int> list{current};
  for (int device = 0; device < count; ++device)
    if (device != current) list.push_back(device);
  REQUIRE_FG_OK(fg_set_devices(handle_, list.data(), count));
}
Handle::~Handle() { (void)fg_destroy(handle_); }

std::vector<fg_sgemm_algo_t> algos_under_test(fg_handle_t handle) {
  std::vector<fg_sgemm_algo_t> algos{FG_SGEMM_AUTO};
  for (fg_sgemm_algo_t algo : carried_sgemm_algos(handle)) algos.push_back(algo);
  REQUIRE(algos.size() >= 3);  // AUTO, naive and cuBLAS at least
  return algos;
}

std::string expected_sgemm_refusal(fg_sgemm_algo_t algo, const GemmCase &gc, const float *a, const float *b,
                                   const float *c) {
  const bool product = gc.m > 0 && gc.n > 0 && gc.batch > 0 && gc.k > 0 && gc.alpha != 0.0f;
  if (!product) return "";
  switch (algo) {
    case FG_SGEMM_SMEM_VEC4:
    case FG_SGEMM_BANK_FREE:
    case FG_SGEMM_DOUBLE_BUFFER: {
      const auto aligned = [](const float *pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; };
      const bool lines = gc.lda % 4 == 0 && gc.ldb % 4 == 0 && gc.ldc % 4 == 0;
      const bool batches = gc.batch == 1 || (gc.stride_a % 4 == 0 && gc.stride_b % 4 == 0 && gc.stride_c % 4 == 0);
      return aligned(a) && aligned(b) && aligned(c) && lines && batches ? "" : "for 128-bit accesses";
    }
    case FG_SGEMM_PIPELINED:
    case FG_SGEMM_SMALL_TILE:
    case FG_SGEMM_SPLIT_K: {
      int device = 0, major = 0;
      REQUIRE_CUDA_OK(cudaGetDevice(&device));
      REQUIRE_CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
      return major >= 8 ? "" : "compute capability 8.0";
    }
    default: return "";
  }
}

double gemm_tolerance(int64_t k) { return 1e-6 * (4.0 + std::sqrt(static_cast<double>(k))); }

namespace {

bool same_bits(const std::vector<float> &x, const std::vector<float> &y, const std::vector<char> &mask, bool inside) {
  for (size_t i = 0; i < x.size(); ++i)
    if (static_cast<bool>(mask[i]) == inside && std::memcmp(&x[i], &y[i], sizeof(float)) != 0) return false;
  return true;
}

fg_status_t call(fg_handle_t handle, const GemmCase &gc, const float *a, const float *b, float *c) {
  if (gc.batched_api || gc.batch != 1)
    return fg_sgemm_strided_batched(handle, gc.layout, gc.transa, gc.transb, gc.m, gc.n, gc.k, gc.alpha, a, gc.lda,
                                    gc.stride_a, b, gc.ldb, gc.stride_b, gc.beta, c, gc.ldc, gc.stride_c, gc.batch);
  return fg_sgemm(handle, gc.layout, gc.transa, gc.transb, gc.m, gc.n, gc.k, gc.alpha, a, gc.lda, b, gc.ldb, gc.beta, c,
                  gc.ldc);
}

}  // namespace

void check_gemm_case(fg_handle_t handle, const std::vector<fg_sgemm_algo_t> &algos, const GemmCase &raw,
                     uint64_t seed) {
  const GemmCase gc = raw.resolved();
  INFO(gc.describe());
  std::vector<float> a(gc.a_elements()), b(gc.b_elements()), c(gc.c_elements());
  fill_uniform(a, seed * 3 + 1);
  fill_uniform(b, seed * 3 + 2);
  fill_uniform(c, seed * 3 + 3);
  const std::vector<char> window = c_window_mask(gc);
  if (gc.beta == 0.0f)  // C must not be read: NaN there must never reach the result
    for (size_t i = 0; i < c.size(); ++i)
      if (window[i]) c[i] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<double> reference = reference_gemm(gc, a, b, c);

  DeviceMemory a_device(a.size() * sizeof(float)), b_device(b.size() * sizeof(float)),
      c_device(c.size() * sizeof(float));
  upload(a_device, a);
  upload(b_device, b);
  const float *a_pointer = gc.null_ab ? nullptr : a_device.as<float>() + gc.offset_a;
  const float *b_pointer = gc.null_ab ? nullptr : b_device.as<float>() + gc.offset_b;
  float *c_pointer = c_device.as<float>() + gc.offset_c;

  std::vector<float> first_result;
  for (fg_sgemm_algo_t algo : algos) {
    INFO("algorithm " << fg_sgemm_algo_name(algo));
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle, algo));
    upload(c_device, c);
    const fg_status_t status = call(handle, gc, a_pointer, b_pointer, c_pointer);
    const std::string message = fg_last_error_message();
    const std::vector<float> result = download<float>(c_device, c.size());
    INFO("status " << fg_status_name(status) << ": " << message);
    const std::string refusal = expected_sgemm_refusal(algo, gc, a_pointer, b_pointer, c_pointer);
    if (!refusal.empty()) {
      CHECK(status == FG_STATUS_NOT_SUPPORTED);
      CHECK(message.find(refusal) != std::string::npos);
      CHECK(same_bits(result, c, window, true));
      CHECK(same_bits(result, c, window, false));
      continue;
    }
    REQUIRE(status == FG_STATUS_SUCCESS);
    CHECK(same_bits(result, c, window, false));  // nothing outside the products was written
    const double error = relative_error(result, reference, &window);
    INFO("relative error " << error);
    CHECK(error <= gemm_tolerance(gc.k));

    fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
    REQUIRE_FG_OK(fg_get_last_sgemm_algo(handle, &ran));
    const bool product = gc.k > 0 && gc.alpha != 0.0f;
    if (!product)
      CHECK(ran == FG_SGEMM_AUTO);
    else if (algo == FG_SGEMM_AUTO)
      CHECK((ran != FG_SGEMM_AUTO && std::string(fg_sgemm_algo_name(ran)) != "unknown"));
    else
      CHECK(ran == algo);

    // For one algorithm, the same inputs give bitwise the same C.
    if (algo == algos.front()) first_result = result;
  }
  if (!first_result.empty()) {
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle, algos.front()));
    upload(c_device, c);
    REQUIRE_FG_OK(call(handle, gc, a_pointer, b_pointer, c_pointer));
    const std::vector<float> again = download<float>(c_device, c.size());
    CHECK(std::memcmp(again.data(), first_result.data(), again.size() * sizeof(float)) == 0);
  }
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle, FG_SGEMM_AUTO));
}

}  // namespace fgtest
