// SPDX-License-Identifier: Apache-2.0
// A worker: one device's share of an fg_sgemm_host call, its streams, device slots and pinned rings kept across calls,
// and the hand-offs between its three threads (product, upload, download). See host_gemm.cpp's map.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/context.hpp"
#include "host/peer_pieces.hpp"
#include "host/plan.hpp"
#include "host/profile.hpp"
#include "host/shared_pieces.hpp"
#include "host/staging.hpp"

namespace fastgemm::detail {

// Pageable memory moves through rings of pinned chunks: small enough that packing one overlaps the copy
// of the previous, large enough to hold the longest line (max_tile_k elements). The upload ring is deeper:
// packing runs ahead of the copies while a slot waits for the products that read it. Counted in elements, so
// that the grid's limits hold for either element (a chunk is 16 MiB of floats, 32 MiB of doubles).
constexpr size_t ring_chunk_elements = size_t(4) << 20;
constexpr int upload_ring_chunks = 6;
// Events recorded after a worker's copies of other workers' pieces (FASTGEMM_HOST_PEER), taken in turn: a piece's owner
// waits for the copies made from it before it reuses the slot, and an event recorded again that many copies later
// would only make it wait longer.
constexpr int peer_copy_events = 16;
constexpr int download_ring_chunks = 4;
// A device buffer for one k chunk of an A or B panel, or one C tile, and the events that order its reuse.
template <typename T>
struct DeviceSlot {
  T *data = nullptr;
  size_t elements = 0;
  int64_t key = -1;                                    // which piece it holds during this call; -1: none
  int64_t last_step = -1;                              // the last planned step that reads it
  int64_t request = -1;                                // the upload that fills it
  cudaEvent_t ready = nullptr;                         // its upload is done; for a C tile, then its products
  cudaEvent_t released = nullptr;                      // the last work that read or wrote it is done
  typename PeerPieces<T>::Entry *published = nullptr;  // the piece it holds for other workers to copy, if any
};

template <typename T>
struct RingChunk {
  T *data = nullptr;
  cudaEvent_t done = nullptr;  // the last copy from or to it is done
};

template <typename T>
struct UploadRequest {
  Region<T> region;
  Residence where;
  DeviceSlot<T> *slot;
  int64_t after_step;      // >= 0: the slot is free once this step's products are done
  int64_t after_download;  // >= 0: the slot is free once this download is done
  int64_t shared_key;      // >= 0: a piece of B, packed through the call's shared pieces when it can be
};

template <typename T>
struct DownloadRequest {
  int64_t tile;
  DeviceSlot<T> *slot;
};

// The hand-offs between a worker's three threads during one call. An event is waited for only once the
// thread that records it has said so here, so that every wait sees the record it needs.
template <typename T>
struct Progress {
  std::mutex mutex;
  std::condition_variable changed;
  int64_t steps_enqueued = 0;      // steps whose products, and the release of their pieces, are enqueued
  int64_t uploads_recorded = 0;    // upload requests whose slot's ready event is recorded
  int64_t downloads_released = 0;  // download requests whose slot's released event is recorded
  std::deque<UploadRequest<T>> uploads;
  std::deque<DownloadRequest<T>> downloads;
  bool closed = false;  // no request will be added

  template <typename Predicate>
  bool wait(const std::atomic<bool> &failed, Predicate ready) {
    // Another worker's failure is not announced here: it is seen within one timeout.
    std::unique_lock<std::mutex> lock(mutex);
    while (!failed.load() && !ready()) changed.wait_for(lock, std::chrono::milliseconds(20));
    return !failed.load();
  }
  template <typename Change>
  void update(Change change) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      change();
    }
    changed.notify_all();
  }
  // The oldest request of `queue` (uploads or downloads), once there is one: *taken is false when the
  // queue was closed empty. Returns false when another worker failed.
  template <typename Request>
  bool take(const std::atomic<bool> &failed, std::deque<Request> &queue, Request *request, bool *taken) {
    *taken = false;
    if (!wait(failed, [&] { return closed || !queue.empty(); })) return false;
    update([&] {
      if (queue.empty()) return;
      *request = queue.front();
      queue.pop_front();
      *taken = true;
    });
    return true;
  }
};

// One device's share of the work: its streams, buffers and pinned rings, kept across calls.
template <typename T>
class HostWorker {
 public:
  // Made with `device` current. The first worker of the handle's own device computes in the handle's
  // context, on its stream; the others in a context of their own, on a stream of their own.
  static Status create(int device, Context &primary, bool in_primary, std::unique_ptr<HostWorker> *out);
  ~HostWorker();
  HostWorker(const HostWorker &) = delete;
  HostWorker &operator=(const HostWorker &) = delete;

  int device() const { return device_; }
  // Device memory its buffers hold.
  size_t held_bytes() const;
  // Allocates what the job needs on this device; with the device current.
  Status prepare(const HostJob<T> &job);
  // Lets the other devices of `devices` read this worker's buffers (its memory pool's allocations), which peer
  // copies need: without it the driver carries them through host memory. Once per list.
  Status share_buffers_with(const std::vector<int> &devices);
  // Computes its share of the tiles (worker `index` of the job's); with the device current. Returns once
  // its streams are idle.
  Status work(HostJob<T> &job, int index, fg_sgemm_algo_t *ran);

 private:
  struct Step {
    int64_t tile = -1, chunk = 0, tile_index = 0;  // tile_index: how many tiles this worker began before
  };
  struct Planned {
    Step step;
    DeviceSlot<T> *a = nullptr, *b = nullptr, *c = nullptr;
    int64_t uploads_needed = 0;  // uploads_recorded that the step's product waits for
  };

  HostWorker() = default;
  // The call's profile (profile.hpp), where it has one: a host span begun at the time mark_time gave, device work
  // between device_begin and device_end.
  double mark_time(const HostJob<T> &job) const { return job.profile != nullptr ? job.profile->now() : 0; }
  void host_span(const HostJob<T> &job, HostActivity activity, double begin, int64_t amount = 0) const {
    if (job.profile != nullptr) job.profile->host(index_, device_, activity, begin, amount);
  }
  int64_t device_begin(const HostJob<T> &job, HostActivity activity, int64_t amount, cudaStream_t stream) const {
    return job.profile != nullptr ? job.profile->gpu_begin(index_, device_, activity, amount, stream) : -1;
  }
  void device_end(const HostJob<T> &job, int64_t mark, cudaStream_t stream) const {
    if (job.profile != nullptr) job.profile->gpu_end(mark, stream);
  }
  Status ensure_slots(std::vector<DeviceSlot<T>> &slots, size_t count, size_t elements);
  bool next_step(HostJob<T> &job, int index, bool may_help, Step *step);
  void plan(HostJob<T> &job, const Step &step, int64_t step_index, Planned *planned, int64_t *requests);
  DeviceSlot<T> *stage(std::vector<DeviceSlot<T>> &slots, int64_t key, const Region<T> &region, Residence where,
                       bool shareable, int64_t step_index, int64_t *requests, int64_t *needed);
  Status enqueue(HostJob<T> &job, const Planned &planned, int64_t step_index, fg_sgemm_algo_t *ran);
  Status upload_all(HostJob<T> &job);
  Status download_all(HostJob<T> &job);
  Status upload(HostJob<T> &job, const UploadRequest<T> &request);
  Status upload_shared(HostJob<T> &job, const UploadRequest<T> &request, bool *uploaded);
  Status upload_from_peer(HostJob<T> &job, const UploadRequest<T> &request, typename PeerPieces<T>::Entry *entry,
                          bool *copied);
  Status withdraw_published(HostJob<T> &job, DeviceSlot<T> &slot);
  Status upload_request(HostJob<T> &job, const UploadRequest<T> &request);
  Status release_held(HostJob<T> &job, int count);
  Status download(HostJob<T> &job, const DownloadRequest<T> &request);
  Status drain();
  Status wait_until_one_tile_left();

  int device_ = -1;
  int index_ = 0;  // which worker of the current call it is
  Context *context_ = nullptr;
  std::unique_ptr<Context> own_context_;
  cudaStream_t own_stream_ = nullptr;  // own_context_'s stream
  cudaStream_t upload_stream_ = nullptr, download_stream_ = nullptr;
  // The buffers' own memory pool: the program's default pool keeps the access the program gave it.
  cudaMemPool_t pool_ = nullptr;
  std::vector<int> shared_with_;
  std::vector<DeviceSlot<T>> a_slots_, b_slots_, c_slots_;
  RingChunk<T> upload_ring_[upload_ring_chunks], download_ring_[download_ring_chunks];
  int upload_next_ = 0;
  // The shared pieces whose transfer the upload thread has enqueued, oldest first, each with the event that
  // says the transfer is done.
  struct HeldPiece {
    typename SharedPieces<T>::Piece *piece = nullptr;
    cudaEvent_t done = nullptr;
  };
  HeldPiece held_[shared_pieces_in_flight];
  cudaEvent_t peer_copied_[peer_copy_events] = {};
  int peer_next_ = 0;
  int held_first_ = 0, held_count_ = 0;
  // Recorded after the products of the last two tiles this worker enqueued (tile n in tile_done_[n % 2]).
  cudaEvent_t tile_done_[2] = {nullptr, nullptr};
  int64_t tiles_enqueued_ = 0;
  Progress<T> progress_;
  // The steps of a chunk-major call: this worker's tiles, and where the walk over them is.
  std::vector<int64_t> my_tiles_;
  int64_t walk_ = 0;
};

}  // namespace fastgemm::detail
