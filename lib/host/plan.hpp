// SPDX-License-Identifier: Apache-2.0
// The plan of one fg_sgemm_host call: the tile grid (host_gemm.hpp's choose_host_tiling), the order in which workers
// take the steps and the device slots they use, the testing knobs read from the environment, and what every worker
// of the call shares (HostJob). Pure: functions of the problem, the devices' memory and the environment.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/problem.hpp"
#include "host/host_gemm.hpp"
#include "host/staging.hpp"
#include "tuning/tuning.hpp"

namespace fastgemm::detail {

// Tiles from 1024 to 4096 on a side, the largest that still cuts the longer side of C in four: a product
// of 4096 or more on a side has at least 16 tiles, so the first upload and the last download, which
// nothing overlaps, are a small part of the traffic, while each tile's product (0.2 ms for 1024 x 1024 x
// 4096 at 46 TFLOPS, 2.7 ms at 4096 square) still dwarfs the launch and event overheads.
constexpr int64_t largest_tile_edge = 4096;
constexpr int64_t smallest_tile_edge = 1024;
// In the emulated mode, products of 4096 and more on every side take tiles 4096 wide: each step's product then
// reaches AUTO's emulation threshold (m n k >= 2^34), where the quartered grid's 2048 x 2048 x 2048 steps of 8192^3
// ran FP32. On the H100 from pageable memory (bench/NOTES-emulated-calls.md), 8192^3 took 22.7-23.9 ms against
// 28.5-29.5 ms with those steps, and 4096^3 (one step) 7.0-7.8 ms against 7.7-8.7 ms; operands the emulation
// declines took FP32's time with either grid, and so did the FP32 mode.
// And where a step over all of k (k up to emulated_whole_k_limit, the tiles narrowed as FG_REPRODUCIBLE_SHAPE's are)
// reaches that threshold, k is one chunk: each element of C is then one emulated call's, held to the header's
// per-element guarantee with the call's own k (a sum of c chunks is proven to within c times the guarantee at the
// chunks' depth only, docs/math-mode.md).
constexpr int64_t emulated_tile_edge = tuning::kHostEmulatedTileEdge;
constexpr int64_t emulated_whole_k_limit = tuning::kEmulationMaxDepth;
// k is cut in chunks about as deep as the tile is wide, and at least min_chunk_k deep (balanced, a multiple
// of 128): the first product waits for a quarter of the first panels at most, and each chunk's product
// still runs at the device's full rate. The floor halves the steps of the 1024-wide tiles: on the H100,
// 4096^3 took 4.57 ms pinned and 7.12 ms pageable with chunks of 2048, against 5.24 and 8.43 ms with
// chunks of 1024 (and 4.44 / 8.35 ms with 4096); 8192^3 was as fast or faster (24.7 / 29.4 ms against
// 24.8 / 32.9).
constexpr int64_t chunk_k_multiple = 128;
constexpr int64_t min_chunk_k = 2048;
constexpr int64_t max_tile_k = 65536;
constexpr int64_t min_tile_k = 256;
// With k in one chunk (FG_REPRODUCIBLE_SHAPE), tiles narrow down to this edge to fit the staging budget.
constexpr int64_t min_whole_k_edge = 64;
// The staging buffers of the grid's formula may use at most a quarter of the device's memory, and never
// more than this.
constexpr size_t max_staging_bytes = size_t(6) << 30;
// Steps (one k chunk of one tile) planned ahead of the one whose product is enqueued next: two tiles' worth,
// within these bounds, so that the upload thread moves the next row's panels while light tiles compute.
constexpr int64_t min_lookahead_steps = 3;
constexpr int64_t max_lookahead_steps = 16;
// The most workers FASTGEMM_HOST_WORKERS_PER_DEVICE may ask for on one device.
constexpr int max_workers_per_device = 8;
// Device memory left to the products themselves (workspaces) when the staging buffers are sized.
constexpr size_t reserved_device_bytes = size_t(768) << 20;

// In which order a worker takes the steps (tile, k chunk). Tile by tile, each tile's chunks in a row,
// while the panels that a row of tiles reuses fit on the device; chunk by chunk over C's tiles, all kept
// on the device, when they do not (k so deep that A and B exceed the device, C not): then every piece of A
// and B crosses the bus once. Either way each tile sums its chunks in k order.
enum class Order { tile_major, chunk_major };

// How many device slots of each kind one call uses.
struct SlotCounts {
  Order order = Order::tile_major;
  size_t a = 0, b = 0, c = 0;
};

class HostProfile;
template <typename T>
class PeerPieces;

// What every worker of one call shares.
template <typename T>
struct HostJob {
  BasicGemmProblem<T> problem;
  bool product = true;
  fg_sgemm_algo_t algo = FG_SGEMM_AUTO;
  const HostTileOps<T> *ops = nullptr;
  CopyPool *pool = nullptr;
  HostProfile *profile = nullptr;     // where the call's spans go (FASTGEMM_HOST_PROFILE); null: nowhere
  SharedPieces<T> *shared = nullptr;  // where B's pieces are packed when B is pageable; null: each worker's ring
  PeerPieces<T> *peers = nullptr;  // B's pieces passed between devices (FASTGEMM_HOST_PEER); null: each from the host
  HostTiling tiling;
  int64_t tiles_m = 0, tiles_n = 0, chunks = 0;
  PointerPlace a_place, b_place, c_place;
  SlotCounts slots;
  int64_t lookahead = min_lookahead_steps;
  int workers = 1;
  bool single_worker = true;
  // Tile-major order: the rows of tiles are cut into one band per worker (at most max_bands, and no more
  // than rows), each with its own counter. A worker takes the tiles of its band first, row by row, so that
  // a row's A panel crosses to one device only, then helps the other bands where they are, one tile at a
  // time and only once its device has at most one tile left to compute. The host enqueues far ahead of the
  // devices (with pinned operands nothing holds it back): taking other bands' tiles as soon as its own were
  // enqueued made the split between two devices a race, 9 or 10 tiles of 16 on one of them.
  static constexpr int max_bands = 16;
  std::atomic<int64_t> band_next[max_bands]{};
  std::atomic<bool> failed{false};

  int64_t tiles() const { return tiles_m * tiles_n; }
  int bands() const { return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({workers, max_bands, tiles_m}))); }
  // The first tile of `band` (band == bands(): one past the last tile).
  int64_t band_begin(int band) const { return band * tiles_m / bands() * tiles_n; }
  Residence a_on(int device) const { return residence_on(a_place, device, single_worker); }
  Residence b_on(int device) const { return residence_on(b_place, device, single_worker); }
  Residence c_on(int device) const { return residence_on(c_place, device, single_worker); }
};

// Workers per listed device as FASTGEMM_HOST_WORKERS_PER_DEVICE asks (1 to max_workers_per_device; a testing aid),
// else 1.
int host_workers_per_device_from_environment();

// Whether B's pieces may pass between the devices of a call (peer_pieces.hpp): yes unless FASTGEMM_HOST_PEER is "0".
bool host_peer_copies_from_environment();

// The device memory the staging buffers may use, as FASTGEMM_HOST_STAGING asks (bytes; a testing knob that forces the
// orders and slot counts of a device with little memory), or 0 when it asks for no limit.
size_t host_staging_limit_from_environment();

// The slots one call uses on each device, within `room` bytes of device memory (the smallest worker's).
template <typename T>
SlotCounts choose_slot_counts(const HostJob<T> &job, int device, size_t room);

}  // namespace fastgemm::detail
