// SPDX-License-Identifier: Apache-2.0
// A worker's life (creation, buffers, the reset of a call) and its product role: planning the steps, asking the
// upload thread for their pieces, enqueuing the products and handing finished tiles to the download thread.
#include "host/worker.hpp"

#include <algorithm>
#include <mutex>
#include <thread>

#include "core/check.hpp"
#include "core/device.hpp"
#include "host/failure.hpp"

namespace fastgemm::detail {

namespace {

Status create_event(cudaEvent_t *event) {
  FG_CUDA_CHECK(cudaEventCreateWithFlags(event, cudaEventDisableTiming));
  return Status::success();
}

template <typename T>
size_t slot_bytes(const std::vector<DeviceSlot<T>> &slots) {
  size_t bytes = 0;
  for (const DeviceSlot<T> &slot : slots) bytes += slot.elements * sizeof(T);
  return bytes;
}

}  // namespace

template <typename T>
size_t HostWorker<T>::held_bytes() const {
  return slot_bytes(a_slots_) + slot_bytes(b_slots_) + slot_bytes(c_slots_);
}

// Buffers are allocated and freed in the upload stream's order, so that neither a larger problem nor a
// handle's end synchronizes the device. Slots beyond `count` are freed: a call that needed many (all of
// C's tiles) does not keep them from the next.
template <typename T>
Status HostWorker<T>::ensure_slots(std::vector<DeviceSlot<T>> &slots, size_t count, size_t elements) {
  while (slots.size() > count) {
    DeviceSlot<T> &slot = slots.back();
    if (slot.data != nullptr) FG_CUDA_CHECK(cudaFreeAsync(slot.data, upload_stream_));
    (void)cudaEventDestroy(slot.ready);
    (void)cudaEventDestroy(slot.released);
    slots.pop_back();
  }
  slots.reserve(count);
  while (slots.size() < count) {
    DeviceSlot<T> slot;
    FG_RETURN_IF_ERROR(create_event(&slot.ready));
    const Status released = create_event(&slot.released);
    if (!released.ok()) (void)cudaEventDestroy(slot.ready);
    FG_RETURN_IF_ERROR(released);
    slots.push_back(slot);
  }
  for (DeviceSlot<T> &slot : slots) {
    if (slot.elements >= elements) continue;
    if (slot.data != nullptr) FG_CUDA_CHECK(cudaFreeAsync(slot.data, upload_stream_));
    slot.data = nullptr;
    slot.elements = 0;
    FG_CUDA_CHECK(
        cudaMallocFromPoolAsync(reinterpret_cast<void **>(&slot.data), elements * sizeof(T), pool_, upload_stream_));
    slot.elements = elements;
  }
  return Status::success();
}

template <typename T>
Status HostWorker<T>::create(int device, Context &primary, bool in_primary, std::unique_ptr<HostWorker> *out) {
  std::unique_ptr<HostWorker> worker(new HostWorker());
  worker->device_ = device;
  if (in_primary) {
    worker->context_ = &primary;
  } else {
    Context *context = nullptr;
    FG_RETURN_IF_ERROR(Context::create(&context));
    worker->own_context_.reset(context);
    worker->context_ = context;
    FG_CUDA_CHECK(cudaStreamCreateWithFlags(&worker->own_stream_, cudaStreamNonBlocking));
    FG_RETURN_IF_ERROR(context->set_stream(worker->own_stream_));
  }
  FG_CUDA_CHECK(cudaStreamCreateWithFlags(&worker->upload_stream_, cudaStreamNonBlocking));
  FG_CUDA_CHECK(cudaStreamCreateWithFlags(&worker->download_stream_, cudaStreamNonBlocking));
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  FG_CUDA_CHECK(cudaMemPoolCreate(&worker->pool_, &props));
  for (RingChunk<T> &chunk : worker->upload_ring_) FG_RETURN_IF_ERROR(create_event(&chunk.done));
  for (RingChunk<T> &chunk : worker->download_ring_) FG_RETURN_IF_ERROR(create_event(&chunk.done));
  for (HeldPiece &held : worker->held_) FG_RETURN_IF_ERROR(create_event(&held.done));
  for (cudaEvent_t &event : worker->peer_copied_) FG_RETURN_IF_ERROR(create_event(&event));
  // Waited for by a thread that has nothing else to do: it sleeps instead of spinning on a core the copies use.
  for (cudaEvent_t &event : worker->tile_done_)
    FG_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming | cudaEventBlockingSync));
  *out = std::move(worker);
  return Status::success();
}

template <typename T>
HostWorker<T>::~HostWorker() {
  // Nothing is in flight between calls; failures here mean a lost device and have no one to go to.
  const std::lock_guard<std::recursive_mutex> lock(teardown_mutex());
  DeviceGuard guard;
  (void)guard.enter(device_);
  for (std::vector<DeviceSlot<T>> *slots : {&a_slots_, &b_slots_, &c_slots_})
    for (DeviceSlot<T> &slot : *slots) {
      if (slot.data != nullptr) (void)cudaFreeAsync(slot.data, upload_stream_);
      (void)cudaEventDestroy(slot.ready);
      (void)cudaEventDestroy(slot.released);
    }
  for (RingChunk<T> *ring : {upload_ring_, download_ring_})
    for (int i = 0; i < (ring == upload_ring_ ? upload_ring_chunks : download_ring_chunks); ++i) {
      if (ring[i].data != nullptr) (void)cudaFreeHost(ring[i].data);
      if (ring[i].done != nullptr) (void)cudaEventDestroy(ring[i].done);
    }
  for (HeldPiece &held : held_)
    if (held.done != nullptr) (void)cudaEventDestroy(held.done);
  for (cudaEvent_t event : peer_copied_)
    if (event != nullptr) (void)cudaEventDestroy(event);
  for (cudaEvent_t event : tile_done_)
    if (event != nullptr) (void)cudaEventDestroy(event);
  // Frees still in flight complete first: the pool goes once they have.
  if (pool_ != nullptr) (void)cudaMemPoolDestroy(pool_);
  if (upload_stream_ != nullptr) (void)cudaStreamDestroy(upload_stream_);
  if (download_stream_ != nullptr) (void)cudaStreamDestroy(download_stream_);
  own_context_.reset();
  if (own_stream_ != nullptr) (void)cudaStreamDestroy(own_stream_);
}

template <typename T>
Status HostWorker<T>::share_buffers_with(const std::vector<int> &devices) {
  if (shared_with_ == devices) return Status::success();
  std::vector<cudaMemAccessDesc> access;
  for (int other : devices) {
    if (other == device_) continue;
    bool listed = false;
    for (const cudaMemAccessDesc &given : access) listed = listed || given.location.id == other;
    if (listed) continue;
    cudaMemAccessDesc desc = {};
    desc.location.type = cudaMemLocationTypeDevice;
    desc.location.id = other;
    desc.flags = cudaMemAccessFlagsProtReadWrite;
    access.push_back(desc);
  }
  if (!access.empty()) FG_CUDA_CHECK(cudaMemPoolSetAccess(pool_, access.data(), access.size()));
  shared_with_ = devices;
  return Status::success();
}

template <typename T>
Status HostWorker<T>::prepare(const HostJob<T> &job) {
  const HostTiling &t = job.tiling;
  const SlotCounts &counts = job.slots;
  FG_RETURN_IF_ERROR(ensure_slots(a_slots_, counts.a, static_cast<size_t>(t.tile_m * t.tile_k)));
  FG_RETURN_IF_ERROR(ensure_slots(b_slots_, counts.b, static_cast<size_t>(t.tile_k * t.tile_n)));
  FG_RETURN_IF_ERROR(ensure_slots(c_slots_, counts.c, static_cast<size_t>(t.tile_m * t.tile_n)));
  FG_CUDA_CHECK(cudaStreamSynchronize(upload_stream_));  // the allocations, before any stream uses them
  const Residence a = job.a_on(device_), b = job.b_on(device_), c = job.c_on(device_);
  const bool pageable =
      c == Residence::pageable || (job.product && (a == Residence::pageable || b == Residence::pageable));
  if (pageable && upload_ring_[0].data == nullptr) {
    for (RingChunk<T> &chunk : upload_ring_)
      FG_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&chunk.data), ring_chunk_elements * sizeof(T),
                                  cudaHostAllocPortable));
    for (RingChunk<T> &chunk : download_ring_)
      FG_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&chunk.data), ring_chunk_elements * sizeof(T),
                                  cudaHostAllocPortable));
  }
  return Status::success();
}

// The worker's next step, or false when it has none left (tile-major: none in its band, and none in the
// others when it `may_help`). Tile-major: tiles are taken from the job's counters as they come, the worker's
// own band first. Chunk-major: worker `index` of n keeps tiles index, index + n,
// ... for every chunk.
template <typename T>
bool HostWorker<T>::next_step(HostJob<T> &job, int index, bool may_help, Step *step) {
  if (job.slots.order == Order::tile_major) {
    if (step->tile >= 0 && step->chunk + 1 < std::max<int64_t>(job.chunks, 1)) {
      ++step->chunk;
      return true;
    }
    if (job.failed.load()) return false;
    const int bands = job.bands();
    for (int turn = 0; turn < (may_help ? bands : 1); ++turn) {
      const int band = (index + turn) % bands;
      const int64_t tile = job.band_begin(band) + job.band_next[band].fetch_add(1);
      if (tile >= job.band_begin(band + 1)) continue;
      step->tile_index = step->tile >= 0 ? step->tile_index + 1 : 0;
      step->tile = tile;
      step->chunk = 0;
      return true;
    }
    return false;
  }
  if (walk_ == 0) {
    my_tiles_.clear();
    for (int64_t tile = index; tile < job.tiles(); tile += job.workers) my_tiles_.push_back(tile);
  }
  const int64_t count = static_cast<int64_t>(my_tiles_.size());
  if (count == 0 || walk_ >= count * job.chunks) return false;
  step->tile_index = walk_ % count;
  step->tile = my_tiles_[static_cast<size_t>(step->tile_index)];
  step->chunk = walk_ / count;
  ++walk_;
  return true;
}

// The slot that holds piece `key` for step `step_index`: the one holding it already, or the one whose
// pieces were needed longest ago, filled by a new upload request.
template <typename T>
DeviceSlot<T> *HostWorker<T>::stage(std::vector<DeviceSlot<T>> &slots, int64_t key, const Region<T> &region,
                                    Residence where, bool shareable, int64_t step_index, int64_t *requests,
                                    int64_t *needed) {
  DeviceSlot<T> *chosen = nullptr;
  for (DeviceSlot<T> &slot : slots)
    if (slot.key == key) chosen = &slot;
  if (chosen == nullptr) {
    chosen = &slots[0];
    for (DeviceSlot<T> &slot : slots)
      if (slot.last_step < chosen->last_step) chosen = &slot;
    UploadRequest<T> request{region, where, chosen, chosen->last_step, -1, shareable ? key : -1};
    chosen->key = key;
    chosen->request = (*requests)++;
    progress_.update([&] { progress_.uploads.push_back(request); });
  }
  chosen->last_step = step_index;
  *needed = std::max(*needed, chosen->request + 1);
  return chosen;
}

template <typename T>
void HostWorker<T>::plan(HostJob<T> &job, const Step &step, int64_t step_index, Planned *planned, int64_t *requests) {
  const BasicGemmProblem<T> &p = job.problem;
  const HostTiling &t = job.tiling;
  planned->step = step;
  planned->uploads_needed = 0;
  const int64_t tile_row = step.tile / job.tiles_n, tile_col = step.tile % job.tiles_n;
  const int64_t row = tile_row * t.tile_m, col = tile_col * t.tile_n;
  const int64_t rows = std::min(t.tile_m, p.m - row), cols = std::min(t.tile_n, p.n - col);
  const Residence c_where = job.c_on(device_);
  if (c_where != Residence::in_place) {
    DeviceSlot<T> &slot = c_slots_[static_cast<size_t>(step.tile_index) % c_slots_.size()];
    planned->c = &slot;
    // The tile's C is fetched before its first product when beta needs it, once the slot's previous tile
    // is downloaded.
    if (step.chunk == 0 && p.beta != T(0)) {
      const int64_t previous = step.tile_index - static_cast<int64_t>(c_slots_.size());
      UploadRequest<T> request{Region<T>{p.c + row * p.ldc + col, p.ldc, rows, cols}, c_where, &slot, -1, previous, -1};
      slot.request = (*requests)++;
      planned->uploads_needed = slot.request + 1;
      progress_.update([&] { progress_.uploads.push_back(request); });
    }
  }
  if (!job.product) return;
  const int64_t k0 = step.chunk * t.tile_k, depth = std::min(t.tile_k, p.k - k0);
  const Residence a_where = job.a_on(device_), b_where = job.b_on(device_);
  if (a_where != Residence::in_place)
    planned->a = stage(a_slots_, tile_row * job.chunks + step.chunk, a_region(p.a, row, rows, k0, depth), a_where,
                       false, step_index, requests, &planned->uploads_needed);
  if (b_where != Residence::in_place)
    planned->b = stage(b_slots_, tile_col * job.chunks + step.chunk, b_region(p.b, k0, depth, col, cols), b_where, true,
                       step_index, requests, &planned->uploads_needed);
}

template <typename T>
Status HostWorker<T>::enqueue(HostJob<T> &job, const Planned &planned, int64_t step_index, fg_sgemm_algo_t *ran) {
  const BasicGemmProblem<T> &p = job.problem;
  const HostTiling &t = job.tiling;
  const Step &step = planned.step;
  const int64_t row = step.tile / job.tiles_n * t.tile_m, col = step.tile % job.tiles_n * t.tile_n;
  const int64_t rows = std::min(t.tile_m, p.m - row), cols = std::min(t.tile_n, p.n - col);
  const cudaStream_t compute = context_->stream();
  const int64_t last_chunk = std::max<int64_t>(job.chunks, 1) - 1;
  const double waited = mark_time(job);
  if (!progress_.wait(job.failed, [&] { return progress_.uploads_recorded >= planned.uploads_needed; }))
    return aborted_by_other_failure();
  host_span(job, HostActivity::wait_uploads, waited);

  BasicGemmProblem<T> part = planned.c == nullptr ? step_problem(p, rows, cols, p.c + row * p.ldc + col, p.ldc)
                                                  : step_problem(p, rows, cols, planned.c->data, cols);
  if (planned.c != nullptr) {
    if (step.chunk == 0) {
      if (p.beta != T(0)) {
        FG_CUDA_CHECK(cudaStreamWaitEvent(compute, planned.c->ready, 0));
      } else {
        // The slot's previous tile must be downloaded before it is overwritten.
        const int64_t previous = step.tile_index - static_cast<int64_t>(c_slots_.size());
        const double slot_waited = mark_time(job);
        if (!progress_.wait(job.failed, [&] { return progress_.downloads_released > previous; }))
          return aborted_by_other_failure();
        host_span(job, HostActivity::wait_c_slot, slot_waited);
        FG_CUDA_CHECK(cudaStreamWaitEvent(compute, planned.c->released, 0));
      }
    }
  }

  if (!job.product) {
    FG_RETURN_IF_ERROR(job.ops->scale(part, compute));
  } else {
    const int64_t k0 = step.chunk * t.tile_k, depth = std::min(t.tile_k, p.k - k0);
    const Region<T> a = a_region(p.a, row, rows, k0, depth), b = b_region(p.b, k0, depth, col, cols);
    if (planned.a != nullptr) FG_CUDA_CHECK(cudaStreamWaitEvent(compute, planned.a->ready, 0));
    if (planned.b != nullptr) FG_CUDA_CHECK(cudaStreamWaitEvent(compute, planned.b->ready, 0));
    part.k = depth;
    part.a = planned.a != nullptr ? staged_operand(planned.a->data, a, p.a.transposed)
                                  : BasicGemmOperand<T>{a.data, a.ld, 0, p.a.transposed};
    part.b = planned.b != nullptr ? staged_operand(planned.b->data, b, p.b.transposed)
                                  : BasicGemmOperand<T>{b.data, b.ld, 0, p.b.transposed};
    // The chunks of k are summed in order into C, which holds beta * C after the first.
    part.beta = step.chunk == 0 ? p.beta : T(1);
    const int64_t mark = device_begin(job, HostActivity::product, 2 * rows * cols * depth, compute);
    FG_RETURN_IF_ERROR(run_step(*job.ops, part, *context_, job.algo, ran));
    device_end(job, mark, compute);
    if (planned.a != nullptr) FG_CUDA_CHECK(cudaEventRecord(planned.a->released, compute));
    if (planned.b != nullptr) FG_CUDA_CHECK(cudaEventRecord(planned.b->released, compute));
  }
  const bool tile_done = step.chunk == last_chunk;
  if (tile_done && planned.c != nullptr) FG_CUDA_CHECK(cudaEventRecord(planned.c->ready, compute));
  if (tile_done) FG_CUDA_CHECK(cudaEventRecord(tile_done_[tiles_enqueued_++ % 2], compute));
  progress_.update([&] {
    progress_.steps_enqueued = step_index + 1;
    if (tile_done && planned.c != nullptr) progress_.downloads.push_back(DownloadRequest<T>{step.tile, planned.c});
  });
  return Status::success();
}

template <typename T>
Status HostWorker<T>::drain() {
  const Status compute = cuda_status(cudaStreamSynchronize(context_->stream()), "cudaStreamSynchronize");
  const Status up = cuda_status(cudaStreamSynchronize(upload_stream_), "cudaStreamSynchronize");
  const Status down = cuda_status(cudaStreamSynchronize(download_stream_), "cudaStreamSynchronize");
  return !compute.ok() ? compute : (!up.ok() ? up : down);
}

// Returns once the device has computed every enqueued tile but the last.
template <typename T>
Status HostWorker<T>::wait_until_one_tile_left() {
  if (tiles_enqueued_ < 2) return Status::success();
  FG_CUDA_CHECK(cudaEventSynchronize(tile_done_[(tiles_enqueued_ - 2) % 2]));
  return Status::success();
}

template <typename T>
Status HostWorker<T>::work(HostJob<T> &job, int index, fg_sgemm_algo_t *ran) {
  for (std::vector<DeviceSlot<T>> *slots : {&a_slots_, &b_slots_, &c_slots_})
    for (DeviceSlot<T> &slot : *slots) {
      slot.key = slot.last_step = slot.request = -1;
      slot.published = nullptr;
    }
  // Earlier calls' transfers were all drained: the rings' chunks and the shared pieces hold nothing pending.
  index_ = index;
  if (job.profile != nullptr) job.profile->gpu_origin(index, context_->stream());
  walk_ = 0;
  held_first_ = held_count_ = 0;
  tiles_enqueued_ = 0;
  {
    std::lock_guard<std::mutex> lock(progress_.mutex);
    progress_.steps_enqueued = progress_.uploads_recorded = progress_.downloads_released = 0;
    progress_.uploads.clear();
    progress_.downloads.clear();
    progress_.closed = false;
  }
  Status upload_result = Status::success(), download_result = Status::success();
  const auto helper = [&](Status (HostWorker::*body)(HostJob<T> &), Status *result) {
    DeviceGuard guard;
    *result = guard.enter(device_);
    if (result->ok()) *result = (this->*body)(job);
    if (!result->ok()) {
      job.failed.store(true);
      progress_.update([] {});
    }
  };
  std::thread uploader, downloader;
  Status status = Status::success();
  try {
    uploader = std::thread(helper, &HostWorker::upload_all, &upload_result);
    downloader = std::thread(helper, &HostWorker::download_all, &download_result);
  } catch (...) {
    status = Status::failure(StatusCode::alloc_failed, "no host thread could be started");
    job.failed.store(true);
  }

  std::deque<Planned> planned;
  int64_t requests = 0, planned_steps = 0;
  Step cursor;
  const bool helps = job.bands() > 1 && job.slots.order == Order::tile_major;
  bool more = true;
  for (int64_t step_index = 0; status.ok() && !job.failed.load(); ++step_index) {
    while (more && planned_steps <= step_index + job.lookahead) {
      if (!next_step(job, index, false, &cursor)) {
        // Its own steps are all planned: another band's tile once they are enqueued and all but one computed.
        if (!helps) more = false;
        if (!more || !planned.empty()) break;
        const double waited = mark_time(job);
        status = wait_until_one_tile_left();
        host_span(job, HostActivity::wait_one_tile, waited);
        more = status.ok() && next_step(job, index, true, &cursor);
        if (!more) break;
      }
      Planned next;
      plan(job, cursor, planned_steps++, &next, &requests);
      planned.push_back(next);
    }
    if (!status.ok() || planned.empty()) break;
    status = enqueue(job, planned.front(), step_index, ran);
    planned.pop_front();
  }
  if (!status.ok()) job.failed.store(true);
  progress_.update([&] { progress_.closed = true; });
  if (uploader.joinable()) uploader.join();
  if (downloader.joinable()) downloader.join();
  const Status drained = drain();
  if (job.profile != nullptr) job.profile->resolve(index);
  // The failure that stopped the others is the one to report.
  return first_failure({status, upload_result, download_result, drained});
}

// The members defined here; worker_transfers.cpp instantiates its own.
template class HostWorker<float>;
template class HostWorker<double>;

}  // namespace fastgemm::detail
