// SPDX-License-Identifier: Apache-2.0
// Random calls through the real entry points, bad ones among them, with C inside a buffer guarded by
// canary regions: a refused call leaves C and the canaries as they were; an accepted one matches the
// double-precision reference and writes nothing outside its products.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <random>

#include "gpu/gemm_harness.hpp"

using namespace fgtest;

namespace {

constexpr int64_t kCanary = 4096;       // floats of canary on each side of every operand
constexpr int64_t kCapacity = 1 << 16;  // floats an operand may span

// The farthest element an operand reaches, in floats, or -1 when it would not fit the capacity.
int64_t reach(int64_t lines, int64_t length, int64_t ld, int64_t stride, int64_t batch) {
  if (lines <= 0 || length <= 0 || batch <= 0) return 0;
  const double far = static_cast<double>(lines - 1) * ld + length + static_cast<double>(batch - 1) * stride;
  return far <= kCapacity ? static_cast<int64_t>(far) : -1;
}

}  // namespace

TEST_CASE("random calls through the real entry points never touch memory they must not", "[random]") {
  Handle handle;
  const auto algos = algos_under_test(handle.get());
  std::mt19937_64 random(2024);
  const auto pick = [&](std::initializer_list<int64_t> values) { return *(values.begin() + random() % values.size()); };
  const auto in = [&](int64_t low, int64_t high) { return low + static_cast<int64_t>(random() % (high - low + 1)); };

  const int64_t total = kCapacity + 2 * kCanary;
  std::vector<float> a(total), b(total), c(total);
  fill_uniform(a, 1);
  fill_uniform(b, 2);
  DeviceMemory a_device(total * 4), b_device(total * 4), c_device(total * 4);
  upload(a_device, a);
  upload(b_device, b);
  long accepted = 0, refused = 0, skipped = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(6);
  for (int call = 0; call < 3000 && std::chrono::steady_clock::now() < deadline; ++call) {
    GemmCase gc;
    gc.layout = random() % 16 == 0 ? static_cast<fg_layout_t>(pick({0, 100, 103, -1}))
                                   : (random() % 2 ? FG_ROW_MAJOR : FG_COL_MAJOR);
    gc.transa = random() % 16 == 0 ? static_cast<fg_op_t>(pick({0, 110, 114})) : static_cast<fg_op_t>(in(111, 113));
    gc.transb = random() % 16 == 0 ? static_cast<fg_op_t>(pick({0, 110, 114})) : static_cast<fg_op_t>(in(111, 113));
    gc.m = random() % 20 == 0 ? pick({-1, 0, INT64_MAX}) : in(1, 70);
    gc.n = random() % 20 == 0 ? pick({-1, 0}) : in(1, 70);
    gc.k = random() % 20 == 0 ? pick({-3, 0}) : in(1, 70);
    gc.alpha = static_cast<float>(pick({0, 1, 2, -1}) * 0.75);
    gc.beta = static_cast<float>(pick({0, 1, -2}) * 0.5);
    gc.batch = random() % 4 == 0 ? pick({-1, 0, 1, 2, 3, 5}) : 1;
    gc.batched_api = gc.batch != 1 || random() % 2;
    const bool row = gc.layout != FG_COL_MAJOR;
    const bool a_n = gc.transa == FG_OP_N, b_n = gc.transb == FG_OP_N;
    const int64_t a_lines = row == a_n ? gc.m : gc.k, a_length = row == a_n ? gc.k : gc.m;
    const int64_t b_lines = row == b_n ? gc.k : gc.n, b_length = row == b_n ? gc.n : gc.k;
    const int64_t c_lines = row ? gc.m : gc.n, c_length = row ? gc.n : gc.m;
    // Leading dimensions around their minimum, sometimes below it.
    gc.lda = std::max<int64_t>(a_length, 1) + in(-2, 6);
    gc.ldb = std::max<int64_t>(b_length, 1) + in(-2, 6);
    gc.ldc = std::max<int64_t>(c_length, 1) + in(-2, 6);
    const auto stride = [&](int64_t lines, int64_t ld) {
      return random() % 8 == 0 ? pick({-1, 0, 3}) : std::max<int64_t>(lines, 1) * ld + in(0, 9);
    };
    gc.stride_a = stride(a_lines, gc.lda);
    gc.stride_b = stride(b_lines, gc.ldb);
    gc.stride_c = stride(c_lines, gc.ldc);
    gc.offset_a = kCanary + in(0, 3), gc.offset_b = kCanary + in(0, 3), gc.offset_c = kCanary + in(0, 3);
    const int64_t batch = gc.batch;
    if (reach(a_lines, a_length, gc.lda, gc.stride_a, batch) < 0 ||
        reach(b_lines, b_length, gc.ldb, gc.stride_b, batch) < 0 ||
        reach(c_lines, c_length, gc.ldc, gc.stride_c, batch) < 0) {
      ++skipped;  // an accepted call would run past the buffers: nothing a library could detect
      continue;
    }
    const fg_sgemm_algo_t algo = algos[random() % algos.size()];
    INFO("call " << call << ": " << gc.describe() << ", algorithm " << fg_sgemm_algo_name(algo));
    fill_uniform(c, 100 + call);
    upload(c_device, c);
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), algo));
    const fg_status_t status =
        gc.batched_api ? fg_sgemm_strided_batched(handle.get(), gc.layout, gc.transa, gc.transb, gc.m, gc.n, gc.k,
                                                  gc.alpha, a_device.as<float>() + gc.offset_a, gc.lda, gc.stride_a,
                                                  b_device.as<float>() + gc.offset_b, gc.ldb, gc.stride_b, gc.beta,
                                                  c_device.as<float>() + gc.offset_c, gc.ldc, gc.stride_c, gc.batch)
                       : fg_sgemm(handle.get(), gc.layout, gc.transa, gc.transb, gc.m, gc.n, gc.k, gc.alpha,
                                  a_device.as<float>() + gc.offset_a, gc.lda, b_device.as<float>() + gc.offset_b,
                                  gc.ldb, gc.beta, c_device.as<float>() + gc.offset_c, gc.ldc);
    const std::vector<float> result = download<float>(c_device, total);
    INFO(fg_status_name(status) << ": " << fg_last_error_message());
    if (status != FG_STATUS_SUCCESS) {
      ++refused;
      CHECK((status == FG_STATUS_INVALID_VALUE || status == FG_STATUS_NOT_SUPPORTED));
      CHECK(std::strlen(fg_last_error_message()) > 0);
      CHECK(std::memcmp(result.data(), c.data(), total * sizeof(float)) == 0);
      continue;
    }
    ++accepted;
    // Accepted: every argument was valid, so the case describes memory the reference can walk.
    REQUIRE((gc.m >= 0 && gc.n >= 0 && gc.k >= 0 && batch >= 0));
    if (gc.m == 0 || gc.n == 0 || batch == 0 || ((gc.k == 0 || gc.alpha == 0.0f) && gc.beta == 1.0f)) {
      CHECK(std::memcmp(result.data(), c.data(), total * sizeof(float)) == 0);
      continue;
    }
    GemmCase sized = gc;
    sized.layout = row ? FG_ROW_MAJOR : FG_COL_MAJOR;
    sized.transa = a_n ? FG_OP_N : FG_OP_T;
    sized.transb = b_n ? FG_OP_N : FG_OP_T;
    const std::vector<double> reference = reference_gemm(sized, a, b, c);
    std::vector<char> inside = c_window_mask(sized);
    inside.resize(total, 0);
    CHECK(relative_error(result, reference, &inside) <= gemm_tolerance(gc.k));
    bool outside_untouched = true;
    for (int64_t i = 0; i < total; ++i)
      if (!inside[i] && std::memcmp(&result[i], &c[i], sizeof(float)) != 0) outside_untouched = false;
    CHECK(outside_untouched);
  }
  std::printf("random calls: %ld accepted, %ld refused, %ld not made (they would overrun the buffers)\n", accepted,
              refused, skipped);
  CHECK(accepted > 100);
  CHECK(refused > 100);
}
