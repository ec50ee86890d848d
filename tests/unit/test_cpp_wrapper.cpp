// SPDX-License-Identifier: Apache-2.0
// fastgemm.hpp: errors become fastgemm::Error with status and message; the handle is move-only RAII.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <string>
#include <type_traits>
#include <utility>

#include <cuda_runtime_api.h>

#include "fastgemm/fastgemm.hpp"

static_assert(!std::is_copy_constructible<fastgemm::Handle>::value, "a handle has one owner");
static_assert(std::is_nothrow_move_constructible<fastgemm::Handle>::value, "handles move");
// Every call of a handle has its method; the emulation report's fields keep the C types.
static_assert(
    std::is_same<decltype(std::declval<const fastgemm::Handle &>().last_sgemm_emulation().moduli), int>::value,
    "last_sgemm_emulation() mirrors fg_get_last_sgemm_emulation");
static_assert(std::is_same<decltype(std::declval<const fastgemm::Handle &>().last_sgemm_emulation().fp32_elements),
                           int64_t>::value,
              "last_sgemm_emulation() mirrors fg_get_last_sgemm_emulation");

TEST_CASE("C++: check() throws Error with the status and the library's message", "[cpp]") {
  CHECK_NOTHROW(fastgemm::check(FG_STATUS_SUCCESS));
  // A real failure, so that the message is the library's.
  const fg_status_t status = fg_set_stream(nullptr, nullptr);
  try {
    fastgemm::check(status);
    FAIL("check() did not throw");
  } catch (const fastgemm::Error &error) {
    CHECK(error.status() == FG_STATUS_INVALID_HANDLE);
    CHECK(std::string(error.status_name()) == "FG_STATUS_INVALID_HANDLE");
    CHECK(std::string(error.what()) == "fg_set_stream: handle is NULL");
  }
}

TEST_CASE("C++: a Handle reports the device, or its absence, by exception", "[cpp]") {
  int devices = 0;
  const bool has_device = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  if (!has_device) {
    try {
      fastgemm::Handle handle;
      FAIL("Handle() did not throw without a device");
    } catch (const fastgemm::Error &error) {
      CHECK(error.status() == FG_STATUS_NO_DEVICE);
      CHECK(std::string(error.what()).find("fg_create: ") == 0);
    }
    return;
  }
  fastgemm::Handle first;
  REQUIRE(first.get() != nullptr);
  first.set_sgemm_algo(FG_SGEMM_NAIVE);
  fastgemm::Handle second(std::move(first));
  CHECK(first.get() == nullptr);
  CHECK(second.sgemm_algo() == FG_SGEMM_NAIVE);
  CHECK(second.stream() == nullptr);
  try {
    second.set_sgemm_algo(static_cast<fg_sgemm_algo_t>(500));
    FAIL("a bad algorithm id was accepted");
  } catch (const fastgemm::Error &error) {
    CHECK(error.status() == FG_STATUS_INVALID_VALUE);
    CHECK(std::string(error.what()).find("fg_set_sgemm_algo: algo = 500") == 0);
  }
  fastgemm::Handle third;
  third = std::move(second);
  CHECK(third.sgemm_algo() == FG_SGEMM_NAIVE);
}

TEST_CASE("C++: the math mode through the wrapper", "[cpp]") {
  CHECK(std::string(fastgemm::math_mode_name(FG_MATH_FP32)) == "fp32");
  CHECK(std::string(fastgemm::math_mode_name(FG_MATH_FP32_EMULATED)) == "fp32_emulated");
  CHECK(std::string(fastgemm::math_mode_name(static_cast<fg_math_mode_t>(5))) == "unknown");
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return;  // a Handle needs a device
  fastgemm::Handle handle;
  handle.set_math_mode(FG_MATH_FP32_EMULATED);
  CHECK(handle.math_mode() == FG_MATH_FP32_EMULATED);
  try {
    handle.set_math_mode(static_cast<fg_math_mode_t>(5));
    FAIL("an invalid math mode was accepted");
  } catch (const fastgemm::Error &error) {
    CHECK(error.status() == FG_STATUS_INVALID_VALUE);
    CHECK(std::string(error.what()) == "fg_set_math_mode: mode = 5 is no fg_math_mode_t");
  }
  CHECK(handle.math_mode() == FG_MATH_FP32_EMULATED);
  fastgemm::Handle moved(std::move(handle));
  CHECK(moved.math_mode() == FG_MATH_FP32_EMULATED);
  CHECK_THROWS_AS(handle.math_mode(), fastgemm::Error);  // the moved-from handle is NULL
  moved.set_math_mode(FG_MATH_FP32);
  CHECK(moved.math_mode() == FG_MATH_FP32);
}

TEST_CASE("C++: the reproducibility through the wrapper", "[cpp]") {
  CHECK(std::string(fastgemm::reproducibility_name(FG_REPRODUCIBLE_RUN)) == "run");
  CHECK(std::string(fastgemm::reproducibility_name(FG_REPRODUCIBLE_SHAPE)) == "shape");
  CHECK(std::string(fastgemm::reproducibility_name(static_cast<fg_reproducibility_t>(5))) == "unknown");
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return;  // a Handle needs a device
  fastgemm::Handle handle;
  handle.set_reproducibility(FG_REPRODUCIBLE_SHAPE);
  CHECK(handle.reproducibility() == FG_REPRODUCIBLE_SHAPE);
  try {
    handle.set_reproducibility(static_cast<fg_reproducibility_t>(5));
    FAIL("an invalid reproducibility was accepted");
  } catch (const fastgemm::Error &error) {
    CHECK(error.status() == FG_STATUS_INVALID_VALUE);
    CHECK(std::string(error.what()) == "fg_set_reproducibility: level = 5 is no fg_reproducibility_t");
  }
  CHECK(handle.reproducibility() == FG_REPRODUCIBLE_SHAPE);
  fastgemm::Handle moved(std::move(handle));
  CHECK(moved.reproducibility() == FG_REPRODUCIBLE_SHAPE);
  CHECK_THROWS_AS(handle.reproducibility(), fastgemm::Error);  // the moved-from handle is NULL
  moved.set_reproducibility(FG_REPRODUCIBLE_RUN);
  CHECK(moved.reproducibility() == FG_REPRODUCIBLE_RUN);
}
