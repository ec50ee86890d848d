// SPDX-License-Identifier: Apache-2.0
#include "host/plan.hpp"

#include "host/worker.hpp"

#include <algorithm>
#include <cstdlib>

namespace fastgemm::detail {

namespace {

// The positive integer an environment variable holds, or 0 when it is unset or holds anything else.
int64_t positive_integer_from_environment(const char *name) {
  const char *text = std::getenv(name);
  if (text == nullptr || *text == '\0') return 0;
  char *end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  return *end == '\0' && value > 0 ? static_cast<int64_t>(value) : 0;
}

}  // namespace

int64_t host_tile_limit_from_environment() { return positive_integer_from_environment("FASTGEMM_HOST_TILE"); }

int64_t host_whole_k_limit() { return static_cast<int64_t>(ring_chunk_elements); }

HostTiling choose_host_tiling(int64_t m, int64_t n, int64_t k, size_t device_bytes, int64_t tile_limit, bool whole_k,
                              bool emulated, size_t element_bytes) {
  // Any edge, the knob's included, stays within max_tile_k, so that one line fits in a ring chunk.
  const int64_t limit = std::min(tile_limit, max_tile_k);
  int64_t edge = largest_tile_edge;
  while (edge > smallest_tile_edge && 4 * edge > std::max(m, n)) edge /= 2;
  if (emulated && !whole_k && std::min({m, n, k}) >= emulated_tile_edge) edge = std::max(edge, emulated_tile_edge);
  if (limit > 0) edge = limit;
  HostTiling tiling;
  tiling.tile_m = std::min(m, edge);
  tiling.tile_n = std::min(n, edge);
  if (k == 0) return tiling;
  const size_t budget = std::min(device_bytes / 4, max_staging_bytes);
  const auto bytes = [&](const HostTiling &t, int64_t depth) {
    return static_cast<size_t>(2 * (t.tile_m + t.tile_n) * depth + 2 * t.tile_m * t.tile_n) * element_bytes;
  };
  // k in one chunk, the tiles narrower where the panels of all of k would not fit.
  const auto all_of_k = [&] {
    HostTiling t = tiling;
    t.tile_k = k;
    while ((t.tile_m > min_whole_k_edge || t.tile_n > min_whole_k_edge) && bytes(t, k) > budget) {
      t.tile_m = std::max(std::min(t.tile_m, min_whole_k_edge), (t.tile_m + 1) / 2);
      t.tile_n = std::max(std::min(t.tile_n, min_whole_k_edge), (t.tile_n + 1) / 2);
    }
    return t;
  };
  if (whole_k) return all_of_k();
  if (emulated && limit == 0 && k <= emulated_whole_k_limit) {
    const HostTiling t = all_of_k();
    if (tuning::emulation_size(t.tile_m, t.tile_n, k, 1) == tuning::EmulationSize::pays) return t;
  }
  if (limit > 0) {
    tiling.tile_k = std::min(k, limit);
  } else {
    const int64_t depth = std::max(edge, min_chunk_k);
    const int64_t chunks = (k + depth - 1) / depth;
    const int64_t balanced = (k + chunks - 1) / chunks;
    tiling.tile_k = std::min(k, (balanced + chunk_k_multiple - 1) / chunk_k_multiple * chunk_k_multiple);
  }
  while (tiling.tile_k > min_tile_k && bytes(tiling, tiling.tile_k) > budget) tiling.tile_k = (tiling.tile_k + 1) / 2;
  return tiling;
}

int host_workers_per_device_from_environment() {
  const int64_t value = positive_integer_from_environment("FASTGEMM_HOST_WORKERS_PER_DEVICE");
  return value > 0 && value <= max_workers_per_device ? static_cast<int>(value) : 1;
}

bool host_peer_copies_from_environment() {
  const char *text = std::getenv("FASTGEMM_HOST_PEER");
  return text == nullptr || text[0] != '0' || text[1] != '\0';
}

size_t host_staging_limit_from_environment() {
  return static_cast<size_t>(positive_integer_from_environment("FASTGEMM_HOST_STAGING"));
}

template <typename T>
SlotCounts choose_slot_counts(const HostJob<T> &job, int device, size_t room) {
  const HostTiling &t = job.tiling;
  const int64_t chunks = std::max<int64_t>(job.chunks, 1);
  const int64_t tiles_per_worker = (job.tiles() + job.workers - 1) / job.workers;
  const bool staged_a = job.product && job.a_on(device) != Residence::in_place;
  const bool staged_b = job.product && job.b_on(device) != Residence::in_place;
  const bool staged_c = job.c_on(device) != Residence::in_place;
  const auto bytes = [&](const SlotCounts &counts) {
    return (counts.a * static_cast<size_t>(t.tile_m * t.tile_k) + counts.b * static_cast<size_t>(t.tile_k * t.tile_n) +
            counts.c * static_cast<size_t>(t.tile_m * t.tile_n)) *
           sizeof(T);
  };
  const auto staged = [](bool is_staged, int64_t count) { return is_staged ? static_cast<size_t>(count) : 0; };
  // Few pieces, each read by the steps planned ahead, for operands streamed through the device.
  const int64_t few = job.lookahead + 2;
  // Three C tiles: one computed, one downloaded, and one whose beta * C is fetched ahead.
  const size_t c_few = staged(staged_c, std::min<int64_t>(3, tiles_per_worker));
  // Tile by tile: a row of tiles' A panel (every chunk) stays while the row is computed, and every B
  // panel for the whole call, so that each crosses the bus once.
  const SlotCounts whole{Order::tile_major, staged(staged_a, std::min(job.tiles_m * chunks, chunks + few)),
                         staged(staged_b, job.tiles_n * chunks), c_few};
  if (bytes(whole) <= room) return whole;
  // Chunk by chunk: C's tiles stay, and one chunk of B's panels at a time.
  const SlotCounts deep{Order::chunk_major, staged(staged_a, few),
                        staged(staged_b, std::min(job.tiles_n * chunks, job.tiles_n + few)),
                        staged(staged_c, tiles_per_worker)};
  if (chunks > 1 && bytes(deep) <= room) return deep;
  // Tile by tile with panels uploaded again where they do not fit: slower, but within the memory.
  SlotCounts streamed{Order::tile_major, whole.a, staged(staged_b, std::min(job.tiles_n * chunks, few)), c_few};
  if (bytes(streamed) > room) streamed.a = staged(staged_a, few);
  if (bytes(streamed) > room)
    streamed = SlotCounts{Order::tile_major, staged(staged_a, 2), staged(staged_b, 2),
                          staged(staged_c, std::min<int64_t>(2, tiles_per_worker))};
  return streamed;
}

template SlotCounts choose_slot_counts<float>(const HostJob<float> &, int, size_t);
template SlotCounts choose_slot_counts<double>(const HostJob<double> &, int, size_t);

}  // namespace fastgemm::detail
