// SPDX-License-Identifier: Apache-2.0
// Reproducibility across shapes: the ABI (values, names, NULL arguments, invalid levels, FASTGEMM_REPRODUCIBLE
// as fg_create reads it), AUTO's choices under FG_REPRODUCIBLE_SHAPE, the refusal of forced algorithms that
// cannot honour it, and the host path's grid with k in one chunk. The parts that need a handle run where a GPU
// is present; the rest runs everywhere.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include <cuda_runtime_api.h>

#include "auto_choice.hpp"
#include "fastgemm/fastgemm.h"
#include "host/host_gemm.hpp"
#include "sgemm/registry.hpp"

namespace {

namespace detail = fastgemm::detail;

bool has_device() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

// Sets FASTGEMM_REPRODUCIBLE (nullptr unsets it) for the guard's life, then restores what the process had.
class ReproducibleVariable {
 public:
  explicit ReproducibleVariable(const char *value) {
    const char *before = std::getenv(kName);
    had_value_ = before != nullptr;
    if (had_value_) before_ = before;
    set(value);
  }
  ~ReproducibleVariable() { set(had_value_ ? before_.c_str() : nullptr); }
  ReproducibleVariable(const ReproducibleVariable &) = delete;
  ReproducibleVariable &operator=(const ReproducibleVariable &) = delete;

 private:
  static constexpr const char *kName = "FASTGEMM_REPRODUCIBLE";
  static void set(const char *value) {
    if (value != nullptr)
      CHECK(setenv(kName, value, 1) == 0);
    else
      CHECK(unsetenv(kName) == 0);
  }

  bool had_value_ = false;
  std::string before_;
};

fg_reproducibility_t level_of(fg_handle_t handle) {
  fg_reproducibility_t level = static_cast<fg_reproducibility_t>(-1);
  const fg_status_t status = fg_get_reproducibility(handle, &level);
  INFO(fg_status_name(status) << ": " << fg_last_error_message());
  REQUIRE(status == FG_STATUS_SUCCESS);
  return level;
}

fg_handle_t create_under(const char *value) {
  ReproducibleVariable variable(value);
  fg_handle_t handle = nullptr;
  const fg_status_t status = fg_create(&handle);
  INFO("FASTGEMM_REPRODUCIBLE=" << (value != nullptr ? value : "(unset)") << ": " << fg_status_name(status) << ": "
                                << fg_last_error_message());
  REQUIRE(status == FG_STATUS_SUCCESS);
  REQUIRE(handle != nullptr);
  return handle;
}

// Made-up device addresses: the registry only looks at their alignment.
float *const fake_a = reinterpret_cast<float *>(uintptr_t{1} << 40);
float *const fake_b = reinterpret_cast<float *>(uintptr_t{2} << 40);
float *const fake_c = reinterpret_cast<float *>(uintptr_t{3} << 40);

detail::GemmProblem problem(int64_t m, int64_t n, int64_t k, int64_t batch, int64_t misalign,
                            fg_reproducibility_t level) {
  detail::GemmProblem p;
  p.m = m, p.n = n, p.k = k, p.batch = batch;
  p.a = {fake_a + misalign, k, m * k, false};
  p.b = {fake_b, n, k * n, false};
  p.c = fake_c + misalign;
  p.ldc = n;
  p.stride_c = m * n;
  p.reproducibility = level;
  return p;
}

detail::DeviceInfo hopper() {
  detail::DeviceInfo device;
  device.cc_major = 9, device.sm_count = 132, device.smem_per_block_optin = 227 * 1024, device.l2_bytes = 50 << 20;
  return device;
}

detail::DeviceInfo turing() {
  detail::DeviceInfo device;
  device.cc_major = 7, device.cc_minor = 5, device.sm_count = 40, device.smem_per_block_optin = 64 * 1024;
  return device;
}

bool shape_reproducible(fg_sgemm_algo_t algo) {
  switch (algo) {
    case FG_SGEMM_NAIVE:
    case FG_SGEMM_SMEM:
    case FG_SGEMM_SMEM_VEC4:
    case FG_SGEMM_BANK_FREE:
    case FG_SGEMM_DOUBLE_BUFFER:
    case FG_SGEMM_PIPELINED:
    case FG_SGEMM_SMALL_TILE: return true;
    default: return false;
  }
}

}  // namespace

TEST_CASE("reproducibility: values and names", "[abi]") {
  CHECK(FG_REPRODUCIBLE_RUN == 0);
  CHECK(FG_REPRODUCIBLE_SHAPE == 1);
  CHECK(std::string(fg_reproducibility_name(FG_REPRODUCIBLE_RUN)) == "run");
  CHECK(std::string(fg_reproducibility_name(FG_REPRODUCIBLE_SHAPE)) == "shape");
  for (int unknown : {2, -1, 100, 1 << 30})
    CHECK(std::string(fg_reproducibility_name(static_cast<fg_reproducibility_t>(unknown))) == "unknown");
}

TEST_CASE("reproducibility: NULL handle and NULL pointer", "[abi]") {
  fg_reproducibility_t level = FG_REPRODUCIBLE_SHAPE;
  CHECK(fg_set_reproducibility(nullptr, FG_REPRODUCIBLE_RUN) == FG_STATUS_INVALID_HANDLE);
  CHECK(std::string(fg_last_error_message()) == "fg_set_reproducibility: handle is NULL");
  CHECK(fg_get_reproducibility(nullptr, &level) == FG_STATUS_INVALID_HANDLE);
  CHECK(std::string(fg_last_error_message()) == "fg_get_reproducibility: handle is NULL");
  CHECK(level == FG_REPRODUCIBLE_SHAPE);  // nothing written on failure
  CHECK(fg_get_reproducibility(nullptr, nullptr) == FG_STATUS_INVALID_HANDLE);
  CHECK(fg_set_reproducibility(nullptr, static_cast<fg_reproducibility_t>(7)) == FG_STATUS_INVALID_HANDLE);
}

TEST_CASE("FASTGEMM_REPRODUCIBLE that names no level makes fg_create fail, with or without a device", "[abi]") {
  for (const char *value : {"bogus", "SHAPE", "shape ", "1", ""}) {
    INFO("FASTGEMM_REPRODUCIBLE=\"" << value << "\"");
    ReproducibleVariable variable(value);
    fg_handle_t handle = reinterpret_cast<fg_handle_t>(&variable);
    CHECK(fg_create(&handle) == FG_STATUS_INVALID_VALUE);
    CHECK(handle == nullptr);
    const std::string message = fg_last_error_message();
    INFO(message);
    CHECK(message.find("fg_create: ") == 0);
    CHECK(message.find("FASTGEMM_REPRODUCIBLE") != std::string::npos);
  }
}

TEST_CASE("a handle's reproducibility: default, set, get, refused values, the variable", "[abi]") {
  if (!has_device()) {
    for (const char *value : {"run", "shape"}) {
      ReproducibleVariable variable(value);
      fg_handle_t handle = nullptr;
      CHECK(fg_create(&handle) == FG_STATUS_NO_DEVICE);
    }
    return;
  }
  fg_handle_t handle = create_under(nullptr);
  CHECK(level_of(handle) == FG_REPRODUCIBLE_RUN);
  CHECK(fg_set_reproducibility(handle, FG_REPRODUCIBLE_SHAPE) == FG_STATUS_SUCCESS);
  CHECK(level_of(handle) == FG_REPRODUCIBLE_SHAPE);
  for (int invalid : {2, -1, 1 << 30}) {
    INFO("level " << invalid);
    CHECK(fg_set_reproducibility(handle, static_cast<fg_reproducibility_t>(invalid)) == FG_STATUS_INVALID_VALUE);
    CHECK(std::string(fg_last_error_message()) ==
          "fg_set_reproducibility: level = " + std::to_string(invalid) + " is no fg_reproducibility_t");
    CHECK(level_of(handle) == FG_REPRODUCIBLE_SHAPE);
  }
  CHECK(fg_get_reproducibility(handle, nullptr) == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()) == "fg_get_reproducibility: level is NULL");
  // The level is neither an algorithm nor a math mode.
  fg_sgemm_algo_t algo = FG_SGEMM_NAIVE;
  CHECK(fg_get_sgemm_algo(handle, &algo) == FG_STATUS_SUCCESS);
  CHECK(algo == FG_SGEMM_AUTO);
  fg_math_mode_t mode = FG_MATH_FP32_EMULATED;
  CHECK(fg_get_math_mode(handle, &mode) == FG_STATUS_SUCCESS);
  CHECK(mode == FG_MATH_FP32);

  fg_handle_t shape = create_under("shape");
  fg_handle_t run = create_under("run");
  CHECK(level_of(shape) == FG_REPRODUCIBLE_SHAPE);
  CHECK(level_of(run) == FG_REPRODUCIBLE_RUN);
  {
    ReproducibleVariable variable("bogus");
    CHECK(level_of(shape) == FG_REPRODUCIBLE_SHAPE);  // read by fg_create only
  }
  for (fg_handle_t made : {handle, shape, run}) CHECK(fg_destroy(made) == FG_STATUS_SUCCESS);
}

TEST_CASE("FG_REPRODUCIBLE_SHAPE: AUTO picks only kernels of one FMA chain, whatever the shape", "[auto]") {
  for (const detail::DeviceInfo &device : {hopper(), turing()})
    for (fg_math_mode_t math : {FG_MATH_FP32, FG_MATH_FP32_EMULATED})
      for (int64_t size : {1, 7, 20, 128, 129, 384, 1000, 4096, 16384})
        for (int64_t k : {int64_t{1}, size, int64_t{16384}})
          for (int64_t batch : {1, 64})
            for (int64_t misalign : {0, 1}) {
              detail::GemmProblem p = problem(size, size, k, batch, misalign, FG_REPRODUCIBLE_SHAPE);
              p.math = math;
              INFO("arch " << device.arch() << " math " << math << " size " << size << " k " << k << " batch " << batch
                           << " misaligned " << misalign);
              const detail::Preference<fg_sgemm_algo_t> preference = detail::sgemm_auto_preference(p, device);
              for (fg_sgemm_algo_t algo : preference) CHECK(shape_reproducible(algo));
              // The last one runs every problem, so AUTO never falls back to another table entry.
              CHECK(preference[preference.size() - 1] == FG_SGEMM_NAIVE);
              const fg_sgemm_algo_t choice = fgtest::auto_sgemm_choice(p, device);
              CHECK(shape_reproducible(choice));
              const detail::SgemmVariant *variant = detail::find_sgemm_variant(choice);
              REQUIRE(variant != nullptr);
              CHECK(variant->can_implement(p, device).ok());
              size_t bytes = 1;
              CHECK(detail::sgemm_workspace_bytes(p, device, FG_SGEMM_AUTO, &bytes).ok());
              CHECK(bytes == 0);  // no split of k, so no partial sums
            }
  // Where the default setting leaves the project's kernels for cuBLAS or split_k, this one keeps to them.
  const detail::DeviceInfo device = hopper();
  CHECK(fgtest::auto_sgemm_choice(problem(4096, 4096, 4096, 1, 0, FG_REPRODUCIBLE_RUN), device) == FG_SGEMM_CUBLAS);
  CHECK(fgtest::auto_sgemm_choice(problem(4096, 4096, 4096, 1, 0, FG_REPRODUCIBLE_SHAPE), device) ==
        FG_SGEMM_DOUBLE_BUFFER);
  CHECK(fgtest::auto_sgemm_choice(problem(4096, 4096, 4096, 1, 1, FG_REPRODUCIBLE_SHAPE), device) ==
        FG_SGEMM_PIPELINED);  // misaligned: no 128-bit loads
  CHECK(fgtest::auto_sgemm_choice(problem(256, 256, 16384, 1, 0, FG_REPRODUCIBLE_SHAPE), device) ==
        FG_SGEMM_SMALL_TILE);  // few tiles, long k: the most blocks without a split
  CHECK(fgtest::auto_sgemm_choice(problem(2, 2, 2, 1, 0, FG_REPRODUCIBLE_SHAPE), device) == FG_SGEMM_SMALL_TILE);
  CHECK(fgtest::auto_sgemm_choice(problem(64, 64, 64, 1024, 0, FG_REPRODUCIBLE_SHAPE), device) ==
        FG_SGEMM_SMALL_TILE);  // many batches of products smaller than one large tile
  CHECK(fgtest::auto_sgemm_choice(problem(256, 256, 256, 64, 0, FG_REPRODUCIBLE_SHAPE), device) ==
        FG_SGEMM_DOUBLE_BUFFER);
  CHECK(fgtest::auto_sgemm_choice(problem(1024, 1024, 1024, 1, 0, FG_REPRODUCIBLE_SHAPE), device) ==
        FG_SGEMM_PIPELINED);  // 64 tiles of 128 x 128 for 132 SMs
  CHECK(fgtest::auto_sgemm_choice(problem(2, 2, 2, 1, 0, FG_REPRODUCIBLE_SHAPE), turing()) == FG_SGEMM_SMEM);
}

TEST_CASE("FG_REPRODUCIBLE_SHAPE: a forced algorithm outside the one FMA chain is refused, naming why", "[auto]") {
  const detail::DeviceInfo device = hopper();
  const detail::GemmProblem p = problem(256, 256, 4096, 1, 0, FG_REPRODUCIBLE_SHAPE);
  const struct {
    fg_sgemm_algo_t algo;
    const char *name, *why;
  } refused[] = {{FG_SGEMM_SPLIT_K, "split_k", "split of k"},
                 {FG_SGEMM_CUBLAS, "cublas", "cuBLAS"},
                 {FG_SGEMM_OZAKI_INT8, "", "INT8"}};
  for (const auto &forced : refused) {
    INFO("algorithm " << forced.algo);
    size_t bytes = 7;
    const detail::Status status = detail::sgemm_workspace_bytes(p, device, forced.algo, &bytes);
    INFO(status.message);
    CHECK(status.code == detail::StatusCode::not_supported);
    CHECK(status.message.find("FG_REPRODUCIBLE_SHAPE") != std::string::npos);
    CHECK(status.message.find(forced.why) != std::string::npos);
    CHECK(status.message.find(forced.name) != std::string::npos);
    CHECK(bytes == 7);
    // The default setting runs them (the emulation's own conditions are its tests' business).
    detail::GemmProblem run = p;
    run.reproducibility = FG_REPRODUCIBLE_RUN;
    if (forced.algo != FG_SGEMM_OZAKI_INT8) CHECK(detail::sgemm_workspace_bytes(run, device, forced.algo, &bytes).ok());
  }
  for (fg_sgemm_algo_t algo : {FG_SGEMM_NAIVE, FG_SGEMM_SMEM, FG_SGEMM_SMEM_VEC4, FG_SGEMM_BANK_FREE,
                               FG_SGEMM_DOUBLE_BUFFER, FG_SGEMM_PIPELINED, FG_SGEMM_SMALL_TILE}) {
    INFO("algorithm " << algo);
    size_t bytes = 7;
    CHECK(detail::sgemm_workspace_bytes(p, device, algo, &bytes).ok());
    CHECK(bytes == 0);
  }
}

TEST_CASE("fg_sgemm_host's grid with k in one chunk", "[host]") {
  const size_t h100 = size_t{80} << 30, small_device = size_t{4} << 30;
  for (int64_t k : {int64_t{1}, int64_t{300}, int64_t{4096}, int64_t{100000}, int64_t{1} << 22})
    for (size_t memory : {h100, small_device})
      for (int64_t limit : {int64_t{0}, int64_t{100}}) {
        INFO("k " << k << " memory " << memory << " tile limit " << limit);
        const detail::HostTiling t = detail::choose_host_tiling(20000, 9000, k, memory, limit, true);
        CHECK(t.tile_k == k);
        CHECK(t.tile_m >= 1);
        CHECK(t.tile_n >= 1);
        CHECK(t.tile_m <= 20000);
        CHECK(t.tile_n <= 9000);
        if (limit > 0) CHECK(t.tile_m <= limit);
        // The panels and C tiles the grid's formula counts fit the staging budget, unless the tiles are as
        // narrow as they go.
        const size_t bytes = static_cast<size_t>(2 * (t.tile_m + t.tile_n) * k + 2 * t.tile_m * t.tile_n) * 4;
        if (t.tile_m > 64 || t.tile_n > 64) CHECK(bytes <= std::min(memory / 4, size_t{6} << 30));
      }
  // Shallow k: the default grid's tiles, only k is whole.
  const detail::HostTiling chunked = detail::choose_host_tiling(16384, 16384, 16384, size_t{80} << 30, 0);
  const detail::HostTiling whole = detail::choose_host_tiling(16384, 16384, 16384, size_t{80} << 30, 0, true);
  CHECK(chunked.tile_k < 16384);
  CHECK(whole.tile_k == 16384);
  CHECK(whole.tile_m == chunked.tile_m);
  CHECK(whole.tile_n == chunked.tile_n);
  CHECK(detail::host_whole_k_limit() == int64_t{1} << 22);
}
