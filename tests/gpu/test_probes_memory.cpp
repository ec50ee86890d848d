// SPDX-License-Identifier: Apache-2.0
// Programs as a user writes them against the public header, on operands: off their element boundary or past
// their allocation, C sharing memory with A, memory freed and allocated again, and memory of every kind.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gpu/probe_support.hpp"

using namespace fgtest;

namespace {

std::vector<unsigned char> read_bytes(const DeviceMemory &memory, size_t bytes) {
  std::vector<unsigned char> host(bytes);
  REQUIRE_CUDA_OK(cudaMemcpy(host.data(), memory.get(), bytes, cudaMemcpyDeviceToHost));
  return host;
}

}  // namespace

TEST_CASE("rowmean operands off their element boundary are INVALID_VALUE naming them, never a fault", "[probe]") {
  Handle handle;
  const int64_t L = 8, M = 5, N = 3;
  for (fg_dtype_t dtype : {FG_F64, FG_F32}) {
    const size_t element = dtype == FG_F64 ? 8 : 4, off = element / 2;
    DeviceMemory input(N * L * M * element + 16), matrix(L * L * element + 16), output(L * N * element + 16);
    std::vector<double> values(N * L * M + 2);
    fill_uniform(values, 9);
    REQUIRE_CUDA_OK(cudaMemcpy(input.get(), values.data(), N * L * M * element, cudaMemcpyHostToDevice));
    REQUIRE_CUDA_OK(cudaMemcpy(matrix.get(), values.data(), L * L * element, cudaMemcpyHostToDevice));
    const char *names[] = {"input", "matrix", "output"};
    for (int which = 0; which < 3; ++which) {
      for (fg_rowmean_algo_t algo : rowmean_algos(handle.get())) {
        INFO((dtype == FG_F64 ? "f64 " : "f32 ")
             << names[which] << " + " << off << " bytes, " << fg_rowmean_algo_name(algo));
        REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), algo));
        REQUIRE_CUDA_OK(cudaMemset(output.get(), 0x7f, L * N * element + 16));
        const char *in = input.as<char>() + (which == 0 ? off : 0);
        const char *mat = matrix.as<char>() + (which == 1 ? off : 0);
        char *out = output.as<char>() + (which == 2 ? off : 0);
        CHECK(fg_rowmean_matvec(handle.get(), dtype, in, mat, out, L, M, N) == FG_STATUS_INVALID_VALUE);
        const std::string message = fg_last_error_message();
        INFO(message);
        CHECK(message.find(std::string("fg_rowmean_matvec: ") + names[which] + " = ") == 0);
        CHECK(message.find("not aligned") != std::string::npos);
        const std::vector<unsigned char> untouched = read_bytes(output, L * N * element + 16);
        CHECK(std::all_of(untouched.begin(), untouched.end(), [](unsigned char v) { return v == 0x7f; }));
      }
    }
  }
  require_no_pending_fault();
}

TEST_CASE("operands past the end of their allocation, a short C and C sharing memory with A are refused", "[probe]") {
  Handle handle;
  const int64_t m = 16, n = 12, k = 20;
  DeviceMemory a(m * k * 4), b(k * n * 4), c(m * n * 4);
  // Operands that end one element past a 2 MiB allocation, whatever granularity the allocator rounds to.
  constexpr size_t kAllocation = size_t{2} << 20;
  DeviceMemory block(kAllocation);
  const auto one_short = [&](int64_t elements) {
    return reinterpret_cast<float *>(block.as<char>() + kAllocation - (elements - 1) * 4);
  };
  std::vector<float> values(m * k);
  fill_uniform(values, 2);
  upload(a, values);
  const auto call = [&](const float *A, const float *B, float *C) {
    return fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, A, k, B, n, 0.0f, C, n);
  };
  const auto refused = [&](fg_status_t status, const std::string &start, const std::string &part) {
    const std::string message = fg_last_error_message();
    INFO(message);
    CHECK(status == FG_STATUS_INVALID_VALUE);
    CHECK(message.find(start) == 0);
    CHECK(message.find(part) != std::string::npos);
  };
  refused(call(one_short(m * k), b.as<float>(), c.as<float>()),
          "fg_sgemm: A = ", "runs past the end of its allocation");
  refused(call(a.as<float>() + 1, b.as<float>(), c.as<float>()),
          "fg_sgemm: A = ", "runs past the end of its allocation");
  refused(call(a.as<float>(), one_short(k * n), c.as<float>()),
          "fg_sgemm: B = ", "runs past the end of its allocation");
  refused(call(a.as<float>(), b.as<float>(), one_short(m * n)),
          "fg_sgemm: C = ", "runs past the end of its allocation");
  // C aliasing A (A is m x k, k >= n: C fits inside it).
  REQUIRE_CUDA_OK(cudaMemset(b.get(), 0, k * n * 4));
  refused(call(a.as<float>(), b.as<float>(), a.as<float>()), "fg_sgemm: C = ", "shares memory with A");
  CHECK(download<float>(a, m * k) == values);  // nothing written
  refused(call(a.as<float>(), b.as<float>(), b.as<float>() + 3), "fg_sgemm: C = ", "shares memory with B");
  // rowmean input past its allocation.
  DeviceMemory matrix(8 * 8 * 4), output(8 * 3 * 4);
  CHECK(fg_rowmean_matvec(handle.get(), FG_F32, one_short(8 * 5 * 3), matrix.get(), output.get(), 8, 5, 3) ==
        FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).find("fg_rowmean_matvec: input = ") == 0);
  // A refused pointer query leaves the caller's pending CUDA error alone.
  int host_value = 0;
  CHECK(cudaSetDevice(-1) == cudaErrorInvalidDevice);  // now pending for this thread
  refused(call(a.as<float>(), reinterpret_cast<const float *>(&host_value), c.as<float>()),
          "fg_sgemm: B = ", "pageable host memory");
  CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
  require_no_pending_fault();
}

// The handle caches what the driver said of an allocation, keyed by the driver's id of it: memory freed and
// allocated again (at the same address, as the allocator tends to give it back) is queried anew.
TEST_CASE("memory freed and allocated again smaller: an operand past its new end is refused", "[probe]") {
  Handle handle;
  const int64_t m = 2048, n = 1024, k = 8;  // C: 8 MiB
  const size_t c_bytes = m * n * 4, smaller = c_bytes / 2;
  std::vector<float> a(m * k), b(k * n);
  fill_uniform(a, 41);
  fill_uniform(b, 42);
  DeviceMemory da(a.size() * 4), db(b.size() * 4);
  upload(da, a);
  upload(db, b);
  const auto call = [&](void *C) {
    return fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, da.as<float>(), k, db.as<float>(), n,
                    0.0f, static_cast<float *>(C), n);
  };
  void *first = nullptr;
  REQUIRE_CUDA_OK(cudaMalloc(&first, c_bytes));
  REQUIRE_FG_OK(call(first));
  REQUIRE_FG_OK(call(first));  // now from the cache
  REQUIRE_CUDA_OK(cudaDeviceSynchronize());
  REQUIRE_CUDA_OK(cudaFree(first));
  // Half-size allocations until one lands where the first was (the allocator tends to hand freed address
  // ranges back); the refusal is checked on that one, or on the last if none did.
  std::vector<void *> candidates;
  void *second = nullptr;
  for (int attempt = 0; attempt < 8 && second != first; ++attempt) {
    REQUIRE_CUDA_OK(cudaMalloc(&second, smaller));
    candidates.push_back(second);
  }
  if (second != first) WARN("no allocation landed at the freed address; the refusal is checked at another");
  REQUIRE_CUDA_OK(cudaMemset(second, 0x7f, smaller));
  const fg_status_t status = call(second);
  INFO(fg_last_error_message());
  CHECK(status == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).find("C = ") != std::string::npos);
  CHECK(std::string(fg_last_error_message()).find("runs past the end of its allocation") != std::string::npos);
  std::vector<unsigned char> untouched(smaller);
  REQUIRE_CUDA_OK(cudaMemcpy(untouched.data(), second, smaller, cudaMemcpyDeviceToHost));
  CHECK(std::all_of(untouched.begin(), untouched.end(), [](unsigned char byte) { return byte == 0x7f; }));
  for (void *candidate : candidates) REQUIRE_CUDA_OK(cudaFree(candidate));
  require_no_pending_fault();
}

TEST_CASE("managed, pinned and host-registered operands", "[operands]") {
  Handle handle;
  const int64_t m = 33, n = 29, k = 41;
  std::vector<float> a(m * k), b(k * n), c(m * n);
  fill_uniform(a, 21);
  fill_uniform(b, 22);
  fill_uniform(c, 23);
  GemmCase gc;
  gc.m = m, gc.n = n, gc.k = k, gc.alpha = 1.5f, gc.beta = -0.5f;
  const std::vector<double> reference = reference_gemm(gc.resolved(), a, b, c);
  float *managed = nullptr, *pinned = nullptr;
  REQUIRE_CUDA_OK(cudaMallocManaged(reinterpret_cast<void **>(&managed), a.size() * 4));
  REQUIRE_CUDA_OK(cudaMallocHost(reinterpret_cast<void **>(&pinned), b.size() * 4));
  std::vector<float> registered(c.size() + 1024);
  REQUIRE_CUDA_OK(cudaHostRegister(registered.data(), registered.size() * 4, cudaHostRegisterDefault));
  for (fg_sgemm_algo_t algo : algos_under_test(handle.get())) {
    INFO("algorithm " << fg_sgemm_algo_name(algo));
    std::memcpy(managed, a.data(), a.size() * 4);
    std::memcpy(pinned, b.data(), b.size() * 4);
    std::memcpy(registered.data(), c.data(), c.size() * 4);
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), algo));
    const fg_status_t status = fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.5f, managed, k, pinned,
                                        n, -0.5f, registered.data(), n);
    INFO(fg_last_error_message());
    if (status == FG_STATUS_NOT_SUPPORTED && algo != FG_SGEMM_AUTO) continue;
    REQUIRE(status == FG_STATUS_SUCCESS);
    REQUIRE_CUDA_OK(cudaDeviceSynchronize());
    CHECK(relative_error(std::vector<float>(registered.begin(), registered.begin() + c.size()), reference) <
          gemm_tolerance(k));
  }
  // rowmean from managed input into pinned output.
  const int64_t L = 24, M = 7, N = 5;
  std::vector<float> input(N * L * M), matrix(L * L);
  fill_uniform(input, 31);
  fill_uniform(matrix, 32);
  std::memcpy(managed, input.data(), std::min(input.size(), a.size()) * 4);
  REQUIRE(input.size() <= a.size());
  DeviceMemory d_matrix(matrix.size() * 4);
  upload(d_matrix, matrix);
  const std::vector<long double> expected = reference_rowmean(input, matrix, L, M, N);
  REQUIRE(static_cast<int64_t>(b.size()) >= L * N);
  for (fg_rowmean_algo_t algo : rowmean_algos(handle.get())) {
    INFO("algorithm " << fg_rowmean_algo_name(algo));
    std::fill(pinned, pinned + L * N, std::numeric_limits<float>::quiet_NaN());
    REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), algo));
    REQUIRE_FG_OK(fg_rowmean_matvec(handle.get(), FG_F32, managed, d_matrix.get(), pinned, L, M, N));
    REQUIRE_CUDA_OK(cudaDeviceSynchronize());
    CHECK(relative_error(std::vector<float>(pinned, pinned + L * N), expected) < 1e-5);
  }
  REQUIRE_CUDA_OK(cudaHostUnregister(registered.data()));
  REQUIRE_CUDA_OK(cudaFreeHost(pinned));
  REQUIRE_CUDA_OK(cudaFree(managed));
}
