// SPDX-License-Identifier: Apache-2.0
// fg_rowmean_matvec against an extended-precision CPU reference, for every algorithm the build carries and
// AUTO, both element types.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <type_traits>

#include "gpu/gemm_harness.hpp"

using namespace fgtest;

namespace {

std::vector<fg_rowmean_algo_t> rowmean_algos_under_test(fg_handle_t handle) {
  std::vector<fg_rowmean_algo_t> algos{FG_ROWMEAN_AUTO};
  for (fg_rowmean_algo_t algo : carried_rowmean_algos(handle)) algos.push_back(algo);
  REQUIRE(algos.size() >= 3);  // AUTO, the two-pass kernel and cuBLAS at least
  return algos;
}

struct DeviceLimits {
  int arch = 0;
  int64_t shared_bytes = 0;  // the most dynamic shared memory one block may ask for
};

DeviceLimits current_device_limits() {
  int device = 0, major = 0, minor = 0, shared = 0;
  REQUIRE_CUDA_OK(cudaGetDevice(&device));
  REQUIRE_CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  REQUIRE_CUDA_OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  REQUIRE_CUDA_OK(cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return DeviceLimits{major * 10 + minor, shared};
}

int64_t round_up(int64_t value, int64_t step) { return (value + step - 1) / step * step; }

// Each algorithm's support matrix, written from the contract rather than from the code: "" where it must run the
// problem, and otherwise a part of the reason its refusal must give. AUTO and the general algorithms run everything.
std::string expected_refusal(fg_rowmean_algo_t algo, fg_dtype_t dtype, int64_t L, const void *matrix,
                             const DeviceLimits &device) {
  const int64_t element = dtype == FG_F64 ? 8 : 4;
  switch (algo) {
    case FG_ROWMEAN_SINGLE_BLOCK:
    case FG_ROWMEAN_BLOCK_PER_BATCH:
      // One block holds a batch's rows.
      return L > 1024 ? "must be <= 1024" : "";
    case FG_ROWMEAN_COALESCED:
      // A block holds a batch's means, in double.
      return L * 8 > device.shared_bytes ? "bytes of shared memory" : "";
    case FG_ROWMEAN_FUSED: {
      // Two shared-memory tiles of 8 batches' means, rows padded for the tensor-core fragment loads.
      const int64_t means_ld = dtype == FG_F64 ? round_up(L, 16) + 2 : round_up(L, 32) + 16;
      return 2 * 8 * means_ld * element + 8 > device.shared_bytes ? "bytes of shared memory" : "";
    }
    case FG_ROWMEAN_RELAY:
      if (device.arch < 80) return "compute capability 8.0";
      if (reinterpret_cast<uintptr_t>(matrix) % 16 != 0) return "16-byte aligned";
      return L % (16 / element) != 0 ? "must be a multiple of" : "";
    default: return "";
  }
}

template <typename T>
double tolerance(fg_rowmean_algo_t algo) {
  // cuBLAS sums in T; the project's own kernels keep the error near one rounding of the result.
  if (std::is_same<T, float>::value) return algo == FG_ROWMEAN_CUBLAS ? 1e-5 : 2e-6;
  return algo == FG_ROWMEAN_CUBLAS ? 1e-12 : 1e-13;
}

struct RowmeanCase {
  int64_t L, M, N;
  int64_t offset = 0;  // elements between each allocation and its array
};

template <typename T>
void check_rowmean_case(fg_handle_t handle, const std::vector<fg_rowmean_algo_t> &algos, const RowmeanCase &rc,
                        uint64_t seed) {
  const fg_dtype_t dtype = std::is_same<T, float>::value ? FG_F32 : FG_F64;
  INFO((dtype == FG_F32 ? "f32" : "f64") << " L=" << rc.L << " M=" << rc.M << " N=" << rc.N << " offset=" << rc.offset);
  std::vector<T> input(static_cast<size_t>(rc.N * rc.L * rc.M)), matrix(static_cast<size_t>(rc.L * rc.L));
  fill_uniform(input, seed * 2 + 1, T(-0.5), T(1.5));
  fill_uniform(matrix, seed * 2 + 2);
  const std::vector<long double> reference = reference_rowmean(input, matrix, rc.L, rc.M, rc.N);

  const size_t output_count = static_cast<size_t>(rc.L * rc.N) + 2 * rc.offset;
  DeviceMemory input_device((input.size() + rc.offset) * sizeof(T)),
      matrix_device((matrix.size() + rc.offset) * sizeof(T)), output_device(output_count * sizeof(T));
  std::vector<T> staged(input.size() + rc.offset);
  std::copy(input.begin(), input.end(), staged.begin() + rc.offset);
  upload(input_device, staged);
  staged.assign(matrix.size() + rc.offset, T(0));
  std::copy(matrix.begin(), matrix.end(), staged.begin() + rc.offset);
  upload(matrix_device, staged);
  const std::vector<T> poison(output_count, std::numeric_limits<T>::quiet_NaN());
  const DeviceLimits device = current_device_limits();
  const T *matrix_pointer = matrix_device.as<T>() + rc.offset;

  // What each algorithm wrote, to compare AUTO's result with that of the algorithm it says it ran.
  std::map<fg_rowmean_algo_t, std::vector<T>> results;
  fg_rowmean_algo_t auto_ran = FG_ROWMEAN_AUTO;
  for (fg_rowmean_algo_t algo : algos) {
    INFO("algorithm " << fg_rowmean_algo_name(algo));
    REQUIRE_FG_OK(fg_set_rowmean_algo(handle, algo));
    upload(output_device, poison);
    fg_rowmean_algo_t ran_before = FG_ROWMEAN_AUTO;
    REQUIRE_FG_OK(fg_get_last_rowmean_algo(handle, &ran_before));
    const fg_status_t status = fg_rowmean_matvec(handle, dtype, input_device.as<T>() + rc.offset, matrix_pointer,
                                                 output_device.as<T>() + rc.offset, rc.L, rc.M, rc.N);
    const std::string message = fg_last_error_message();
    const std::vector<T> result = download<T>(output_device, output_count);
    INFO("status " << fg_status_name(status) << ": " << message);
    fg_rowmean_algo_t ran = FG_ROWMEAN_AUTO;
    REQUIRE_FG_OK(fg_get_last_rowmean_algo(handle, &ran));
    const std::string refusal = expected_refusal(algo, dtype, rc.L, matrix_pointer, device);
    if (!refusal.empty()) {
      // It refuses, says why, writes nothing, and the last algorithm run stays the one before.
      CHECK(status == FG_STATUS_NOT_SUPPORTED);
      CHECK(message.find(refusal) != std::string::npos);
      CHECK(std::memcmp(result.data(), poison.data(), result.size() * sizeof(T)) == 0);
      CHECK(ran == ran_before);
      continue;
    }
    REQUIRE(status == FG_STATUS_SUCCESS);
    // A forced algorithm runs itself; AUTO runs one of the carried algorithms.
    if (algo == FG_ROWMEAN_AUTO) {
      CHECK(ran != FG_ROWMEAN_AUTO);
      CHECK(std::string(fg_rowmean_algo_name(ran)) != "unknown");
      auto_ran = ran;
    } else {
      CHECK(ran == algo);
    }
    results[algo] = result;
    const std::vector<T> window(result.begin() + rc.offset, result.begin() + rc.offset + rc.L * rc.N);
    const double error = relative_error(window, reference);
    INFO("relative error " << error);
    CHECK(error <= tolerance<T>(algo));
    for (int64_t i = 0; i < rc.offset; ++i) {  // nothing written before or after the output
      CHECK(std::isnan(result[i]));
      CHECK(std::isnan(result[rc.offset + rc.L * rc.N + i]));
    }
  }
  // Every algorithm gives the same bits run after run, so AUTO's output is that of the algorithm it names.
  if (results.count(FG_ROWMEAN_AUTO) != 0 && results.count(auto_ran) != 0) {
    INFO("AUTO ran " << fg_rowmean_algo_name(auto_ran));
    CHECK(std::memcmp(results[FG_ROWMEAN_AUTO].data(), results[auto_ran].data(), output_count * sizeof(T)) == 0);
  }
  REQUIRE_FG_OK(fg_set_rowmean_algo(handle, FG_ROWMEAN_AUTO));
}

}  // namespace

TEMPLATE_TEST_CASE("rowmean_matvec: L x M x N grid", "[rowmean][grid]", float, double) {
  Handle handle;
  const auto algos = rowmean_algos_under_test(handle.get());
  uint64_t seed = 1;
  for (int64_t L : {1, 3, 100, 1025, 3000})
    for (int64_t M : {1, 7, 64, 513})
      for (int64_t N : {1, 5, 64}) check_rowmean_case<TestType>(handle.get(), algos, {L, M, N}, seed++);
}

TEMPLATE_TEST_CASE("rowmean_matvec: pointers offset by one element", "[rowmean][alignment]", float, double) {
  Handle handle;
  const auto algos = rowmean_algos_under_test(handle.get());
  uint64_t seed = 1000;
  for (RowmeanCase rc :
       {RowmeanCase{64, 64, 33, 1}, RowmeanCase{5, 1001, 7, 1}, RowmeanCase{1030, 8, 3, 1}, RowmeanCase{17, 1, 300, 1}})
    check_rowmean_case<TestType>(handle.get(), algos, rc, seed++);
}

TEMPLATE_TEST_CASE("rowmean_matvec: short rows, long rows, large L, many batches", "[rowmean][classes]", float,
                   double) {
  Handle handle;
  const auto algos = rowmean_algos_under_test(handle.get());
  uint64_t seed = 2000;
  for (RowmeanCase rc :
       {RowmeanCase{3, 100000, 4}, RowmeanCase{64, 1, 20000}, RowmeanCase{4096, 8, 40}, RowmeanCase{8192, 16, 3},
        RowmeanCase{1024, 64, 300}, RowmeanCase{2, 1 << 20, 1}, RowmeanCase{1, 2, 100000}, RowmeanCase{300, 32, 1}})
    check_rowmean_case<TestType>(handle.get(), algos, rc, seed++);
}

// Matrices too large to stay in L2 (over a quarter of it: the H100's 50 MB L2 streams from 1800 x 1800 f32 or
// 1300 x 1300 f64) with few batches take the staged algorithm's streaming product: partial row tiles, L not a multiple
// of the copy stages, one and two slabs, a matrix 16 bytes past its allocation's start.
TEMPLATE_TEST_CASE("rowmean_matvec: staged product of a matrix that streams from memory", "[rowmean][streaming]", float,
                   double) {
  Handle handle;
  const std::vector<fg_rowmean_algo_t> algos{FG_ROWMEAN_AUTO, FG_ROWMEAN_STAGED};
  uint64_t seed = 3000;
  const bool f32 = std::is_same<TestType, float>::value;
  const int64_t L = f32 ? 2004 : 1302;
  for (RowmeanCase rc : {RowmeanCase{L, 9, 1}, RowmeanCase{L, 3, 16}, RowmeanCase{L + 52, 2, 7}, RowmeanCase{L, 5, 32},
                         RowmeanCase{L, 4, 5, 16 / static_cast<int64_t>(sizeof(TestType))}})
    check_rowmean_case<TestType>(handle.get(), algos, rc, seed++);
}

TEST_CASE("rowmean_matvec: L or N 0 touches nothing, M 0 is invalid", "[rowmean][empty]") {
  Handle handle;
  DeviceMemory output(sizeof(float));
  upload(output, std::vector<float>{3.0f});
  fg_rowmean_algo_t ran = FG_ROWMEAN_CUBLAS;
  REQUIRE_FG_OK(fg_get_last_rowmean_algo(handle.get(), &ran));
  CHECK(ran == FG_ROWMEAN_AUTO);  // nothing run yet
  DeviceMemory input(sizeof(float)), matrix(sizeof(float));
  upload(input, std::vector<float>{0.75f});
  upload(matrix, std::vector<float>{-2.0f});
  REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), FG_ROWMEAN_TWO_PASS));
  REQUIRE_FG_OK(fg_rowmean_matvec(handle.get(), FG_F32, input.get(), matrix.get(), output.get(), 1, 1, 1));
  CHECK(download<float>(output, 1)[0] == -1.5f);
  REQUIRE_FG_OK(fg_get_last_rowmean_algo(handle.get(), &ran));
  CHECK(ran == FG_ROWMEAN_TWO_PASS);
  CHECK(fg_get_last_rowmean_algo(handle.get(), nullptr) == FG_STATUS_INVALID_VALUE);
  upload(output, std::vector<float>{3.0f});
  REQUIRE_FG_OK(fg_rowmean_matvec(handle.get(), FG_F32, nullptr, nullptr, output.get(), 0, 4, 4));
  REQUIRE_FG_OK(fg_get_last_rowmean_algo(handle.get(), &ran));
  CHECK(ran == FG_ROWMEAN_AUTO);  // nothing to compute: no algorithm ran
  REQUIRE_FG_OK(fg_rowmean_matvec(handle.get(), FG_F64, nullptr, nullptr, nullptr, 4, 4, 0));
  CHECK(fg_rowmean_matvec(handle.get(), FG_F32, output.get(), output.get(), output.get(), 1, 0, 1) ==
        FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).find("M = 0") != std::string::npos);
  CHECK(download<float>(output, 1)[0] == 3.0f);
}

// An infinity in one row of one batch makes that batch's column of the output infinite, with the sign of each matrix
// entry it meets, and leaves every other column as it was: f32 means that are not all finite take a different path
// into the tensor cores in the fused algorithm than finite ones, tile by tile.
TEMPLATE_TEST_CASE("rowmean_matvec: an infinite input reaches only its batch's column", "[rowmean][nonfinite]", float,
                   double) {
  Handle handle;
  const auto algos = rowmean_algos_under_test(handle.get());
  const fg_dtype_t dtype = std::is_same<TestType, float>::value ? FG_F32 : FG_F64;
  // Enough batches for several tiles per SM in the fused algorithm; the infinite batch sits in a later one.
  const int64_t L = 64, M = 64, N = 4000, infinite_batch = 3001, infinite_row = 17;
  std::vector<TestType> input(static_cast<size_t>(N * L * M)), matrix(static_cast<size_t>(L * L));
  fill_uniform(input, 7001, TestType(-0.5), TestType(1.5));
  fill_uniform(matrix, 7002);
  const std::vector<long double> reference = reference_rowmean(input, matrix, L, M, N);
  input[static_cast<size_t>((infinite_batch * L + infinite_row) * M + 5)] = std::numeric_limits<TestType>::infinity();
  DeviceMemory input_device(input.size() * sizeof(TestType)), matrix_device(matrix.size() * sizeof(TestType)),
      output_device(static_cast<size_t>(L * N) * sizeof(TestType));
  upload(input_device, input);
  upload(matrix_device, matrix);
  const std::vector<TestType> poison(static_cast<size_t>(L * N), std::numeric_limits<TestType>::quiet_NaN());
  std::vector<char> finite_columns(static_cast<size_t>(L * N), 1);
  for (int64_t i = 0; i < L; ++i) finite_columns[static_cast<size_t>(i * N + infinite_batch)] = 0;
  for (fg_rowmean_algo_t algo : algos) {
    INFO("algorithm " << fg_rowmean_algo_name(algo));
    REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), algo));
    upload(output_device, poison);
    REQUIRE_FG_OK(
        fg_rowmean_matvec(handle.get(), dtype, input_device.get(), matrix_device.get(), output_device.get(), L, M, N));
    const std::vector<TestType> result = download<TestType>(output_device, static_cast<size_t>(L * N));
    for (int64_t i = 0; i < L; ++i) {
      const TestType value = result[static_cast<size_t>(i * N + infinite_batch)];
      const TestType entry = matrix[static_cast<size_t>(i * L + infinite_row)];
      INFO("row " << i << " value " << value << " matrix entry " << entry);
      CHECK(std::isinf(value));
      CHECK((value > 0) == (entry > 0));
    }
    const double error = relative_error(result, reference, &finite_columns);
    INFO("relative error of the finite columns " << error);
    CHECK(error <= tolerance<TestType>(algo));
  }
  REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), FG_ROWMEAN_AUTO));
}
