// SPDX-License-Identifier: Apache-2.0
// fg_sgemm_host's engine: the entry that wires the parts below together for one call.
//
// The map. The blocking is BLIS's five loops around a micro-kernel, with its packing, where the "cache" that the
// packed blocks live in is a device's memory and the micro-kernel is a whole device product:
//  - loop 5 (jc, columns of C in blocks of NC) and loop 3 (ic, rows in blocks of MC) are the tiles of C,
//    tile_n x tile_m (plan.hpp: choose_host_tiling's grid); loop 4 (pc, k in blocks of KC) is the k chunks, tile_k
//    deep. Tile-major order (the usual one) runs ic, then jc, then pc innermost, so that a tile's chunks are summed
//    in a row on the device into its C slot; chunk-major order (k too deep for A and B to stay, C's tiles kept)
//    runs pc outermost, as BLIS does. Either way each tile sums its chunks in k order (bitwise reproducibility).
//  - packing B (the KC x NC panel B~): a piece of B, tile_k x tile_n, staged into a device slot (worker.hpp's
//    DeviceSlot) by a 2-D copy, or, when B is pageable, packed by the host into a pinned ring chunk or into a
//    piece shared by every worker of the call (shared_pieces.hpp) first. Packing A (the MC x KC block A~): a
//    chunk of a row of A's panels, tile_m x tile_k, staged the same way (never shared: a band of rows belongs to
//    one worker).
//  - loops 2 and 1 (jr, ir) and the micro-kernel: the device's SGEMM on one step (one chunk of one tile), run by
//    HostTileOps::product with the handle's algorithm on the worker's compute stream (AUTO's choices never
//    synchronize it, host_gemm.hpp).
//
// Threads, and what each waits on and signals (worker.hpp's Progress; every CUDA event is waited for only once
// the thread recording it has said so there):
//  - the calling thread runs worker 0's product role, and one more thread per other worker runs theirs
//    (HostGemm::run). The product role (worker.cpp) takes steps (its band's tiles, then help to other bands),
//    plans each a lookahead ahead, pushing upload requests for the pieces it lacks; it waits for uploads_recorded
//    to cover a step's pieces (and, for a C slot reused with beta == 0, for downloads_released), makes the
//    compute stream wait on the slots' ready events, enqueues the product, records the pieces' released events,
//    and signals steps_enqueued and, after a tile's last chunk, a download request.
//  - each worker's upload thread (worker_transfers.cpp) takes upload requests in order, waits for the slot to be
//    free (steps_enqueued past the step that last read it, downloads_released past the tile that last used it),
//    packs and copies on the upload stream, records the slot's ready event and signals uploads_recorded.
//  - each worker's download thread takes download requests, copies the tile back on the download stream (through
//    the ring when C is pageable, unpacked by the pool), records the slot's released event and signals
//    downloads_released.
//  - the copy pool's threads (copy_pool.hpp) run parts of the host copies of every worker's packing and
//    unpacking; they make no CUDA call.
//  A failing part sets HostJob::failed; the others stop at their next wait with StatusCode::aborted, and the call
//  reports the first failure that is not an abort (failure.hpp).
//  A product of one step on the handle's own device, its operands in host memory and small enough, skips all of
//  this: the calling thread packs, copies, computes and unpacks it on the handle's stream (small_product.hpp).
//
// Lifetimes. Per call: the HostJob (problem, plan, slot counts, band counters, failure flag), each worker's
// Progress and slot keys (reset by HostWorker::work), the mappings check of pageable operands (mappings.hpp).
// Per handle: HostGemm (devices, workers), each HostWorker (its streams and contexts, device slots, pinned rings,
// events), the CopyPool's threads, the SharedPieces' pinned buffers and the short way's two buffers, allocated on
// first need and kept.
#include "host/host_gemm.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/check.hpp"
#include "core/device.hpp"
#include "host/copy_pool.hpp"
#include "host/failure.hpp"
#include "host/mappings.hpp"
#include "host/peer_pieces.hpp"
#include "host/plan.hpp"
#include "host/profile.hpp"
#include "host/shared_pieces.hpp"
#include "host/small_product.hpp"
#include "host/staging.hpp"
#include "host/worker.hpp"

namespace fastgemm::detail {

template <typename T>
HostGemm<T>::HostGemm(Context &primary) : primary_(primary), devices_{primary.device().ordinal} {}

template <typename T>
HostGemm<T>::~HostGemm() = default;

template <typename T>
Status HostGemm<T>::set_devices(const int *devices, int count) {
  if (count < 0)
    return Status::failure(StatusCode::invalid_value, "count = " + std::to_string(count) + " must be >= 0");
  if (count > 0 && devices == nullptr)
    return Status::failure(StatusCode::invalid_value, "devices is NULL but count > 0");
  if (count == 0) {  // an empty list, wherever it points: the handle's own device
    devices_ = {primary_.device().ordinal};
    workers_.clear();
    return Status::success();
  }
  int available = 0;
  FG_CUDA_CHECK(cudaGetDeviceCount(&available));
  std::vector<int> chosen;
  for (int i = 0; i < count; ++i) {
    const int ordinal = devices[i];
    const std::string name = "devices[" + std::to_string(i) + "] = " + std::to_string(ordinal);
    if (ordinal < 0 || ordinal >= available)
      return Status::failure(StatusCode::invalid_value,
                             name + " is no device ordinal (this machine has " + std::to_string(available) + ")");
    if (std::find(chosen.begin(), chosen.end(), ordinal) != chosen.end())
      return Status::failure(StatusCode::invalid_value, name + " is listed twice");
    chosen.push_back(ordinal);
  }
  if (chosen != devices_) workers_.clear();
  devices_ = std::move(chosen);
  return Status::success();
}

template <typename T>
Status HostGemm<T>::ensure_workers() {
  const int per_device = host_workers_per_device_from_environment();
  if (!workers_.empty() && workers_per_device_ == per_device) return Status::success();
  workers_.clear();
  std::vector<std::unique_ptr<HostWorker<T>>> made;
  bool primary_taken = false;
  for (int ordinal : devices_) {
    DeviceGuard guard;
    FG_RETURN_IF_ERROR(guard.enter(ordinal));
    for (int copy = 0; copy < per_device; ++copy) {
      const bool in_primary = ordinal == primary_.device().ordinal && !primary_taken;
      primary_taken = primary_taken || in_primary;
      std::unique_ptr<HostWorker<T>> worker;
      FG_RETURN_IF_ERROR(HostWorker<T>::create(ordinal, primary_, in_primary, &worker));
      made.push_back(std::move(worker));
    }
  }
  workers_ = std::move(made);
  workers_per_device_ = per_device;
  return Status::success();
}

// Peer access is enabled once for each ordered pair of listed devices that can have it (and stays enabled for the
// process, as cudaDeviceEnablePeerAccess leaves it); a pair that cannot makes every piece come from the host. The
// runtime records a refusal (access already enabled, by the program or an earlier list, included) as the thread's
// pending error, which this clears: so while the caller has an error of its own pending, nothing is asked, and this
// call takes every piece from the host.
template <typename T>
bool HostGemm<T>::devices_reach_each_other() {
  if (reach_checked_ && reachable_ == devices_) return reach_;
  if (cudaPeekAtLastError() != cudaSuccess) return false;
  reach_checked_ = true;
  reachable_ = devices_;
  reach_ = false;
  for (int from : devices_)
    for (int to : devices_) {
      int can = 0;
      if (from == to) continue;
      if (cudaDeviceCanAccessPeer(&can, from, to) != cudaSuccess) {
        (void)cudaGetLastError();  // not sticky: the call goes on without peer copies
        return false;
      }
      if (can == 0) return false;
    }
  for (int from : devices_) {
    DeviceGuard guard;
    if (!guard.enter(from).ok()) return false;
    for (int to : devices_) {
      if (from == to) continue;
      const cudaError_t enabled = cudaDeviceEnablePeerAccess(to, 0);
      if (enabled == cudaSuccess) continue;
      (void)cudaGetLastError();  // already enabled (by the program or an earlier list), or refused: not sticky
      if (enabled != cudaErrorPeerAccessAlreadyEnabled) return false;
    }
  }
  reach_ = true;
  return true;
}

namespace {

template <typename T>
ByteRegion bytes_of(const Region<T> &region) {
  constexpr int64_t size = sizeof(T);
  return ByteRegion{reinterpret_cast<uintptr_t>(region.data), region.ld * size, region.lines, region.length * size};
}

// A pageable operand shorter than its extents would fault in a copy thread, after C was partly written: it is
// refused first, naming the caller's operand (column-major calls reach the engine with A and B swapped). Memory
// the driver knows (pinned, managed, device) is its allocation's, checked by the driver's copies.
template <typename T>
Status check_pageable_extents(const HostJob<T> &job, bool column_major) {
  const BasicGemmProblem<T> &p = job.problem;
  const bool a_pageable = job.product && job.a_place.type == cudaMemoryTypeUnregistered;
  const bool b_pageable = job.product && job.b_place.type == cudaMemoryTypeUnregistered;
  const bool c_pageable = job.c_place.type == cudaMemoryTypeUnregistered;
  if (!a_pageable && !b_pageable && !c_pageable) return Status::success();
  Mappings mappings;
  if (!mappings.available()) return Status::success();
  if (a_pageable)
    FG_RETURN_IF_ERROR(
        check_mapped(mappings, column_major ? "B" : "A", p.a.data, bytes_of(a_region(p.a, 0, p.m, 0, p.k)), kRead));
  if (b_pageable)
    FG_RETURN_IF_ERROR(
        check_mapped(mappings, column_major ? "A" : "B", p.b.data, bytes_of(b_region(p.b, 0, p.k, 0, p.n)), kRead));
  // beta == 0 writes C without reading it.
  if (c_pageable)
    FG_RETURN_IF_ERROR(check_mapped(mappings, "C", p.c, bytes_of(Region<T>{p.c, p.ldc, p.m, p.n}),
                                    p.beta == T(0) ? kWrite : kRead | kWrite));
  return Status::success();
}

const char *residence_name(Residence residence) {
  switch (residence) {
    case Residence::in_place: return "in_place";
    case Residence::direct: return "direct";
    case Residence::pageable: return "pageable";
  }
  return "unknown";
}

// The call as a profile's comment line names it (profile.hpp).
template <typename T>
std::string profile_header(const HostJob<T> &job, const std::vector<int> &devices) {
  const BasicGemmProblem<T> &p = job.problem;
  const HostTiling &t = job.tiling;
  std::string list;
  for (int ordinal : devices) list += (list.empty() ? "" : ":") + std::to_string(ordinal);
  const auto number = [](int64_t value) { return std::to_string(value); };
  return "m=" + number(p.m) + " n=" + number(p.n) + " k=" + number(job.product ? p.k : 0) +
         " element_bytes=" + number(sizeof(T)) + " tile=" + number(t.tile_m) + "x" + number(t.tile_n) + "x" +
         number(t.tile_k) + " tiles=" + number(job.tiles_m) + "x" + number(job.tiles_n) +
         " chunks=" + number(job.chunks) + " workers=" + number(job.workers) + " devices=" + list +
         " order=" + (job.slots.order == Order::tile_major ? "tile_major" : "chunk_major") +
         " slots=" + number(static_cast<int64_t>(job.slots.a)) + "/" + number(static_cast<int64_t>(job.slots.b)) + "/" +
         number(static_cast<int64_t>(job.slots.c)) + " a=" + residence_name(job.a_on(devices.front())) +
         " b=" + residence_name(job.b_on(devices.front())) + " c=" + residence_name(job.c_on(devices.front())) +
         " shared_b=" + (job.shared != nullptr ? "1" : "0") + " peer_b=" + (job.peers != nullptr ? "1" : "0") +
         " failed=" + (job.failed.load() ? "1" : "0");
}

}  // namespace

// cudaGetDeviceProperties reads every property, some slowly: asked once per device, not per call, since a
// device's total memory never changes.
template <typename T>
Status HostGemm<T>::device_total_memory(int ordinal, size_t *bytes) {
  for (const auto &known : total_memory_)
    if (known.first == ordinal) {
      *bytes = known.second;
      return Status::success();
    }
  cudaDeviceProp properties = {};
  FG_CUDA_CHECK(cudaGetDeviceProperties(&properties, ordinal));
  total_memory_.emplace_back(ordinal, properties.totalGlobalMem);
  *bytes = properties.totalGlobalMem;
  return Status::success();
}

template <typename T>
Status HostGemm<T>::run(const BasicGemmProblem<T> &problem, bool product, fg_sgemm_algo_t algo,
                        const HostTileOps<T> &ops, fg_sgemm_algo_t *ran, bool column_major) {
  *ran = FG_SGEMM_AUTO;
  const bool whole_k = problem.reproducibility == FG_REPRODUCIBLE_SHAPE;
  const bool emulated = product && problem.math == FG_MATH_FP32_EMULATED;
  // A forced emulation: what fg_sgemm refuses before looking at the operands (k, the scalars, the reproducibility
  // level) is refused here, before any tile runs; its steps are each one call over all of k, and a step whose operands
  // it declines runs FP32 (run_step).
  const bool forced_emulation = product && algo == FG_SGEMM_OZAKI_INT8;
  if (forced_emulation && ops.workspace) {
    size_t unused = 0;
    FG_RETURN_IF_ERROR(ops.workspace(problem, primary_, algo, &unused));
  }
  if (whole_k && product && problem.k > host_whole_k_limit())
    return Status::failure(StatusCode::not_supported,
                           "k = " + std::to_string(problem.k) + " is deeper than the " +
                               std::to_string(host_whole_k_limit()) +
                               " that the host engine computes in one chunk, as FG_REPRODUCIBLE_SHAPE needs");
  // Earlier work on the handle's stream may still write the operands.
  FG_CUDA_CHECK(cudaStreamSynchronize(primary_.stream()));
  // The profile (FASTGEMM_HOST_PROFILE) sees the setup too: a first call's workers, buffers and pinned memory.
  const std::unique_ptr<HostProfile> profile = HostProfile::from_environment();
  const auto setup_span = [&](HostActivity activity, double begin, int device = -1) {
    if (profile != nullptr) profile->host(-1, device, activity, begin);
  };
  double began = profile != nullptr ? profile->now() : 0;
  FG_RETURN_IF_ERROR(ensure_workers());
  setup_span(HostActivity::setup_workers, began);

  HostJob<T> job;
  job.problem = problem;
  job.product = product;
  job.algo = algo;
  job.ops = &ops;
  if (product) FG_RETURN_IF_ERROR(locate(primary_, problem.a.data, &job.a_place));
  if (product) FG_RETURN_IF_ERROR(locate(primary_, problem.b.data, &job.b_place));
  FG_RETURN_IF_ERROR(locate(primary_, problem.c, &job.c_place));
  FG_RETURN_IF_ERROR(check_pageable_extents(job, column_major));

  // One step of operands in host memory that fit the small buffers: the short way (small_product.hpp).
  const auto in_host = [](const PointerPlace &place) {
    return place.type == cudaMemoryTypeUnregistered || place.type == cudaMemoryTypeHost;
  };
  if (devices_.size() == 1 && devices_[0] == primary_.device().ordinal && workers_per_device_ == 1 &&
      host_staging_limit_from_environment() == 0 && in_host(job.c_place) &&
      (!product || (in_host(job.a_place) && in_host(job.b_place)))) {
    size_t total_memory = 0;
    FG_RETURN_IF_ERROR(device_total_memory(devices_[0], &total_memory));
    const int64_t k = product ? problem.k : 0;
    const HostTiling tiling =
        choose_host_tiling(problem.m, problem.n, k, total_memory, host_tile_limit_from_environment(),
                           whole_k || forced_emulation, emulated, sizeof(T));
    const SmallProductLayout layout =
        small_product_layout(problem.m, problem.n, k, product, small_product_bytes, sizeof(T));
    if (layout.fits && single_step(tiling, problem.m, problem.n, k, product)) {
      if (!small_) {
        try {
          small_ = std::make_unique<SmallProduct>();
        } catch (...) {
          return Status::failure(StatusCode::alloc_failed, "host memory could not be allocated");
        }
      }
      return small_->run(problem, product, layout, primary_, algo, ops, ran);
    }
  }

  size_t smallest_memory = SIZE_MAX;
  for (int ordinal : devices_) {
    size_t total_memory = 0;
    FG_RETURN_IF_ERROR(device_total_memory(ordinal, &total_memory));
    smallest_memory = std::min(smallest_memory, total_memory);
  }
  job.tiling = choose_host_tiling(problem.m, problem.n, product ? problem.k : 0, smallest_memory,
                                  host_tile_limit_from_environment(), whole_k || forced_emulation, emulated, sizeof(T));
  // AUTO's emulation runs on steps over all of k only, each element one emulated call held to the per-element
  // guarantee with the call's k (a sum of chunks is proven to a looser bound only, docs/math-mode.md): where the grid
  // cuts k (k past the emulation's depth, or steps over all of k too small to pay), the steps run FP32, as fg_sgemm
  // does past that depth.
  if (emulated && !forced_emulation && job.tiling.tile_k < problem.k) job.problem.math = FG_MATH_FP32;
  // What a step's product may take of the device beside the reserve (the emulation's workspace for a tile over all
  // of k is up to a few GiB). An estimate: a step the query refuses (its staged operands' addresses are not known
  // yet) reports that itself when it runs.
  size_t reserved = reserved_device_bytes;
  if (product && ops.workspace) {
    const BasicGemmProblem<T> &p = job.problem;
    const HostTiling &t = job.tiling;
    BasicGemmProblem<T> step = step_problem(p, t.tile_m, t.tile_n, p.c, t.tile_n);
    step.k = t.tile_k;
    step.a = staged_operand(p.a.data, a_region(p.a, 0, t.tile_m, 0, t.tile_k), p.a.transposed);
    step.b = staged_operand(p.b.data, b_region(p.b, 0, t.tile_k, 0, t.tile_n), p.b.transposed);
    size_t step_bytes = 0;
    if (ops.workspace(step, primary_, algo, &step_bytes).ok()) reserved += step_bytes;
  }
  // The staging buffers may use a device's free memory and what its workers' buffers hold already, less
  // what the products need, shared evenly by the device's workers.
  size_t smallest_room = SIZE_MAX;
  for (int ordinal : devices_) {
    DeviceGuard guard;
    FG_RETURN_IF_ERROR(guard.enter(ordinal));
    size_t free_bytes = 0, total_bytes = 0;
    FG_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    size_t room = free_bytes;
    for (const auto &worker : workers_)
      if (worker->device() == ordinal) room += worker->held_bytes();
    room = room > reserved ? (room - reserved) / static_cast<size_t>(workers_per_device_) : 0;
    smallest_room = std::min(smallest_room, room);
  }
  const size_t staging_limit = host_staging_limit_from_environment();
  if (staging_limit > 0) smallest_room = std::min(smallest_room, staging_limit);
  job.tiles_m = (problem.m + job.tiling.tile_m - 1) / job.tiling.tile_m;
  job.tiles_n = (problem.n + job.tiling.tile_n - 1) / job.tiling.tile_n;
  job.chunks = product ? (problem.k + job.tiling.tile_k - 1) / job.tiling.tile_k : 0;
  job.workers = static_cast<int>(workers_.size());
  job.single_worker = workers_.size() == 1;
  job.lookahead = std::clamp(2 * std::max<int64_t>(job.chunks, 1) + 1, min_lookahead_steps, max_lookahead_steps);
  job.slots = choose_slot_counts(job, workers_[0]->device(), smallest_room);

  const bool pageable =
      job.c_place.type == cudaMemoryTypeUnregistered ||
      (product && (job.a_place.type == cudaMemoryTypeUnregistered || job.b_place.type == cudaMemoryTypeUnregistered));
  if (pageable) {
    // With several devices the pool grows where the host has the cores.
    const int hardware = static_cast<int>(std::thread::hardware_concurrency());
    const int threads = std::clamp(hardware - 4, 0, max_pool_threads * job.workers);
    if (!pool_ || pool_threads_ != threads) {
      pool_.reset();
      try {
        pool_ = std::make_unique<CopyPool>(threads);
      } catch (...) {
        return Status::failure(StatusCode::alloc_failed, "host memory could not be allocated");
      }
      pool_threads_ = threads;
    }
  }
  job.pool = pool_.get();
  const size_t piece_elements = static_cast<size_t>(job.tiling.tile_k * job.tiling.tile_n);
  if (product && job.workers > 1 && job.b_place.type == cudaMemoryTypeUnregistered &&
      piece_elements <= max_shared_piece_elements) {
    if (!shared_) {
      try {
        shared_ = std::make_unique<SharedPieces<T>>();
      } catch (...) {
        return Status::failure(StatusCode::alloc_failed, "host memory could not be allocated");
      }
    }
    // What each worker holds at most, so that one is always free, and pieces kept for the others.
    const int per_worker = shared_pieces_in_flight + shared_pieces_kept_per_worker;
    const size_t count = static_cast<size_t>(job.workers) * static_cast<size_t>(per_worker);
    began = profile != nullptr ? profile->now() : 0;
    if (shared_->prepare(count, piece_elements)) job.shared = shared_.get();
    setup_span(HostActivity::setup_pinned, began);
  }

  // FASTGEMM_HOST_PEER: with B in host memory, each of its pieces crosses from the host once and passes between the
  // devices over their own links; workers of one device copy it within the device.
  if (product && job.workers > 1 && job.b_place.type != cudaMemoryTypeDevice && host_peer_copies_from_environment() &&
      (devices_.size() == 1 || [&] {
        began = profile != nullptr ? profile->now() : 0;
        bool reach = devices_reach_each_other();
        for (const auto &worker : workers_) {
          if (!reach) break;
          DeviceGuard guard;
          reach = guard.enter(worker->device()).ok() && worker->share_buffers_with(devices_).ok();
          if (!reach) (void)cudaGetLastError();  // refused: the call goes on without peer copies, not sticky
        }
        setup_span(HostActivity::setup_peers, began);
        return reach;
      }())) {
    if (!peers_) {
      try {
        peers_ = std::make_unique<PeerPieces<T>>();
      } catch (...) {
        return Status::failure(StatusCode::alloc_failed, "host memory could not be allocated");
      }
    }
    peers_->reset();
    job.peers = peers_.get();
  }

  // Every buffer is allocated before any tile starts, so that a failure leaves C untouched.
  for (const auto &worker : workers_) {
    DeviceGuard guard;
    FG_RETURN_IF_ERROR(guard.enter(worker->device()));
    began = profile != nullptr ? profile->now() : 0;
    FG_RETURN_IF_ERROR(worker->prepare(job));
    setup_span(HostActivity::setup_buffers, began, worker->device());
  }

  job.profile = profile.get();
  std::vector<Status> results(workers_.size());
  std::vector<fg_sgemm_algo_t> ran_by(workers_.size(), FG_SGEMM_AUTO);
  const auto run_worker = [&](size_t index) {
    DeviceGuard guard;
    results[index] = guard.enter(workers_[index]->device());
    if (results[index].ok()) results[index] = workers_[index]->work(job, static_cast<int>(index), &ran_by[index]);
    if (!results[index].ok()) job.failed.store(true);
  };
  std::vector<std::thread> threads;
  for (size_t index = 1; index < workers_.size(); ++index) {
    try {
      threads.emplace_back(run_worker, index);
    } catch (...) {
      // A chunk-major call gives each worker its own tiles: without a thread for one, the call fails.
      job.failed.store(true);
      results[index] = Status::failure(StatusCode::alloc_failed, "no host thread could be started");
      break;
    }
  }
  run_worker(0);
  for (auto &thread : threads) thread.join();
  if (profile != nullptr) profile->write(profile_header(job, devices_));
  FG_RETURN_IF_ERROR(first_failure(results));
  for (const fg_sgemm_algo_t algo_ran : ran_by)
    if (algo_ran != FG_SGEMM_AUTO) *ran = algo_ran;
  return Status::success();
}

template class HostGemm<float>;
template class HostGemm<double>;

}  // namespace fastgemm::detail
