// SPDX-License-Identifier: Apache-2.0
// The bad-input classes through the real entry points: each returns the documented status, names the
// argument, and leaves the output untouched.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "gpu/gemm_harness.hpp"
#include "support/bad_inputs.hpp"

using namespace fgtest;

namespace {

fg_status_t call_sgemm(fg_handle_t handle, const SgemmCall &c, bool batched) {
  if (batched)
    return fg_sgemm_strided_batched(handle, c.layout, c.transa, c.transb, c.m, c.n, c.k, c.alpha, c.A, c.lda,
                                    c.stride_a, c.B, c.ldb, c.stride_b, c.beta, c.C, c.ldc, c.stride_c, c.batch_count);
  return fg_sgemm(handle, c.layout, c.transa, c.transb, c.m, c.n, c.k, c.alpha, c.A, c.lda, c.B, c.ldb, c.beta, c.C,
                  c.ldc);
}

}  // namespace

TEST_CASE("sgemm: every bad argument is named and writes nothing", "[errors]") {
  Handle handle;
  DeviceMemory a(48 * sizeof(float)), b(60 * sizeof(float)), c(40 * sizeof(float));
  std::vector<float> values(60);
  fill_uniform(values, 5);
  upload(a, std::vector<float>(values.begin(), values.begin() + 48));
  upload(b, values);
  const std::vector<float> c_before(values.begin() + 10, values.begin() + 50);
  std::vector<float> host(64, 1.0f);
  const auto cases = bad_sgemm_cases(a.as<float>(), b.as<float>(), c.as<float>(), host.data());
  for (const fg_sgemm_algo_t algo : algos_under_test(handle.get())) {
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), algo));
    for (const BadSgemmCase &bad : cases)
      for (bool batched : {false, true}) {
        if (bad.batched_only && !batched) continue;
        INFO(bad.what << (batched ? ", batched" : "") << ", algorithm " << fg_sgemm_algo_name(algo));
        upload(c, c_before);
        const fg_status_t status = call_sgemm(handle.get(), bad.call, batched);
        const std::string message = fg_last_error_message();
        INFO(fg_status_name(status) << ": " << message);
        CHECK(status == FG_STATUS_INVALID_VALUE);
        CHECK(message.find(batched ? "fg_sgemm_strided_batched: " : "fg_sgemm: ") == 0);
        CHECK(message.find(bad.message_part) != std::string::npos);
        CHECK(download<float>(c, 40) == c_before);
      }
  }
  // The valid call the cases vary does succeed.
  REQUIRE_FG_OK(call_sgemm(handle.get(), valid_sgemm_call(a.as<float>(), b.as<float>(), c.as<float>()), true));
}

TEST_CASE("rowmean_matvec: every bad argument is named and writes nothing", "[errors]") {
  Handle handle;
  DeviceMemory input(24 * sizeof(float)), matrix(16 * sizeof(float)), output(8 * sizeof(float));
  std::vector<float> values(24);
  fill_uniform(values, 6);
  upload(input, values);
  upload(matrix, std::vector<float>(values.begin(), values.begin() + 16));
  const std::vector<float> output_before(values.begin() + 3, values.begin() + 11);
  std::vector<float> host(64, 1.0f);
  for (const fg_rowmean_algo_t algo : carried_rowmean_algos(handle.get())) {
    REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), algo));
    for (const BadRowmeanCase &bad : bad_rowmean_cases(input.get(), matrix.get(), output.get(), host.data())) {
      INFO(bad.what << ", algorithm " << fg_rowmean_algo_name(algo));
      upload(output, output_before);
      const auto &c = bad.call;
      const fg_status_t status = fg_rowmean_matvec(handle.get(), c.dtype, c.input, c.matrix, c.output, c.L, c.M, c.N);
      const std::string message = fg_last_error_message();
      INFO(fg_status_name(status) << ": " << message);
      CHECK(status == FG_STATUS_INVALID_VALUE);
      CHECK(message.find("fg_rowmean_matvec: ") == 0);
      CHECK(message.find(bad.message_part) != std::string::npos);
      CHECK(download<float>(output, 8) == output_before);
    }
  }
  const RowmeanCall ok = valid_rowmean_call(input.get(), matrix.get(), output.get());
  REQUIRE_FG_OK(fg_rowmean_matvec(handle.get(), ok.dtype, ok.input, ok.matrix, ok.output, ok.L, ok.M, ok.N));
}

TEST_CASE("algorithm selection: bad ids are refused, carried ones named", "[errors]") {
  Handle handle;
  CHECK(fg_set_sgemm_algo(handle.get(), static_cast<fg_sgemm_algo_t>(-1)) == FG_STATUS_INVALID_VALUE);
  CHECK(fg_set_sgemm_algo(handle.get(), static_cast<fg_sgemm_algo_t>(101)) == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).find("fg_set_sgemm_algo: algo = 101") == 0);
  CHECK(fg_set_sgemm_algo(handle.get(), static_cast<fg_sgemm_algo_t>(99)) == FG_STATUS_NOT_SUPPORTED);
  CHECK(fg_set_rowmean_algo(handle.get(), static_cast<fg_rowmean_algo_t>(1000)) == FG_STATUS_INVALID_VALUE);
  CHECK(fg_set_rowmean_algo(handle.get(), static_cast<fg_rowmean_algo_t>(99)) == FG_STATUS_NOT_SUPPORTED);
  fg_sgemm_algo_t selected = FG_SGEMM_NAIVE;
  REQUIRE_FG_OK(fg_get_sgemm_algo(handle.get(), &selected));
  CHECK(selected == FG_SGEMM_AUTO);  // refused selections change nothing
  for (fg_sgemm_algo_t algo : carried_sgemm_algos(handle.get()))
    CHECK(std::string(fg_sgemm_algo_name(algo)) != "unknown");
  for (fg_rowmean_algo_t algo : carried_rowmean_algos(handle.get()))
    CHECK(std::string(fg_rowmean_algo_name(algo)) != "unknown");
  CHECK(fg_get_sgemm_algo(handle.get(), nullptr) == FG_STATUS_INVALID_VALUE);
  CHECK(fg_get_stream(handle.get(), nullptr) == FG_STATUS_INVALID_VALUE);
}

TEST_CASE("fg_create binds to the current device and fg_destroy accepts NULL", "[handle]") {
  fg_handle_t handle = nullptr;
  REQUIRE_FG_OK(fg_create(&handle));
  CHECK(handle != nullptr);
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(1);
  REQUIRE_FG_OK(fg_get_stream(handle, &stream));
  CHECK(stream == nullptr);
  REQUIRE_FG_OK(fg_destroy(handle));
  REQUIRE_FG_OK(fg_destroy(nullptr));
}
