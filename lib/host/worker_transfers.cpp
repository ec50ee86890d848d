// SPDX-License-Identifier: Apache-2.0
// A worker's upload and download roles: the pieces of A and B and the tiles of C that beta reads, packed when
// pageable and copied to the device; the computed tiles copied back and unpacked into C.
#include <algorithm>
#include <deque>

#include "core/check.hpp"
#include "host/copy_pool.hpp"
#include "host/failure.hpp"
#include "host/worker.hpp"

namespace fastgemm::detail {

// Lets go of the `count` oldest held pieces once their transfers are done.
template <typename T>
Status HostWorker<T>::release_held(HostJob<T> &job, int count) {
  for (; count > 0 && held_count_ > 0; --count) {
    HeldPiece &held = held_[held_first_];
    const double waited = mark_time(job);
    const cudaError_t error = cudaEventSynchronize(held.done);
    host_span(job, HostActivity::wait_upload, waited);
    if (error != cudaSuccess) return cuda_status(error, "cudaEventSynchronize");
    job.shared->release(held.piece);
    held.piece = nullptr;
    held_first_ = (held_first_ + 1) % shared_pieces_in_flight;
    --held_count_;
  }
  return Status::success();
}

// A piece of a pageable B through the call's shared pieces: packed here unless another worker has, then one
// transfer. *uploaded is false when every shared piece was in use: the caller packs it through the ring.
template <typename T>
Status HostWorker<T>::upload_shared(HostJob<T> &job, const UploadRequest<T> &request, bool *uploaded) {
  *uploaded = false;
  if (held_count_ == shared_pieces_in_flight) FG_RETURN_IF_ERROR(release_held(job, 1));
  const Region<T> &region = request.region;
  const size_t bytes = static_cast<size_t>(region.lines * region.length) * sizeof(T);
  const double packed = mark_time(job);
  typename SharedPieces<T>::Piece *piece = job.shared->acquire(request.shared_key, region, *job.pool);
  if (piece == nullptr) return Status::success();
  host_span(job, HostActivity::pack_shared, packed, static_cast<int64_t>(bytes));
  HeldPiece &held = held_[(held_first_ + held_count_) % shared_pieces_in_flight];
  const int64_t mark = device_begin(job, HostActivity::upload, static_cast<int64_t>(bytes), upload_stream_);
  const cudaError_t copied =
      cudaMemcpyAsync(request.slot->data, piece->data, bytes, cudaMemcpyHostToDevice, upload_stream_);
  device_end(job, mark, upload_stream_);
  const cudaError_t recorded = copied == cudaSuccess ? cudaEventRecord(held.done, upload_stream_) : copied;
  if (recorded != cudaSuccess) {
    // A transfer that was enqueued may still read the piece: it is let go once the stream is idle.
    (void)cudaStreamSynchronize(upload_stream_);
    job.shared->release(piece);
    return cuda_status(recorded, copied != cudaSuccess ? "cudaMemcpyAsync" : "cudaEventRecord");
  }
  held.piece = piece;
  ++held_count_;
  *uploaded = true;
  return Status::success();
}

template <typename T>
Status HostWorker<T>::upload(HostJob<T> &job, const UploadRequest<T> &request) {
  const Region<T> &region = request.region;
  T *dst = request.slot->data;
  if (request.where == Residence::direct) {
    const int64_t mark = device_begin(job, HostActivity::upload,
                                      region.lines * region.length * static_cast<int64_t>(sizeof(T)), upload_stream_);
    FG_RETURN_IF_ERROR(
        copy_2d_async(dst, region.length, region.data, region.ld, region.lines, region.length, upload_stream_));
    device_end(job, mark, upload_stream_);
    return Status::success();
  }
  if (request.shared_key >= 0 && job.shared != nullptr) {
    bool uploaded = false;
    FG_RETURN_IF_ERROR(upload_shared(job, request, &uploaded));
    if (uploaded) return Status::success();
  }
  const int64_t lines_per_chunk = static_cast<int64_t>(ring_chunk_elements) / region.length;
  for (int64_t first = 0; first < region.lines; first += lines_per_chunk) {
    if (job.failed.load()) return aborted_by_other_failure();
    const int64_t lines = std::min(lines_per_chunk, region.lines - first);
    RingChunk<T> &chunk = upload_ring_[upload_next_];
    upload_next_ = (upload_next_ + 1) % upload_ring_chunks;
    const int64_t bytes = lines * region.length * static_cast<int64_t>(sizeof(T));
    const double waited = mark_time(job);
    FG_CUDA_CHECK(cudaEventSynchronize(chunk.done));
    host_span(job, HostActivity::wait_upload, waited);
    const double packed = mark_time(job);
    job.pool->copy(chunk.data, region.length, region.data + first * region.ld, region.ld, lines, region.length);
    host_span(job, HostActivity::pack, packed, bytes);
    const int64_t mark = device_begin(job, HostActivity::upload, bytes, upload_stream_);
    FG_CUDA_CHECK(cudaMemcpyAsync(dst + first * region.length, chunk.data, static_cast<size_t>(bytes),
                                  cudaMemcpyHostToDevice, upload_stream_));
    device_end(job, mark, upload_stream_);
    FG_CUDA_CHECK(cudaEventRecord(chunk.done, upload_stream_));
  }
  return Status::success();
}

// A piece of B from another worker's device, once that worker has published it (peer_pieces.hpp). *copied is false
// when the owner withdrew it first: the caller loads the piece itself.
template <typename T>
Status HostWorker<T>::upload_from_peer(HostJob<T> &job, const UploadRequest<T> &request,
                                       typename PeerPieces<T>::Entry *entry, bool *copied) {
  *copied = false;
  int source_device = -1;
  const T *source = nullptr;
  cudaEvent_t ready = nullptr;
  bool aborted = false;
  const double waited = mark_time(job);
  if (!job.peers->read(entry, job.failed, &source_device, &source, &ready, &aborted))
    return aborted ? aborted_by_other_failure() : Status::success();
  host_span(job, HostActivity::wait_peer, waited);
  const Region<T> &region = request.region;
  const size_t bytes = static_cast<size_t>(region.lines * region.length) * sizeof(T);
  DeviceSlot<T> &slot = *request.slot;
  const char *call = "cudaStreamWaitEvent";
  cudaError_t error = cudaStreamWaitEvent(upload_stream_, ready, 0);
  if (error == cudaSuccess) {
    const int64_t mark = device_begin(job, HostActivity::peer_copy, static_cast<int64_t>(bytes), upload_stream_);
    call = "cudaMemcpyPeerAsync";
    error = cudaMemcpyPeerAsync(slot.data, device_, source, source_device, bytes, upload_stream_);
    device_end(job, mark, upload_stream_);
  }
  const cudaEvent_t copied_event = peer_copied_[peer_next_];
  peer_next_ = (peer_next_ + 1) % peer_copy_events;
  if (error == cudaSuccess) {
    call = "cudaEventRecord";
    error = cudaEventRecord(copied_event, upload_stream_);
  }
  if (error == cudaSuccess) error = cudaEventRecord(slot.ready, upload_stream_);
  if (error != cudaSuccess || !job.peers->read_done(entry, copied_event)) {
    // A copy that was enqueued may still read the owner's slot, which the owner reuses once this reader is done:
    // this reader is done once its stream is idle.
    const cudaError_t synchronized = cudaStreamSynchronize(upload_stream_);
    (void)job.peers->read_done(entry, nullptr);
    if (error == cudaSuccess && synchronized != cudaSuccess) {
      error = synchronized;
      call = "cudaStreamSynchronize";
    }
  }
  if (error != cudaSuccess) return cuda_status(error, call);
  *copied = true;
  return Status::success();
}

// The slot is about to receive another piece: no other worker starts a copy of the piece it published any more, and
// the new piece's transfer waits for the copies that did start.
template <typename T>
Status HostWorker<T>::withdraw_published(HostJob<T> &job, DeviceSlot<T> &slot) {
  if (slot.published == nullptr) return Status::success();
  const std::vector<cudaEvent_t> copies = job.peers->withdraw(slot.published);
  slot.published = nullptr;
  for (cudaEvent_t copy : copies) FG_CUDA_CHECK(cudaStreamWaitEvent(upload_stream_, copy, 0));
  return Status::success();
}

// One request's piece into its slot, then the slot's ready event: a piece of B from another worker's device where that
// worker has it or is bringing it there (FASTGEMM_HOST_PEER), else from where the operand lives; a piece of B that
// came from there is then published for the other workers.
template <typename T>
Status HostWorker<T>::upload_request(HostJob<T> &job, const UploadRequest<T> &request) {
  DeviceSlot<T> &slot = *request.slot;
  FG_RETURN_IF_ERROR(withdraw_published(job, slot));
  typename PeerPieces<T>::Entry *owned = nullptr;
  if (job.peers != nullptr && request.shared_key >= 0) {
    bool owner = false;
    typename PeerPieces<T>::Entry *entry = job.peers->claim(request.shared_key, &owner);
    if (owner) {
      owned = entry;
    } else if (entry != nullptr) {
      bool copied = false;
      FG_RETURN_IF_ERROR(upload_from_peer(job, request, entry, &copied));
      if (copied) return Status::success();
    }
  }
  Status status = upload(job, request);
  if (status.ok()) status = cuda_status(cudaEventRecord(slot.ready, upload_stream_), "cudaEventRecord");
  if (owned != nullptr) {
    if (!status.ok()) {
      // The readers waiting for it load the piece themselves; the call fails before this slot is reused.
      (void)job.peers->withdraw(owned);
      return status;
    }
    job.peers->publish(owned, device_, slot.data, slot.ready);
    slot.published = owned;
  }
  return status;
}

// The upload thread: the requests in order, each once the slot's earlier contents are no longer needed.
template <typename T>
Status HostWorker<T>::upload_all(HostJob<T> &job) {
  for (;;) {
    UploadRequest<T> request{};
    bool have = false;
    if (!progress_.take(job.failed, progress_.uploads, &request, &have)) return aborted_by_other_failure();
    if (!have) return job.shared != nullptr ? release_held(job, held_count_) : Status::success();
    if (request.after_step >= 0 || request.after_download >= 0) {
      const double waited = mark_time(job);
      if (!progress_.wait(job.failed, [&] {
            return progress_.steps_enqueued > request.after_step &&
                   progress_.downloads_released > request.after_download;
          }))
        return aborted_by_other_failure();
      host_span(job, HostActivity::wait_slot, waited);
      FG_CUDA_CHECK(cudaStreamWaitEvent(upload_stream_, request.slot->released, 0));
    }
    FG_RETURN_IF_ERROR(upload_request(job, request));
    progress_.update([&] { ++progress_.uploads_recorded; });
  }
}

// Writes a computed tile back to the caller's C: D2H copies into the ring, each unpacked once it is done;
// the slot is released as soon as its last copy is enqueued.
template <typename T>
Status HostWorker<T>::download(HostJob<T> &job, const DownloadRequest<T> &request) {
  const BasicGemmProblem<T> &p = job.problem;
  const HostTiling &t = job.tiling;
  const int64_t row = request.tile / job.tiles_n * t.tile_m, col = request.tile % job.tiles_n * t.tile_n;
  const int64_t rows = std::min(t.tile_m, p.m - row), cols = std::min(t.tile_n, p.n - col);
  T *user_c = p.c + row * p.ldc + col;
  DeviceSlot<T> &slot = *request.slot;
  FG_CUDA_CHECK(cudaStreamWaitEvent(download_stream_, slot.ready, 0));
  if (job.c_on(device_) == Residence::direct) {
    const int64_t mark =
        device_begin(job, HostActivity::download, rows * cols * static_cast<int64_t>(sizeof(T)), download_stream_);
    FG_RETURN_IF_ERROR(copy_2d_async(user_c, p.ldc, slot.data, cols, rows, cols, download_stream_));
    device_end(job, mark, download_stream_);
    FG_CUDA_CHECK(cudaEventRecord(slot.released, download_stream_));
    progress_.update([&] { ++progress_.downloads_released; });
    return Status::success();
  }
  struct Pending {
    RingChunk<T> *chunk;
    int64_t first, lines;
  };
  std::deque<Pending> pending;
  const auto unpack_oldest = [&]() -> Status {
    const Pending oldest = pending.front();
    pending.pop_front();
    const double waited = mark_time(job);
    FG_CUDA_CHECK(cudaEventSynchronize(oldest.chunk->done));
    host_span(job, HostActivity::wait_download, waited);
    const double unpacked = mark_time(job);
    job.pool->copy(user_c + oldest.first * p.ldc, p.ldc, oldest.chunk->data, cols, oldest.lines, cols);
    host_span(job, HostActivity::unpack, unpacked, oldest.lines * cols * static_cast<int64_t>(sizeof(T)));
    return Status::success();
  };
  const int64_t lines_per_chunk = static_cast<int64_t>(ring_chunk_elements) / cols;
  int next = 0;
  for (int64_t first = 0; first < rows; first += lines_per_chunk) {
    // The ring is taken in order, so the oldest pending chunk is the one about to be reused.
    if (pending.size() == download_ring_chunks) FG_RETURN_IF_ERROR(unpack_oldest());
    const int64_t lines = std::min(lines_per_chunk, rows - first);
    RingChunk<T> &chunk = download_ring_[next];
    next = (next + 1) % download_ring_chunks;
    const int64_t mark =
        device_begin(job, HostActivity::download, lines * cols * static_cast<int64_t>(sizeof(T)), download_stream_);
    FG_CUDA_CHECK(cudaMemcpyAsync(chunk.data, slot.data + first * cols, static_cast<size_t>(lines * cols) * sizeof(T),
                                  cudaMemcpyDeviceToHost, download_stream_));
    device_end(job, mark, download_stream_);
    FG_CUDA_CHECK(cudaEventRecord(chunk.done, download_stream_));
    pending.push_back(Pending{&chunk, first, lines});
  }
  FG_CUDA_CHECK(cudaEventRecord(slot.released, download_stream_));
  progress_.update([&] { ++progress_.downloads_released; });
  while (!pending.empty()) FG_RETURN_IF_ERROR(unpack_oldest());
  return Status::success();
}

// The download thread: each computed tile in the order the products finished being enqueued.
template <typename T>
Status HostWorker<T>::download_all(HostJob<T> &job) {
  for (;;) {
    DownloadRequest<T> request{};
    bool have = false;
    if (!progress_.take(job.failed, progress_.downloads, &request, &have)) return aborted_by_other_failure();
    if (!have) return Status::success();
    FG_RETURN_IF_ERROR(download(job, request));
  }
}

#define FASTGEMM_HOST_TRANSFERS(T)                                                              \
  template Status HostWorker<T>::release_held(HostJob<T> &, int);                               \
  template Status HostWorker<T>::upload_shared(HostJob<T> &, const UploadRequest<T> &, bool *); \
  template Status HostWorker<T>::upload(HostJob<T> &, const UploadRequest<T> &);                \
  template Status HostWorker<T>::upload_from_peer(HostJob<T> &, const UploadRequest<T> &,       \
                                                  typename PeerPieces<T>::Entry *, bool *);     \
  template Status HostWorker<T>::withdraw_published(HostJob<T> &, DeviceSlot<T> &);             \
  template Status HostWorker<T>::upload_request(HostJob<T> &, const UploadRequest<T> &);        \
  template Status HostWorker<T>::upload_all(HostJob<T> &);                                      \
  template Status HostWorker<T>::download(HostJob<T> &, const DownloadRequest<T> &);            \
  template Status HostWorker<T>::download_all(HostJob<T> &);
FASTGEMM_HOST_TRANSFERS(float)
FASTGEMM_HOST_TRANSFERS(double)
#undef FASTGEMM_HOST_TRANSFERS

}  // namespace fastgemm::detail
