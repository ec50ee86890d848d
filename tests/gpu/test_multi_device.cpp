// SPDX-License-Identifier: Apache-2.0
// Several devices: fg_sgemm_host spread over two (C bitwise the one-device result, whatever the order of the
// list and the memory of the operands), and handles bound to one device used while the calling thread's
// current device is another. CTest runs these with FASTGEMM_TEST_MIN_DEVICES=2: on a machine with fewer
// devices they are reported as skipped.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cuda.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gpu/gemm_harness.hpp"

using namespace fgtest;

namespace {

// Sets FASTGEMM_HOST_TILE for its lifetime, so that small products make many tiles for the devices to share.
class ManyTiles {
 public:
  explicit ManyTiles(int edge) { setenv("FASTGEMM_HOST_TILE", std::to_string(edge).c_str(), 1); }
  ~ManyTiles() { unsetenv("FASTGEMM_HOST_TILE"); }
  ManyTiles(const ManyTiles &) = delete;
  ManyTiles &operator=(const ManyTiles &) = delete;
};

// Whether the device's primary context exists: the test program asks the driver, which fastgemm must not have
// made it create on a device the program never used.
bool primary_context_active(int device) {
  using GetState = CUresult (*)(CUdevice, unsigned int *, int *);
  void *function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  REQUIRE_CUDA_OK(
      cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxGetState", &function, 12000, cudaEnableDefault, &found));
  REQUIRE(found == cudaDriverEntryPointSuccess);
  unsigned int flags = 0;
  int active = 0;
  REQUIRE(reinterpret_cast<GetState>(function)(device, &flags, &active) == CUDA_SUCCESS);
  return active != 0;
}

// Host operands of one case, C poisoned with NaN where beta == 0, and the double-precision reference.
struct HostCase {
  GemmCase gc;
  std::vector<float> a, b, c;
  std::vector<double> reference;
  std::vector<char> window;

  HostCase(const GemmCase &raw, uint64_t seed) : gc(raw.resolved()) {
    a.resize(gc.a_elements()), b.resize(gc.b_elements()), c.resize(gc.c_elements());
    fill_uniform(a, seed * 3 + 1);
    fill_uniform(b, seed * 3 + 2);
    fill_uniform(c, seed * 3 + 3);
    window = c_window_mask(gc);
    if (gc.beta == 0.0f)
      for (size_t i = 0; i < c.size(); ++i)
        if (window[i]) c[i] = std::numeric_limits<float>::quiet_NaN();
    reference = reference_gemm(gc, a, b, c);
  }

  // fg_sgemm_host over the given A, B and C memory (host or device); the result is checked, then returned.
  std::vector<float> run(fg_handle_t handle, const float *a_memory, const float *b_memory, float *c_memory,
                         const std::vector<float> &(*read_c)(float *, std::vector<float> &)) const {
    const fg_status_t status = fg_sgemm_host(handle, gc.layout, gc.transa, gc.transb, gc.m, gc.n, gc.k, gc.alpha,
                                             a_memory, gc.lda, b_memory, gc.ldb, gc.beta, c_memory, gc.ldc);
    INFO(gc.describe() << ": " << fg_status_name(status) << ": " << fg_last_error_message());
    REQUIRE(status == FG_STATUS_SUCCESS);
    std::vector<float> result(c.size());
    read_c(c_memory, result);
    const double error = relative_error(result, reference, &window);
    INFO("relative error " << error);
    CHECK(error <= gemm_tolerance(gc.k));
    for (size_t i = 0; i < c.size(); ++i)
      if (!window[i]) REQUIRE(std::memcmp(&result[i], &c[i], sizeof(float)) == 0);  // outside C's window
    return result;
  }
};

const std::vector<float> &read_host(float *memory, std::vector<float> &out) {
  std::memcpy(out.data(), memory, out.size() * sizeof(float));
  return out;
}

const std::vector<float> &read_device(float *memory, std::vector<float> &out) {
  REQUIRE_CUDA_OK(cudaMemcpy(out.data(), memory, out.size() * sizeof(float), cudaMemcpyDefault));
  return out;
}

// Device memory of `device`, allocated with that device current and the caller's current device restored.
class MemoryOn {
 public:
  MemoryOn(int device, const std::vector<float> &values) {
    int current = 0;
    REQUIRE_CUDA_OK(cudaGetDevice(&current));
    REQUIRE_CUDA_OK(cudaSetDevice(device));
    REQUIRE_CUDA_OK(cudaMalloc(&pointer_, values.size() * sizeof(float)));
    REQUIRE_CUDA_OK(cudaMemcpy(pointer_, values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice));
    REQUIRE_CUDA_OK(cudaSetDevice(current));
  }
  ~MemoryOn() { (void)cudaFree(pointer_); }
  MemoryOn(const MemoryOn &) = delete;
  MemoryOn &operator=(const MemoryOn &) = delete;
  float *get() const { return static_cast<float *>(pointer_); }

 private:
  void *pointer_ = nullptr;
};

}  // namespace

// First in the file, so that in its own process (CTest's gpu.multi_device) no other test has touched device 0.
TEST_CASE("a program that uses only device 1: fastgemm creates no context on device 0", "[multi_device]") {
  const bool active_before = primary_context_active(0);
  if (active_before) WARN("device 0 was in use before this test: the context check is left out");
  REQUIRE_CUDA_OK(cudaSetDevice(1));
  {
    Handle handle;
    const ManyTiles tiles(48);
    const HostCase hc(GemmCase{FG_ROW_MAJOR, FG_OP_N, FG_OP_T, 130, 110, 90, 1.0f, 0.0f}, 3);
    std::vector<float> c = hc.c;
    hc.run(handle.get(), hc.a.data(), hc.b.data(), c.data(), read_host);
    const MemoryOn a(1, hc.a), b(1, hc.b);
    MemoryOn c_device(1, hc.c);
    REQUIRE_FG_OK(fg_sgemm(handle.get(), hc.gc.layout, hc.gc.transa, hc.gc.transb, hc.gc.m, hc.gc.n, hc.gc.k,
                           hc.gc.alpha, a.get(), hc.gc.lda, b.get(), hc.gc.ldb, hc.gc.beta, c_device.get(), hc.gc.ldc));
    REQUIRE_CUDA_OK(cudaDeviceSynchronize());
  }
  if (!active_before) CHECK_FALSE(primary_context_active(0));
  int current = -1;
  REQUIRE_CUDA_OK(cudaGetDevice(&current));
  CHECK(current == 1);
  REQUIRE_CUDA_OK(cudaSetDevice(0));
}

TEST_CASE("fg_sgemm_host over two devices: C bitwise the one-device result, any list order and memory",
          "[multi_device]") {
  REQUIRE_CUDA_OK(cudaSetDevice(0));
  Handle one, two, reversed;
  const int both[2] = {0, 1}, backwards[2] = {1, 0};
  REQUIRE_FG_OK(fg_set_devices(two.get(), both, 2));
  REQUIRE_FG_OK(fg_set_devices(reversed.get(), backwards, 2));
  int listed[2] = {-1, -1}, count = 0;
  REQUIRE_FG_OK(fg_get_devices(reversed.get(), listed, 2, &count));
  CHECK(count == 2);
  CHECK(listed[0] == 1);
  CHECK(listed[1] == 0);
  const ManyTiles tiles(64);
  uint64_t seed = 10;
  for (const GemmCase &raw : {GemmCase{FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 300, 260, 190, 1.25f, 0.5f},
                              GemmCase{FG_COL_MAJOR, FG_OP_T, FG_OP_N, 257, 129, 300, -0.75f, 0.0f},
                              GemmCase{FG_ROW_MAJOR, FG_OP_T, FG_OP_T, 70, 400, 65, 1.0f, 1.0f}}) {
    const HostCase hc(raw, ++seed);
    std::vector<float> c_one = hc.c, c_two = hc.c, c_reversed = hc.c;
    const std::vector<float> by_one = hc.run(one.get(), hc.a.data(), hc.b.data(), c_one.data(), read_host);
    const std::vector<float> by_two = hc.run(two.get(), hc.a.data(), hc.b.data(), c_two.data(), read_host);
    const std::vector<float> by_reversed =
        hc.run(reversed.get(), hc.a.data(), hc.b.data(), c_reversed.data(), read_host);
    CHECK(std::memcmp(by_one.data(), by_two.data(), by_one.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(by_one.data(), by_reversed.data(), by_one.size() * sizeof(float)) == 0);
    // Operands in device memory of either device, C in device 1's: the same bits again.
    const MemoryOn a_on_0(0, hc.a), b_on_1(1, hc.b);
    MemoryOn c_on_1(1, hc.c);
    const std::vector<float> from_devices = hc.run(two.get(), a_on_0.get(), b_on_1.get(), c_on_1.get(), read_device);
    CHECK(std::memcmp(by_one.data(), from_devices.data(), by_one.size() * sizeof(float)) == 0);
  }
  int current = -1;
  REQUIRE_CUDA_OK(cudaGetDevice(&current));
  CHECK(current == 0);
}

TEST_CASE("a handle bound to one device, called while the thread's current device is the other", "[multi_device]") {
  for (const int handle_device : {1, 0}) {
    const int current_device = 1 - handle_device;
    INFO("handle on device " << handle_device << ", current device " << current_device);
    REQUIRE_CUDA_OK(cudaSetDevice(handle_device));
    Handle handle;
    REQUIRE_CUDA_OK(cudaSetDevice(current_device));
    const HostCase hc(GemmCase{FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 96, 80, 72, 0.5f, 0.0f}, 40 + handle_device);
    const MemoryOn a(handle_device, hc.a), b(handle_device, hc.b);
    MemoryOn c(handle_device, hc.c);
    REQUIRE_FG_OK(fg_sgemm(handle.get(), hc.gc.layout, hc.gc.transa, hc.gc.transb, hc.gc.m, hc.gc.n, hc.gc.k,
                           hc.gc.alpha, a.get(), hc.gc.lda, b.get(), hc.gc.ldb, hc.gc.beta, c.get(), hc.gc.ldc));
    // The handle's legacy stream is its device's: waited for on that device.
    std::vector<float> result(hc.c.size());
    REQUIRE_CUDA_OK(cudaSetDevice(handle_device));
    REQUIRE_CUDA_OK(cudaDeviceSynchronize());
    REQUIRE_CUDA_OK(cudaSetDevice(current_device));
    read_device(c.get(), result);
    CHECK(relative_error(result, hc.reference, &hc.window) <= gemm_tolerance(hc.gc.k));
    // Memory of the current device, not the handle's: refused, naming the operand.
    const MemoryOn elsewhere(current_device, hc.a);
    CHECK(fg_sgemm(handle.get(), hc.gc.layout, hc.gc.transa, hc.gc.transb, hc.gc.m, hc.gc.n, hc.gc.k, hc.gc.alpha,
                   elsewhere.get(), hc.gc.lda, b.get(), hc.gc.ldb, hc.gc.beta, c.get(),
                   hc.gc.ldc) == FG_STATUS_INVALID_VALUE);
    CHECK(std::string(fg_last_error_message()).find("A = ") != std::string::npos);
    // fg_sgemm_host from host memory, the same thread and current device.
    std::vector<float> host_c = hc.c;
    hc.run(handle.get(), hc.a.data(), hc.b.data(), host_c.data(), read_host);
    int after = -1;
    REQUIRE_CUDA_OK(cudaGetDevice(&after));
    CHECK(after == current_device);
  }
  REQUIRE_CUDA_OK(cudaSetDevice(0));
}
