// SPDX-License-Identifier: Apache-2.0
// The math mode's ABI: its values and names, NULL arguments, invalid modes, and FASTGEMM_MATH as fg_create
// reads it. The parts that need a handle run where a GPU is present; the rest runs everywhere.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include <cuda_runtime_api.h>

#include "fastgemm/fastgemm.h"
#include "sgemm/registry.hpp"

namespace {

bool has_device() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

// Sets FASTGEMM_MATH (nullptr unsets it) for the guard's life, then restores what the process had.
class MathVariable {
 public:
  explicit MathVariable(const char *value) {
    const char *before = std::getenv("FASTGEMM_MATH");
    had_value_ = before != nullptr;
    if (had_value_) before_ = before;
    set(value);
  }
  ~MathVariable() { set(had_value_ ? before_.c_str() : nullptr); }
  MathVariable(const MathVariable &) = delete;
  MathVariable &operator=(const MathVariable &) = delete;

  static void set(const char *value) {
    if (value != nullptr)
      CHECK(setenv("FASTGEMM_MATH", value, 1) == 0);
    else
      CHECK(unsetenv("FASTGEMM_MATH") == 0);
  }

 private:
  bool had_value_ = false;
  std::string before_;
};

fg_math_mode_t mode_of(fg_handle_t handle) {
  fg_math_mode_t mode = static_cast<fg_math_mode_t>(-1);
  const fg_status_t status = fg_get_math_mode(handle, &mode);
  INFO(fg_status_name(status) << ": " << fg_last_error_message());
  REQUIRE(status == FG_STATUS_SUCCESS);
  return mode;
}

// A handle made under the given FASTGEMM_MATH; the test stops without a device.
fg_handle_t create_under(const char *value) {
  MathVariable variable(value);
  fg_handle_t handle = nullptr;
  const fg_status_t status = fg_create(&handle);
  INFO("FASTGEMM_MATH=" << (value != nullptr ? value : "(unset)") << ": " << fg_status_name(status) << ": "
                        << fg_last_error_message());
  REQUIRE(status == FG_STATUS_SUCCESS);
  REQUIRE(handle != nullptr);
  return handle;
}

}  // namespace

TEST_CASE("math mode: values, names, and the algorithm id reserved for emulation", "[abi]") {
  CHECK(FG_MATH_FP32 == 0);
  CHECK(FG_MATH_FP32_EMULATED == 1);
  CHECK(FG_SGEMM_OZAKI_INT8 == 9);
  CHECK(std::string(fg_math_mode_name(FG_MATH_FP32)) == "fp32");
  CHECK(std::string(fg_math_mode_name(FG_MATH_FP32_EMULATED)) == "fp32_emulated");
  for (int unknown : {2, -1, 100, 1 << 30})
    CHECK(std::string(fg_math_mode_name(static_cast<fg_math_mode_t>(unknown))) == "unknown");
  // The emulating algorithm has its name exactly when the build carries it.
  const bool carried = fastgemm::detail::find_sgemm_variant(FG_SGEMM_OZAKI_INT8) != nullptr;
  CHECK(std::string(fg_sgemm_algo_name(FG_SGEMM_OZAKI_INT8)) == (carried ? "ozaki_int8" : "unknown"));
}

TEST_CASE("math mode: NULL handle and NULL pointer", "[abi]") {
  fg_math_mode_t mode = FG_MATH_FP32_EMULATED;
  CHECK(fg_set_math_mode(nullptr, FG_MATH_FP32) == FG_STATUS_INVALID_HANDLE);
  CHECK(std::string(fg_last_error_message()) == "fg_set_math_mode: handle is NULL");
  CHECK(fg_get_math_mode(nullptr, &mode) == FG_STATUS_INVALID_HANDLE);
  CHECK(std::string(fg_last_error_message()) == "fg_get_math_mode: handle is NULL");
  CHECK(mode == FG_MATH_FP32_EMULATED);  // nothing written on failure
  // The handle is checked first, as in every other call.
  CHECK(fg_get_math_mode(nullptr, nullptr) == FG_STATUS_INVALID_HANDLE);
  CHECK(fg_set_math_mode(nullptr, static_cast<fg_math_mode_t>(7)) == FG_STATUS_INVALID_HANDLE);
}

TEST_CASE("FASTGEMM_MATH that names no mode makes fg_create fail, with or without a device", "[abi]") {
  for (const char *value : {"bogus", "FP32", "fp32 ", "fp32_emulated,fp32", ""}) {
    INFO("FASTGEMM_MATH=\"" << value << "\"");
    MathVariable variable(value);
    fg_handle_t handle = reinterpret_cast<fg_handle_t>(&variable);
    CHECK(fg_create(&handle) == FG_STATUS_INVALID_VALUE);
    CHECK(handle == nullptr);
    const std::string message = fg_last_error_message();
    INFO(message);
    CHECK(message.find("fg_create: ") == 0);
    CHECK(message.find("FASTGEMM_MATH") != std::string::npos);
  }
}

TEST_CASE("a handle's math mode: default, set, get, refused values", "[abi]") {
  if (!has_device()) {
    // The valid values are accepted: fg_create fails only for want of a device.
    for (const char *value : {"fp32", "fp32_emulated"}) {
      MathVariable variable(value);
      fg_handle_t handle = nullptr;
      CHECK(fg_create(&handle) == FG_STATUS_NO_DEVICE);
    }
    return;
  }
  fg_handle_t handle = create_under(nullptr);
  CHECK(mode_of(handle) == FG_MATH_FP32);
  CHECK(fg_set_math_mode(handle, FG_MATH_FP32_EMULATED) == FG_STATUS_SUCCESS);
  CHECK(mode_of(handle) == FG_MATH_FP32_EMULATED);
  for (int invalid : {2, -1, 1 << 30}) {
    INFO("mode " << invalid);
    CHECK(fg_set_math_mode(handle, static_cast<fg_math_mode_t>(invalid)) == FG_STATUS_INVALID_VALUE);
    CHECK(std::string(fg_last_error_message()) ==
          "fg_set_math_mode: mode = " + std::to_string(invalid) + " is no fg_math_mode_t");
    CHECK(mode_of(handle) == FG_MATH_FP32_EMULATED);  // a refused value changes nothing
  }
  CHECK(fg_get_math_mode(handle, nullptr) == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()) == "fg_get_math_mode: mode is NULL");
  CHECK(fg_set_math_mode(handle, FG_MATH_FP32) == FG_STATUS_SUCCESS);
  CHECK(mode_of(handle) == FG_MATH_FP32);
  // The mode is no algorithm: the selected one stays AUTO.
  fg_sgemm_algo_t algo = FG_SGEMM_NAIVE;
  CHECK(fg_get_sgemm_algo(handle, &algo) == FG_STATUS_SUCCESS);
  CHECK(algo == FG_SGEMM_AUTO);
  CHECK(fg_destroy(handle) == FG_STATUS_SUCCESS);
}

TEST_CASE("FASTGEMM_MATH sets the mode of each handle fg_create makes, and only then", "[abi]") {
  if (!has_device()) return;  // the no-device answers are the test case above's
  fg_handle_t emulated = create_under("fp32_emulated");
  fg_handle_t plain = create_under("fp32");
  CHECK(mode_of(emulated) == FG_MATH_FP32_EMULATED);
  CHECK(mode_of(plain) == FG_MATH_FP32);
  {
    // Later changes of the variable reach only handles made after them.
    MathVariable variable("bogus");
    fg_handle_t refused = nullptr;
    CHECK(fg_create(&refused) == FG_STATUS_INVALID_VALUE);
    CHECK(refused == nullptr);
    CHECK(mode_of(emulated) == FG_MATH_FP32_EMULATED);
    CHECK(mode_of(plain) == FG_MATH_FP32);
  }
  fg_handle_t unset = create_under(nullptr);
  CHECK(mode_of(unset) == FG_MATH_FP32);
  CHECK(mode_of(emulated) == FG_MATH_FP32_EMULATED);
  // A handle's own setting overrides the variable's, for that handle alone.
  CHECK(fg_set_math_mode(emulated, FG_MATH_FP32) == FG_STATUS_SUCCESS);
  CHECK(fg_set_math_mode(plain, FG_MATH_FP32_EMULATED) == FG_STATUS_SUCCESS);
  CHECK(mode_of(emulated) == FG_MATH_FP32);
  CHECK(mode_of(plain) == FG_MATH_FP32_EMULATED);
  CHECK(mode_of(unset) == FG_MATH_FP32);
  for (fg_handle_t handle : {emulated, plain, unset}) CHECK(fg_destroy(handle) == FG_STATUS_SUCCESS);
}

// Run by the unit.math_environment CTest entry, which starts test_unit with FASTGEMM_MATH=fp32_emulated: the
// variable as a program finds it at start-up, before anything sets it.
TEST_CASE("FASTGEMM_MATH=fp32_emulated in the program's environment", "[.math_environment]") {
  REQUIRE(std::getenv("FASTGEMM_MATH") != nullptr);
  REQUIRE(std::string(std::getenv("FASTGEMM_MATH")) == "fp32_emulated");
  fg_handle_t handle = nullptr;
  const fg_status_t status = fg_create(&handle);
  if (!has_device()) {
    CHECK(status == FG_STATUS_NO_DEVICE);
    return;
  }
  REQUIRE(status == FG_STATUS_SUCCESS);
  CHECK(mode_of(handle) == FG_MATH_FP32_EMULATED);
  CHECK(fg_destroy(handle) == FG_STATUS_SUCCESS);
}
