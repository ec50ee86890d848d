// SPDX-License-Identifier: Apache-2.0
// fg_sgemm_host's engine: a product whose operands may live anywhere (pageable, pinned, managed or device
// memory, of any size) computed tile by tile of C on one or more devices. Generic over the element (float for
// fg_sgemm_host, double for libfastgemm_blas's FP64 products): the engine stages and copies elements, and the
// caller's HostTileOps compute each tile's product on the device. A and B panels and C tiles are
// staged through device buffers and, for pageable memory, through rings of pinned chunks that a pool of
// host threads packs and unpacks. Per device, one thread enqueues the products, one the uploads and one
// the downloads, each on its own stream, so that host copies, transfers both ways and products overlap.
// Device memory of a worker's device is used in place.
//
// Bitwise reproducibility: the tile grid (tile edges and k chunks) is a function of the problem and of the
// devices' total memory only, every tile is computed by the same algorithm path whichever device takes
// it, and the k chunks of a tile are summed in a fixed order. So C is the same for any tile schedule and
// any number of devices of one model. With FG_REPRODUCIBLE_SHAPE, k is never cut and every tile's product
// is one shape-reproducible call, so C does not depend on the grid, the devices or their model either (as far as
// the caller's product is itself shape-reproducible, as fg_sgemm's is at that level).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/context.hpp"
#include "core/problem.hpp"
#include "core/status.hpp"
#include "fastgemm/fastgemm.h"

namespace fastgemm::detail {

// The tile grid of one product: C in tiles of tile_m x tile_n, k in chunks of tile_k. Chunks about as deep
// as a tile is wide let a tile's first product start once the first chunk of its panels has arrived.
struct HostTiling {
  int64_t tile_m = 0, tile_n = 0, tile_k = 0;
};

// The largest tile edge the environment asks for (FASTGEMM_HOST_TILE, a testing knob that forces many
// small tiles), or 0 when it asks for none.
int64_t host_tile_limit_from_environment();

// The grid for an m x n x k product (k == 0 for a C := beta * C call) on devices whose smallest total
// memory is `device_bytes`. Pure: the same arguments give the same grid. `whole_k` (FG_REPRODUCIBLE_SHAPE):
// k in one chunk, since summing chunks into C breaks each element's single chain of FMAs; the tile edges
// shrink instead where the panels of all of k would not fit. `emulated` (FG_MATH_FP32_EMULATED): products of
// emulated_tile_edge and more on every side take tiles of that size, and k is one chunk wherever a step over all of
// k reaches the emulation's size rule (plan.hpp). `element_bytes`: the size of the product's elements, which the
// staging budget counts.
HostTiling choose_host_tiling(int64_t m, int64_t n, int64_t k, size_t device_bytes, int64_t tile_limit,
                              bool whole_k = false, bool emulated = false, size_t element_bytes = sizeof(float));

// The deepest k the engine takes in one chunk (FG_REPRODUCIBLE_SHAPE): a line of a panel must fit in one
// pinned ring chunk.
int64_t host_whole_k_limit();

// What the SGEMM path reports of an emulated product (sgemm/emulation_report.hpp), which the tiles never ask for.
struct EmulationReport;

// How a tile is computed, given by the caller so that this folder depends on no other operation: for
// fg_sgemm_host the handle's SGEMM path, for libfastgemm_blas's FP64 products its own. `product` runs a
// canonical problem with `algo` (the SGEMM path's; other callers ignore it) on the context's stream and stores what
// ran (the tiles report no emulation: `report` is nullptr); `scale` enqueues C := beta * C. AUTO's choices wait for
// nothing (the emulated mode chooses on the device); a forced FG_SGEMM_OZAKI_INT8 waits once per tile step for
// its look at the operands. `workspace` (may be empty: none) gives the device memory a step's product may take
// beside the engine's reserve, which the staging buffers then leave free.
template <typename T>
struct HostTileOps {
  std::function<Status(const BasicGemmProblem<T> &, Context &, fg_sgemm_algo_t algo, EmulationReport *report,
                       fg_sgemm_algo_t *ran)>
      product;
  std::function<Status(const BasicGemmProblem<T> &, cudaStream_t)> scale;
  std::function<Status(const BasicGemmProblem<T> &, const Context &, fg_sgemm_algo_t algo, size_t *bytes)> workspace;
};

// One step's product through `ops`. A forced FG_SGEMM_OZAKI_INT8 that declines the step's operands (having written
// nothing) computes the step in FP32 instead, as a captured call's replay does: of a forced emulation the engine
// refuses only what fg_sgemm refuses before looking at the operands (HostGemm::run checks it before any tile runs),
// since the tiles written before a later tile's refusal could not be taken back.
template <typename T>
Status run_step(const HostTileOps<T> &ops, const BasicGemmProblem<T> &part, Context &context, fg_sgemm_algo_t algo,
                fg_sgemm_algo_t *ran) {
  const Status status = ops.product(part, context, algo, nullptr, ran);
  if (status.code != StatusCode::not_supported || algo != FG_SGEMM_OZAKI_INT8) return status;
  BasicGemmProblem<T> fp32 = part;
  fp32.math = FG_MATH_FP32;
  return ops.product(fp32, context, FG_SGEMM_AUTO, nullptr, ran);
}

template <typename T>
class HostWorker;
class CopyPool;
template <typename T>
class SharedPieces;
template <typename T>
class PeerPieces;
class SmallProduct;

// The per-handle state of the engine: the device list and one worker per device, whose buffers are allocated on
// first use and kept for later calls. Instantiated for float (fg_sgemm_host) and double.
template <typename T>
class HostGemm {
 public:
  explicit HostGemm(Context &primary);
  ~HostGemm();
  HostGemm(const HostGemm &) = delete;
  HostGemm &operator=(const HostGemm &) = delete;

  // Ordinals must be valid and distinct, count >= 1; devices == NULL with count 0 returns to the
  // handle's own device.
  Status set_devices(const int *devices, int count);
  const std::vector<int> &devices() const { return devices_; }

  // problem as validate_sgemm gives it, or its FP64 caller alike (canonical row-major, batch 1); `product` false means
  // only C := beta * C (k == 0 or alpha == 0), A and B unread. Returns once C is written, the handle's stream
  // synchronized first. *ran is the algorithm the tiles' products ran (AUTO when none ran). `column_major` is the
  // caller's layout, which names its operands in errors (the canonical A is then the caller's B).
  Status run(const BasicGemmProblem<T> &problem, bool product, fg_sgemm_algo_t algo, const HostTileOps<T> &ops,
             fg_sgemm_algo_t *ran, bool column_major = false);

 private:
  Status ensure_workers();
  // Whether every listed device can read every other's memory, peer access enabled for each pair (once per list).
  bool devices_reach_each_other();
  Status device_total_memory(int ordinal, size_t *bytes);

  Context &primary_;
  std::vector<int> devices_;
  std::vector<std::unique_ptr<HostWorker<T>>> workers_;
  // Workers per listed device: 1, or what FASTGEMM_HOST_WORKERS_PER_DEVICE asks (a testing aid that runs
  // the scheduling of several devices on one).
  int workers_per_device_ = 1;
  std::unique_ptr<CopyPool> pool_;  // host threads shared by every worker's packing and unpacking
  int pool_threads_ = 0;
  std::unique_ptr<SharedPieces<T>> shared_;  // pinned pieces of a pageable B that every worker uploads
  std::unique_ptr<PeerPieces<T>> peers_;     // B's pieces passed between devices (FASTGEMM_HOST_PEER)
  std::vector<int> reachable_;               // the device list whose pairs reach each other, once checked
  bool reach_checked_ = false, reach_ = false;
  std::vector<std::pair<int, size_t>> total_memory_;  // each device's total memory, by ordinal, once asked
  std::unique_ptr<SmallProduct> small_;               // the short way's buffers (small_product.hpp)
};

}  // namespace fastgemm::detail
