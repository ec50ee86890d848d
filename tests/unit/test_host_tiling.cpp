// SPDX-License-Identifier: Apache-2.0
// fg_sgemm_host's tile grid: a pure function of the problem, the devices' memory and the testing knob,
// so that every device and every run cuts a product the same way.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>

#include "fastgemm/fastgemm.h"
#include "host/host_gemm.hpp"
#include "host/plan.hpp"
#include "host/small_product.hpp"
#include "support/test_support.hpp"
#include "tuning/tuning.hpp"

using fastgemm::detail::choose_host_tiling;
using fastgemm::detail::HostTiling;

namespace {
constexpr size_t kGiB = size_t(1) << 30;
size_t staging_bytes(const HostTiling &t) {
  return static_cast<size_t>(2 * (t.tile_m + t.tile_n) * t.tile_k + 2 * t.tile_m * t.tile_n) * sizeof(float);
}

}  // namespace

TEST_CASE(
    "host tiling: tiles of 1024 to 4096 cutting C's longer side in four, k in chunks as deep as a tile "
    "and at least 2048",
    "[host_tiling]") {
  const HostTiling big = choose_host_tiling(16384, 16384, 16384, 80 * kGiB, 0);
  CHECK(big.tile_m == 4096);
  CHECK(big.tile_n == 4096);
  CHECK(big.tile_k == 4096);
  const HostTiling middle = choose_host_tiling(8192, 6000, 4096, 80 * kGiB, 0);
  CHECK(middle.tile_m == 2048);
  CHECK(middle.tile_n == 2048);
  CHECK(middle.tile_k == 2048);
  const HostTiling small = choose_host_tiling(100, 3000, 50, 80 * kGiB, 0);
  CHECK(small.tile_m == 100);
  CHECK(small.tile_n == 1024);
  CHECK(small.tile_k == 50);
  const HostTiling tiny = choose_host_tiling(300, 200, 10, 80 * kGiB, 0);
  CHECK(tiny.tile_m == 300);
  CHECK(tiny.tile_n == 200);
  CHECK(choose_host_tiling(10, 10, 0, 80 * kGiB, 0).tile_k == 0);  // C := beta * C has no k
  // A depth just past a whole number of chunks is cut in balanced chunks, each a multiple of 128; tiles of
  // 1024 still get chunks of about 2048.
  const HostTiling uneven = choose_host_tiling(4096, 4096, 4100, 80 * kGiB, 0);
  CHECK(uneven.tile_m == 1024);
  CHECK(uneven.tile_k == 1408);
  CHECK((4100 + uneven.tile_k - 1) / uneven.tile_k == 3);
  CHECK(choose_host_tiling(4096, 4096, 4096, 80 * kGiB, 0).tile_k == 2048);
}

TEST_CASE("host tiling: the emulated mode's steps over all of k reach the emulation's threshold", "[host_tiling]") {
  const auto emulated = [](int64_t m, int64_t n, int64_t k) {
    return choose_host_tiling(m, n, k, 80 * kGiB, 0, false, true);
  };
  const auto pays = [](const HostTiling &t) {
    return fastgemm::tuning::emulation_size(t.tile_m, t.tile_n, t.tile_k, 1) == fastgemm::tuning::EmulationSize::pays;
  };
  // 4096 and more on every side: tiles of 4096, each one step over all of k.
  for (const auto &shape : {std::array<int64_t, 3>{8192, 8192, 8192}, std::array<int64_t, 3>{4096, 4096, 4096},
                            std::array<int64_t, 3>{16384, 16384, 16384}, std::array<int64_t, 3>{8192, 6000, 4096},
                            std::array<int64_t, 3>{12288, 16384, 6000}}) {
    const HostTiling t = emulated(shape[0], shape[1], shape[2]);
    CHECK(t.tile_m == 4096);
    CHECK(t.tile_n == 4096);
    CHECK(t.tile_k == shape[2]);
    CHECK(pays(t));
  }
  // Narrower products whose steps over all of k still pay: the FP32 mode's tiles, k whole.
  for (const auto &shape : {std::array<int64_t, 3>{8192, 3000, 8192}, std::array<int64_t, 3>{3000, 3000, 65536}}) {
    const HostTiling t = emulated(shape[0], shape[1], shape[2]);
    const HostTiling fp32 = choose_host_tiling(shape[0], shape[1], shape[2], 80 * kGiB, 0);
    CHECK(t.tile_m == fp32.tile_m);
    CHECK(t.tile_n == fp32.tile_n);
    CHECK(fp32.tile_k < shape[2]);
    CHECK(t.tile_k == shape[2]);
    CHECK(pays(t));
  }
  // The deepest k the emulation takes: tiles narrow until the panels of all of k fit the staging budget (6 GiB).
  const int64_t deepest = fastgemm::tuning::kEmulationMaxDepth;
  const HostTiling deep = emulated(16384, 16384, deepest);
  CHECK(deep.tile_k == deepest);
  CHECK(deep.tile_m == 2048);
  CHECK(deep.tile_n == 2048);
  CHECK(static_cast<size_t>(2 * (deep.tile_m + deep.tile_n) * deepest + 2 * deep.tile_m * deep.tile_n) * 4 <=
        size_t(6) << 30);
  CHECK(pays(deep));
  // Steps that would not pay over all of k, k deeper than the emulation takes, FG_REPRODUCIBLE_SHAPE (whose
  // emulated mode runs FP32) or the knob: the FP32 mode's grid (with tiles of 4096 where every side has 4096).
  for (const auto &shape : {std::array<int64_t, 3>{8192, 8192, 2048}, std::array<int64_t, 3>{2048, 2048, 8192},
                            std::array<int64_t, 3>{2048, 2048, deepest + 1}}) {
    const HostTiling t = emulated(shape[0], shape[1], shape[2]);
    const HostTiling fp32 = choose_host_tiling(shape[0], shape[1], shape[2], 80 * kGiB, 0);
    CHECK(t.tile_m == fp32.tile_m);
    CHECK(t.tile_n == fp32.tile_n);
    CHECK(t.tile_k == fp32.tile_k);
  }
  const HostTiling beyond = emulated(8192, 8192, deepest + 1);
  CHECK(beyond.tile_m == 4096);
  CHECK(beyond.tile_k <= 4096);
  CHECK(choose_host_tiling(8192, 8192, 8192, 80 * kGiB, 0, true, true).tile_m == 2048);
  const HostTiling knob = choose_host_tiling(8192, 8192, 8192, 80 * kGiB, 1024, false, true);
  CHECK(knob.tile_m == 1024);
  CHECK(knob.tile_k == 1024);
}

TEST_CASE("host tiling: k is chunked to fit a quarter of the device, at most 6 GiB", "[host_tiling]") {
  const HostTiling deep = choose_host_tiling(8192, 8192, 1 << 20, 80 * kGiB, 0);
  CHECK(deep.tile_k <= 65536);
  CHECK(staging_bytes(deep) <= 6 * kGiB);
  CHECK(deep.tile_k == 2048);
  const HostTiling small_device = choose_host_tiling(8192, 8192, 1 << 20, 4 * kGiB, 0);
  CHECK(staging_bytes(small_device) <= kGiB);
  // Wide tiles forced by the knob get shallower chunks on a small device.
  const HostTiling wide = choose_host_tiling(65536, 65536, 1 << 20, 80 * kGiB, 8192);
  const HostTiling wide_small = choose_host_tiling(65536, 65536, 1 << 20, 4 * kGiB, 8192);
  CHECK(staging_bytes(wide) <= 6 * kGiB);
  CHECK(staging_bytes(wide_small) <= kGiB);
  CHECK(wide_small.tile_k >= 256);
  CHECK(wide_small.tile_k < wide.tile_k);
}

TEST_CASE("host tiling: the same arguments give the same grid; the knob caps every edge", "[host_tiling]") {
  const HostTiling first = choose_host_tiling(5000, 7000, 9000, 24 * kGiB, 0);
  const HostTiling second = choose_host_tiling(5000, 7000, 9000, 24 * kGiB, 0);
  CHECK(first.tile_m == second.tile_m);
  CHECK(first.tile_n == second.tile_n);
  CHECK(first.tile_k == second.tile_k);
  const HostTiling knob = choose_host_tiling(5000, 7000, 9000, 24 * kGiB, 32);
  CHECK(knob.tile_m == 32);
  CHECK(knob.tile_n == 32);
  CHECK(knob.tile_k == 32);
  // A knob beyond the longest line a staging chunk holds is capped there.
  const HostTiling huge_knob = choose_host_tiling(1 << 23, 1 << 23, 1 << 23, 80 * kGiB, int64_t(1) << 40);
  CHECK(huge_knob.tile_m == 65536);
  CHECK(huge_knob.tile_n == 65536);
  CHECK(huge_knob.tile_k <= 65536);
}

TEST_CASE("host tiling: FASTGEMM_HOST_TILE is read as a positive integer, else ignored", "[host_tiling]") {
  const fgtest::ScopedEnvironment tile("FASTGEMM_HOST_TILE");
  tile.set("48");
  CHECK(fastgemm::detail::host_tile_limit_from_environment() == 48);
  for (const char *bad : {"", "0", "-3", "12x", "abc"}) {
    tile.set(bad);
    CHECK(fastgemm::detail::host_tile_limit_from_environment() == 0);
  }
  tile.set(nullptr);
  CHECK(fastgemm::detail::host_tile_limit_from_environment() == 0);
}

TEST_CASE("host plan: B passes between devices unless FASTGEMM_HOST_PEER is exactly 0", "[host_tiling]") {
  const fgtest::ScopedEnvironment peer("FASTGEMM_HOST_PEER");
  peer.set(nullptr);
  CHECK(fastgemm::detail::host_peer_copies_from_environment());
  peer.set("0");
  CHECK_FALSE(fastgemm::detail::host_peer_copies_from_environment());
  for (const char *other : {"1", "", "00", "0 ", "no", "2"}) {
    INFO("FASTGEMM_HOST_PEER=\"" << other << "\"");
    peer.set(other);
    CHECK(fastgemm::detail::host_peer_copies_from_environment());
  }
}

TEST_CASE("host plan: every panel kept while it fits, then C's tiles kept, then panels streamed", "[host_tiling]") {
  using namespace fastgemm::detail;
  constexpr size_t kPiece = size_t(4096) * 4096 * sizeof(float);  // one 4096 x 4096 slot
  HostJob<float> job;
  job.tiling = HostTiling{4096, 4096, 4096};
  job.tiles_m = job.tiles_n = 4;
  job.chunks = 16;  // 16384 x 16384 x 65536, every operand pageable, one worker
  job.lookahead = 16;
  const int64_t few = job.lookahead + 2;
  // Tile by tile: a row's A panel (16 chunks, within the lookahead's), every B panel, three C tiles.
  const SlotCounts whole = choose_slot_counts(job, 0, 80 * kGiB);
  CHECK(whole.order == Order::tile_major);
  CHECK(whole.a == static_cast<size_t>(std::min<int64_t>(4 * 16, 16 + few)));
  CHECK(whole.b == 4u * 16u);
  CHECK(whole.c == 3u);
  // Less room: chunk by chunk, all 16 C tiles kept, a few pieces of A and B streamed.
  const SlotCounts deep = choose_slot_counts(job, 0, (whole.a + whole.b + whole.c) * kPiece - 1);
  CHECK(deep.order == Order::chunk_major);
  CHECK(deep.a == static_cast<size_t>(few));
  CHECK(deep.b == static_cast<size_t>(4 + few));
  CHECK(deep.c == 16u);
  // Less still: tile by tile again, two pieces of each.
  const SlotCounts streamed = choose_slot_counts(job, 0, 10 * kPiece);
  CHECK(streamed.order == Order::tile_major);
  CHECK(streamed.a == 2u);
  CHECK(streamed.b == 2u);
  CHECK(streamed.c == 2u);
  // Operands in the device's own memory are read in place by a single worker: no slots for them.
  job.a_place = job.b_place = job.c_place = PointerPlace{cudaMemoryTypeDevice, 0};
  const SlotCounts in_place = choose_slot_counts(job, 0, 80 * kGiB);
  CHECK(in_place.a == 0u);
  CHECK(in_place.b == 0u);
  CHECK(in_place.c == 0u);
  // The same memory on another device is staged.
  CHECK(choose_slot_counts(job, 1, 80 * kGiB).b == 4u * 16u);
}

TEST_CASE("host entry points refuse a NULL handle without a device", "[host_tiling]") {
  float value = 0.0f;
  CHECK(fg_sgemm_host(nullptr, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 1, 1, 1, 1.0f, &value, 1, &value, 1, 0.0f, &value, 1) ==
        FG_STATUS_INVALID_HANDLE);
  int count = 0;
  CHECK(fg_set_devices(nullptr, nullptr, 0) == FG_STATUS_INVALID_HANDLE);
  CHECK(fg_get_devices(nullptr, nullptr, 0, &count) == FG_STATUS_INVALID_HANDLE);
}

TEST_CASE("host short way: its layout is aligned, fits exactly what fits, and never overflows", "[host_tiling]") {
  using fastgemm::detail::single_step;
  using fastgemm::detail::small_product_layout;
  using fastgemm::detail::SmallProductLayout;
  constexpr size_t capacity = fastgemm::detail::small_product_bytes;
  const SmallProductLayout odd = small_product_layout(37, 53, 29, true, capacity);
  REQUIRE(odd.fits);
  CHECK(odd.a == 0);
  CHECK(odd.b == (37 * 29 * 4 + 255) / 256 * 256);
  CHECK(odd.c == odd.b + (29 * 53 * 4 + 255) / 256 * 256);
  CHECK(odd.c_bytes == 37 * 53 * 4);
  CHECK(odd.total == odd.c + odd.c_bytes);
  // Without A and B (C := beta * C), C alone.
  const SmallProductLayout scale = small_product_layout(100, 70, 5, false, capacity);
  REQUIRE(scale.fits);
  CHECK(scale.c == 0);
  CHECK(scale.total == 100 * 70 * 4);
  // The largest square that fits, and one more.
  CHECK(small_product_layout(591, 591, 591, true, capacity).fits);
  CHECK_FALSE(small_product_layout(592, 592, 592, true, capacity).fits);
  // A capacity met exactly fits; one byte less does not.
  const SmallProductLayout exact = small_product_layout(64, 64, 64, true, capacity);
  CHECK(small_product_layout(64, 64, 64, true, exact.total).fits);
  CHECK_FALSE(small_product_layout(64, 64, 64, true, exact.total - 1).fits);
  // Extents whose products overflow 64 bits, and empty ones.
  const int64_t huge = int64_t(1) << 40;
  CHECK_FALSE(small_product_layout(huge, huge, huge, true, capacity).fits);
  CHECK_FALSE(small_product_layout(1, 1, huge, true, capacity).fits);
  CHECK_FALSE(small_product_layout(0, 5, 5, true, capacity).fits);
  CHECK_FALSE(small_product_layout(5, 5, 0, true, capacity).fits);
  // One step: one tile, and k in one chunk for a product.
  const HostTiling tiling{128, 256, 512};
  CHECK(single_step(tiling, 128, 256, 512, true));
  CHECK_FALSE(single_step(tiling, 129, 256, 512, true));
  CHECK_FALSE(single_step(tiling, 128, 257, 512, true));
  CHECK_FALSE(single_step(tiling, 128, 256, 513, true));
  CHECK(single_step(tiling, 128, 256, 513, false));
}
