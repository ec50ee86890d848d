// SPDX-License-Identifier: Apache-2.0
// The handle's cache of pointer queries, over a simulated driver: allocations made, freed and made again
// at the same address, counted queries. No GPU needed.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "core/device.hpp"

using fastgemm::detail::PointerAttributes;
using fastgemm::detail::PointerCache;
using fastgemm::detail::Status;
using fastgemm::detail::StatusCode;

namespace {

// The simulated driver: live allocations, each with the id the driver gave it, and the queries made.
struct Allocation {
  uintptr_t begin;
  size_t bytes;
  uint64_t id;
};

struct SimulatedDriver {
  std::vector<Allocation> live;
  uint64_t next_id = 1;
  int full_queries = 0, id_queries = 0;
  bool failing = false;

  const Allocation *find(const void *pointer) const {
    const auto address = reinterpret_cast<uintptr_t>(pointer);
    for (const Allocation &allocation : live)
      if (address >= allocation.begin && address - allocation.begin < allocation.bytes) return &allocation;
    return nullptr;
  }
  void allocate(uintptr_t begin, size_t bytes) { live.push_back({begin, bytes, next_id++}); }
  void free(uintptr_t begin) {
    for (size_t i = 0; i < live.size(); ++i)
      if (live[i].begin == begin) {
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
  }
};

SimulatedDriver driver;

Status failure() {
  return Status::failure(StatusCode::cuda_error, "cuPointerGetAttributes failed: CUDA_ERROR_LAUNCH_FAILED");
}

Status full_query(const void *pointer, PointerAttributes *attributes) {
  ++driver.full_queries;
  if (driver.failing) return failure();
  PointerAttributes result;
  if (const Allocation *allocation = driver.find(pointer)) {
    result.memory = PointerAttributes::Memory::device;
    result.device = 0;
    result.range_begin = allocation->begin;
    result.range_bytes = allocation->bytes;
    result.buffer_id = allocation->id;
  }
  *attributes = result;
  return Status::success();
}

Status id_query(const void *pointer, uint64_t *id) {
  ++driver.id_queries;
  if (driver.failing) return failure();
  const Allocation *allocation = driver.find(pointer);
  *id = allocation != nullptr ? allocation->id : 0;
  return Status::success();
}

const void *address(uintptr_t value) { return reinterpret_cast<const void *>(value); }

PointerAttributes query(PointerCache &cache, uintptr_t value) {
  PointerAttributes attributes;
  const Status status = cache.query(address(value), &attributes);
  REQUIRE(status.ok());
  return attributes;
}

}  // namespace

TEST_CASE("pointer cache: an allocation seen before costs one id query and gives the full answer", "[pointer_cache]") {
  driver = SimulatedDriver{};
  driver.allocate(0x100000, 4 << 20);
  PointerCache cache(full_query, id_query);
  PointerAttributes first = query(cache, 0x100000 + 256);
  CHECK(first.memory == PointerAttributes::Memory::device);
  CHECK(first.range_begin == 0x100000);
  CHECK(first.range_bytes == size_t{4} << 20);
  CHECK(driver.full_queries == 1);
  // Another pointer into the same allocation: the cached answer, one id query, no full one.
  const int ids_before = driver.id_queries;
  PointerAttributes second = query(cache, 0x100000 + (3 << 20));
  CHECK(second.range_begin == 0x100000);
  CHECK(second.range_bytes == size_t{4} << 20);
  CHECK(driver.full_queries == 1);
  CHECK(driver.id_queries == ids_before + 1);
}

TEST_CASE("pointer cache: memory freed and allocated again at the same address with another size is queried anew",
          "[pointer_cache]") {
  driver = SimulatedDriver{};
  driver.allocate(0x200000, 8 << 20);
  PointerCache cache(full_query, id_query);
  CHECK(query(cache, 0x200000).range_bytes == size_t{8} << 20);
  driver.free(0x200000);
  driver.allocate(0x200000, 1 << 20);  // same address, a new id, an eighth of the size
  const PointerAttributes again = query(cache, 0x200000);
  CHECK(again.range_begin == 0x200000);
  CHECK(again.range_bytes == size_t{1} << 20);  // an operand reaching past 1 MiB is refused by the caller
  CHECK(driver.full_queries == 2);
  // Freed and not allocated again: the driver does not know the pointer, and neither does the cache.
  driver.free(0x200000);
  const PointerAttributes gone = query(cache, 0x200000);
  CHECK(gone.memory == PointerAttributes::Memory::unknown);
  CHECK(gone.range_bytes == 0);
}

TEST_CASE("pointer cache: unknown memory is never cached; many allocations in turn all answer correctly",
          "[pointer_cache]") {
  driver = SimulatedDriver{};
  PointerCache cache(full_query, id_query);
  for (int i = 0; i < 3; ++i) CHECK(query(cache, 0x7000).memory == PointerAttributes::Memory::unknown);
  CHECK(driver.full_queries == 3);
  // More allocations than entries, visited in turn twice: every answer is its own allocation's.
  constexpr int kAllocations = PointerCache::kEntries + 5;
  for (int i = 0; i < kAllocations; ++i) driver.allocate(0x1000000 + uintptr_t(i) * 0x100000, 0x1000 * (i + 1));
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < kAllocations; ++i) {
      const uintptr_t begin = 0x1000000 + uintptr_t(i) * 0x100000;
      const PointerAttributes attributes = query(cache, begin + 8);
      CHECK(attributes.range_begin == begin);
      CHECK(attributes.range_bytes == size_t(0x1000) * (i + 1));
    }
  // The last kEntries allocations are cached: visiting them again makes no full query.
  const int full_before = driver.full_queries;
  for (int i = kAllocations - PointerCache::kEntries; i < kAllocations; ++i)
    query(cache, 0x1000000 + uintptr_t(i) * 0x100000);
  CHECK(driver.full_queries == full_before);
}

TEST_CASE("pointer cache: a failing driver is the query's error, cached or not", "[pointer_cache]") {
  driver = SimulatedDriver{};
  driver.allocate(0x300000, 1 << 20);
  PointerCache cache(full_query, id_query);
  query(cache, 0x300000);
  driver.failing = true;
  PointerAttributes attributes;
  const Status status = cache.query(address(0x300000), &attributes);
  CHECK(status.code == StatusCode::cuda_error);
  CHECK(status.message.find("CUDA_ERROR_LAUNCH_FAILED") != std::string::npos);
}
