#include "host/host_gemm.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <thread>

#include "core/check.hpp"
#include "core/device.hpp"

namespace fastgemm::detail {
namespace {

// Tiles from 1024 to 4096 on a side, the largest that still cuts the longer side of C in four: a product
// of 4096 or more on a side has at least 16 tiles, so the first upload and the last download, which
// nothing overlaps, are a small part of the traffic, while each tile's product (0.2 ms for 1024 x 1024 x
// 4096 at 40 TFLOPS, 2.7 ms at 4096 square) still dwarfs the launch and event overheads.
constexpr int64_t largest_tile_edge = 4096;
constexpr int64_t smallest_tile_edge = 1024;
// k is taken whole up to this depth, so that an A panel stays on the device for a whole row of tiles.
constexpr int64_t max_tile_k = 65536;
constexpr int64_t min_tile_k = 256;
// The staging buffers may use at most a quarter of the device's memory, and never more than this.
constexpr size_t max_staging_bytes = size_t(6) << 30;
// Pageable memory moves through a ring of pinned chunks: small enough that packing one overlaps the
// copy of the previous, large enough to hold the longest line (max_tile_k floats).
constexpr size_t ring_chunk_floats = size_t(4) << 20;
constexpr int ring_chunks = 4;
// Below this many bytes one thread packs a chunk: starting helpers would cost more than they save.
constexpr size_t parallel_copy_bytes = size_t(2) << 20;
constexpr int max_copy_threads = 8;

// Where an operand lives, as seen from one worker's device.
enum class Residence {
  in_place,  // device memory of the worker's device: read and written where it is
  direct,    // pinned host, managed, or another device's memory: one asynchronous 2D copy reaches it
  pageable,  // ordinary host memory: packed through the pinned ring by the host
};

struct PointerPlace {
  cudaMemoryType type = cudaMemoryTypeUnregistered;
  int device = -1;
};

Status locate(const void *pointer, PointerPlace *place) {
  cudaPointerAttributes attributes = {};
  const cudaError_t error = cudaPointerGetAttributes(&attributes, pointer);
  if (error == cudaErrorInvalidValue) {  // a pointer the driver has never seen: host memory
    (void)cudaGetLastError();
    *place = PointerPlace{};
    return Status::success();
  }
  FG_RETURN_IF_ERROR(cuda_status(error, "cudaPointerGetAttributes"));
  *place = PointerPlace{attributes.type, attributes.device};
  return Status::success();
}

// With several workers, device memory is staged by its own device too, so that every tile's product reads
// the same dense panels whichever device computes it.
Residence residence_on(const PointerPlace &place, int device, bool single_worker) {
  switch (place.type) {
    case cudaMemoryTypeDevice: return place.device == device && single_worker ? Residence::in_place : Residence::direct;
    case cudaMemoryTypeHost:
    case cudaMemoryTypeManaged: return Residence::direct;
    case cudaMemoryTypeUnregistered: break;
  }
  return Residence::pageable;
}

// `lines` runs of `length` floats, `ld` apart.
struct Region {
  const float *data;
  int64_t ld, lines, length;
};

// Rows [row, row + rows) and k [k0, k0 + depth) of op(A).
Region a_region(const GemmOperand &a, int64_t row, int64_t rows, int64_t k0, int64_t depth) {
  if (a.transposed) return Region{a.data + k0 * a.ld + row, a.ld, depth, rows};
  return Region{a.data + row * a.ld + k0, a.ld, rows, depth};
}

// k [k0, k0 + depth) and columns [col, col + cols) of op(B).
Region b_region(const GemmOperand &b, int64_t k0, int64_t depth, int64_t col, int64_t cols) {
  if (b.transposed) return Region{b.data + col * b.ld + k0, b.ld, cols, depth};
  return Region{b.data + k0 * b.ld + col, b.ld, depth, cols};
}

void copy_lines_serial(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t lines, int64_t length) {
  const size_t bytes = static_cast<size_t>(length) * sizeof(float);
  if (dst_ld == length && src_ld == length) {
    std::memcpy(dst, src, bytes * static_cast<size_t>(lines));
    return;
  }
  for (int64_t line = 0; line < lines; ++line) std::memcpy(dst + line * dst_ld, src + line * src_ld, bytes);
}

// Host-to-host copy of `lines` lines, split over up to `threads` threads when it is large.
void copy_lines(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t lines, int64_t length,
                int threads) {
  const size_t bytes = static_cast<size_t>(lines) * static_cast<size_t>(length) * sizeof(float);
  const int64_t parts = std::min<int64_t>({threads, lines, static_cast<int64_t>(bytes / parallel_copy_bytes)});
  if (parts <= 1) {
    copy_lines_serial(dst, dst_ld, src, src_ld, lines, length);
    return;
  }
  std::vector<std::thread> helpers;
  const int64_t per_part = (lines + parts - 1) / parts;
  int64_t first = per_part;  // the calling thread copies part 0
  try {
    for (; first < lines; first += per_part) {
      const int64_t count = std::min(per_part, lines - first);
      helpers.emplace_back(copy_lines_serial, dst + first * dst_ld, dst_ld, src + first * src_ld, src_ld, count,
                           length);
    }
  } catch (...) {
    // No thread to be had: the calling thread copies what no helper took.
    copy_lines_serial(dst + first * dst_ld, dst_ld, src + first * src_ld, src_ld, lines - first, length);
  }
  copy_lines_serial(dst, dst_ld, src, src_ld, std::min(per_part, lines), length);
  for (auto &helper : helpers) helper.join();
}

// cudaMemcpy2DAsync refuses pitches past INT_MAX bytes: such lines go one copy each.
Status copy_2d_async(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t lines, int64_t length,
                     cudaStream_t stream) {
  const size_t width = static_cast<size_t>(length) * sizeof(float);
  const int64_t widest_pitch = std::max(dst_ld, src_ld) * static_cast<int64_t>(sizeof(float));
  if (widest_pitch <= INT_MAX) {
    FG_CUDA_CHECK(cudaMemcpy2DAsync(dst, static_cast<size_t>(dst_ld) * sizeof(float), src,
                                    static_cast<size_t>(src_ld) * sizeof(float), width, static_cast<size_t>(lines),
                                    cudaMemcpyDefault, stream));
    return Status::success();
  }
  for (int64_t line = 0; line < lines; ++line)
    FG_CUDA_CHECK(cudaMemcpyAsync(dst + line * dst_ld, src + line * src_ld, width, cudaMemcpyDefault, stream));
  return Status::success();
}

// A device buffer for one A or B panel or one C tile, and the events that order its reuse.
struct DeviceSlot {
  float *data = nullptr;
  size_t floats = 0;
  int64_t key = -1;                // which panel it holds during this call; -1: none
  cudaEvent_t ready = nullptr;     // its upload is done; for a C tile, then its products
  cudaEvent_t released = nullptr;  // the last work that read or wrote it is done
};

struct RingChunk {
  float *data = nullptr;
  cudaEvent_t done = nullptr;  // the last copy from or to it is done
};

}  // namespace

// What every worker of one call shares.
struct HostJob {
  GemmProblem problem;
  bool product = true;
  fg_sgemm_algo_t algo = FG_SGEMM_AUTO;
  const HostTileOps *ops = nullptr;
  HostTiling tiling;
  int64_t tiles_m = 0, tiles_n = 0, chunks = 0;
  PointerPlace a_place, b_place, c_place;
  int copy_threads = 1;
  bool single_worker = true;
  std::atomic<int64_t> next_tile{0};
  std::atomic<bool> failed{false};

  int64_t tiles() const { return tiles_m * tiles_n; }
  Residence a_on(int device) const { return residence_on(a_place, device, single_worker); }
  Residence b_on(int device) const { return residence_on(b_place, device, single_worker); }
  Residence c_on(int device) const { return residence_on(c_place, device, single_worker); }
};

// One device's share of the work: its streams, buffers and pinned ring, kept across calls.
class HostWorker {
 public:
  // Made with `device` current.
  static Status create(int device, Context &primary, std::unique_ptr<HostWorker> *out);
  ~HostWorker();
  HostWorker(const HostWorker &) = delete;
  HostWorker &operator=(const HostWorker &) = delete;

  int device() const { return device_; }
  // Allocates what the job needs on this device; with the device current.
  Status prepare(const HostJob &job);
  // Takes tiles until none is left; with the device current. Returns once its streams are idle.
  Status work(HostJob &job, fg_sgemm_algo_t *ran);

 private:
  HostWorker() = default;
  Status compute_tile(HostJob &job, int64_t tile, DeviceSlot &c_slot, fg_sgemm_algo_t *ran);
  Status stage_operand(const Region &region, Residence where, int64_t key, std::vector<DeviceSlot> &slots, bool cached,
                       int64_t *last, HostJob &job, const float **data, int64_t *ld);
  Status ensure_slots(std::vector<DeviceSlot> &slots, size_t count, size_t floats);
  Status upload(const Region &region, Residence where, float *dst, HostJob &job);
  Status download(HostJob &job, int64_t tile, DeviceSlot &c_slot);
  Status drain();
  RingChunk &next_chunk();

  int device_ = -1;
  Context *context_ = nullptr;
  std::unique_ptr<Context> own_context_;
  cudaStream_t upload_stream_ = nullptr, download_stream_ = nullptr;
  // Two slots each for A panels and C tiles; for B panels two, or one per panel of the product when they
  // all fit in the device's free memory (b_cached_), so that B crosses the bus once, not once per row of
  // tiles.
  std::vector<DeviceSlot> a_slots_, b_slots_, c_slots_;
  bool b_cached_ = false;
  RingChunk ring_[ring_chunks];
  int ring_next_ = 0;
  int64_t last_a_ = 0, last_b_ = 0;
};

namespace {

Status create_event(cudaEvent_t *event) {
  FG_CUDA_CHECK(cudaEventCreateWithFlags(event, cudaEventDisableTiming));
  return Status::success();
}

}  // namespace

// Buffers are allocated and freed in the upload stream's order, so that neither a larger problem nor a
// handle's end synchronizes the device.
Status HostWorker::ensure_slots(std::vector<DeviceSlot> &slots, size_t count, size_t floats) {
  while (slots.size() < count) {
    DeviceSlot slot;
    FG_RETURN_IF_ERROR(create_event(&slot.ready));
    const Status released = create_event(&slot.released);
    if (!released.ok()) (void)cudaEventDestroy(slot.ready);
    FG_RETURN_IF_ERROR(released);
    slots.push_back(slot);
  }
  for (size_t i = 0; i < count; ++i) {
    DeviceSlot &slot = slots[i];
    if (slot.floats >= floats) continue;
    if (slot.data != nullptr) FG_CUDA_CHECK(cudaFreeAsync(slot.data, upload_stream_));
    slot.data = nullptr;
    slot.floats = 0;
    FG_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void **>(&slot.data), floats * sizeof(float), upload_stream_));
    slot.floats = floats;
  }
  return Status::success();
}

Status HostWorker::create(int device, Context &primary, std::unique_ptr<HostWorker> *out) {
  std::unique_ptr<HostWorker> worker(new HostWorker());
  worker->device_ = device;
  if (device == primary.device().ordinal) {
    worker->context_ = &primary;
  } else {
    Context *context = nullptr;
    FG_RETURN_IF_ERROR(Context::create(&context));
    worker->own_context_.reset(context);
    worker->context_ = context;
  }
  FG_CUDA_CHECK(cudaStreamCreateWithFlags(&worker->upload_stream_, cudaStreamNonBlocking));
  FG_CUDA_CHECK(cudaStreamCreateWithFlags(&worker->download_stream_, cudaStreamNonBlocking));
  for (RingChunk &chunk : worker->ring_) FG_RETURN_IF_ERROR(create_event(&chunk.done));
  *out = std::move(worker);
  return Status::success();
}

HostWorker::~HostWorker() {
  // Nothing is in flight between calls; failures here mean a lost device and have no one to go to.
  DeviceGuard guard;
  (void)guard.enter(device_);
  for (std::vector<DeviceSlot> *slots : {&a_slots_, &b_slots_, &c_slots_})
    for (DeviceSlot &slot : *slots) {
      if (slot.data != nullptr) (void)cudaFreeAsync(slot.data, upload_stream_);
      (void)cudaEventDestroy(slot.ready);
      (void)cudaEventDestroy(slot.released);
    }
  for (RingChunk &chunk : ring_) {
    if (chunk.data != nullptr) (void)cudaFreeHost(chunk.data);
    if (chunk.done != nullptr) (void)cudaEventDestroy(chunk.done);
  }
  if (upload_stream_ != nullptr) (void)cudaStreamDestroy(upload_stream_);
  if (download_stream_ != nullptr) (void)cudaStreamDestroy(download_stream_);
  own_context_.reset();
}

Status HostWorker::prepare(const HostJob &job) {
  const HostTiling &t = job.tiling;
  const Residence a = job.a_on(device_), b = job.b_on(device_), c = job.c_on(device_);
  if (job.product && a != Residence::in_place) FG_RETURN_IF_ERROR(ensure_slots(a_slots_, 2, t.tile_m * t.tile_k));
  if (c != Residence::in_place) FG_RETURN_IF_ERROR(ensure_slots(c_slots_, 2, t.tile_m * t.tile_n));
  b_cached_ = false;
  if (job.product && b != Residence::in_place) {
    const size_t panels = static_cast<size_t>(job.tiles_n * job.chunks), panel_floats = t.tile_k * t.tile_n;
    const size_t held = b_slots_.size() >= panels ? 0 : (panels - b_slots_.size()) * panel_floats * sizeof(float);
    size_t free_bytes = 0, total_bytes = 0;
    FG_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    b_cached_ = job.tiles_m > 1 && panels > 2 && held <= free_bytes / 2;
    FG_RETURN_IF_ERROR(ensure_slots(b_slots_, b_cached_ ? panels : 2, panel_floats));
  }
  FG_CUDA_CHECK(cudaStreamSynchronize(upload_stream_));  // the allocations, before any stream uses them
  const bool pageable =
      c == Residence::pageable || (job.product && (a == Residence::pageable || b == Residence::pageable));
  if (pageable && ring_[0].data == nullptr)
    for (RingChunk &chunk : ring_)
      FG_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&chunk.data), ring_chunk_floats * sizeof(float),
                                  cudaHostAllocPortable));
  return Status::success();
}

RingChunk &HostWorker::next_chunk() {
  RingChunk &chunk = ring_[ring_next_];
  ring_next_ = (ring_next_ + 1) % ring_chunks;
  return chunk;
}

Status HostWorker::upload(const Region &region, Residence where, float *dst, HostJob &job) {
  if (where == Residence::direct)
    return copy_2d_async(dst, region.length, region.data, region.ld, region.lines, region.length, upload_stream_);
  const int64_t lines_per_chunk = static_cast<int64_t>(ring_chunk_floats) / region.length;
  for (int64_t first = 0; first < region.lines; first += lines_per_chunk) {
    const int64_t lines = std::min(lines_per_chunk, region.lines - first);
    RingChunk &chunk = next_chunk();
    FG_CUDA_CHECK(cudaEventSynchronize(chunk.done));
    copy_lines(chunk.data, region.length, region.data + first * region.ld, region.ld, lines, region.length,
               job.copy_threads);
    FG_CUDA_CHECK(cudaMemcpyAsync(dst + first * region.length, chunk.data,
                                  static_cast<size_t>(lines * region.length) * sizeof(float), cudaMemcpyHostToDevice,
                                  upload_stream_));
    FG_CUDA_CHECK(cudaEventRecord(chunk.done, upload_stream_));
  }
  return Status::success();
}

// Puts the operand's panel where the product can read it: in place, or in the slot that already holds it,
// or uploaded into the slot the previous step did not use (after the products that read it are done).
Status HostWorker::stage_operand(const Region &region, Residence where, int64_t key, std::vector<DeviceSlot> &slots,
                                 bool cached, int64_t *last, HostJob &job, const float **data, int64_t *ld) {
  if (where == Residence::in_place) {
    *data = region.data;
    *ld = region.ld;
    return Status::success();
  }
  int64_t index = cached ? key : (slots[0].key == key ? 0 : (slots[1].key == key ? 1 : -1));
  if (index < 0 || slots[index].key != key) {
    if (index < 0) index = 1 - *last;
    DeviceSlot &slot = slots[index];
    slot.key = -1;
    FG_CUDA_CHECK(cudaStreamWaitEvent(upload_stream_, slot.released, 0));
    FG_RETURN_IF_ERROR(upload(region, where, slot.data, job));
    FG_CUDA_CHECK(cudaEventRecord(slot.ready, upload_stream_));
    slot.key = key;
  }
  *last = index;
  FG_CUDA_CHECK(cudaStreamWaitEvent(context_->stream(), slots[index].ready, 0));
  *data = slots[index].data;
  *ld = region.length;
  return Status::success();
}

Status HostWorker::compute_tile(HostJob &job, int64_t tile, DeviceSlot &c_slot, fg_sgemm_algo_t *ran) {
  const GemmProblem &p = job.problem;
  const HostTiling &t = job.tiling;
  const int64_t tile_row = tile / job.tiles_n, tile_col = tile % job.tiles_n;
  const int64_t row = tile_row * t.tile_m, col = tile_col * t.tile_n;
  const int64_t rows = std::min(t.tile_m, p.m - row), cols = std::min(t.tile_n, p.n - col);
  const cudaStream_t compute = context_->stream();

  GemmProblem part;
  part.m = rows;
  part.n = cols;
  part.alpha = p.alpha;
  part.beta = p.beta;
  part.math = p.math;
  const Residence c_where = job.c_on(device_);
  float *user_c = p.c + row * p.ldc + col;
  if (c_where == Residence::in_place) {
    part.c = user_c;
    part.ldc = p.ldc;
  } else {
    part.c = c_slot.data;
    part.ldc = cols;
    // The slot's previous tile must be downloaded before it is overwritten.
    FG_CUDA_CHECK(cudaStreamWaitEvent(compute, c_slot.released, 0));
    if (p.beta != 0.0f) {
      FG_CUDA_CHECK(cudaStreamWaitEvent(upload_stream_, c_slot.released, 0));
      FG_RETURN_IF_ERROR(upload(Region{user_c, p.ldc, rows, cols}, c_where, c_slot.data, job));
      FG_CUDA_CHECK(cudaEventRecord(c_slot.ready, upload_stream_));
      FG_CUDA_CHECK(cudaStreamWaitEvent(compute, c_slot.ready, 0));
    }
  }

  if (!job.product) {
    FG_RETURN_IF_ERROR(job.ops->scale(part, compute));
  } else {
    const Residence a_where = job.a_on(device_), b_where = job.b_on(device_);
    for (int64_t chunk = 0; chunk < job.chunks; ++chunk) {
      const int64_t k0 = chunk * t.tile_k, depth = std::min(t.tile_k, p.k - k0);
      const float *a_data = nullptr, *b_data = nullptr;
      int64_t a_ld = 0, b_ld = 0;
      FG_RETURN_IF_ERROR(stage_operand(a_region(p.a, row, rows, k0, depth), a_where, tile_row * job.chunks + chunk,
                                       a_slots_, false, &last_a_, job, &a_data, &a_ld));
      FG_RETURN_IF_ERROR(stage_operand(b_region(p.b, k0, depth, col, cols), b_where, tile_col * job.chunks + chunk,
                                       b_slots_, b_cached_, &last_b_, job, &b_data, &b_ld));
      part.k = depth;
      part.a = GemmOperand{a_data, a_ld, 0, p.a.transposed};
      part.b = GemmOperand{b_data, b_ld, 0, p.b.transposed};
      // The chunks of k are summed in order into C, which holds beta * C after the first.
      part.beta = chunk == 0 ? p.beta : 1.0f;
      FG_RETURN_IF_ERROR(job.ops->product(part, *context_, job.algo, ran));
      if (a_where != Residence::in_place) FG_CUDA_CHECK(cudaEventRecord(a_slots_[last_a_].released, compute));
      if (b_where != Residence::in_place) FG_CUDA_CHECK(cudaEventRecord(b_slots_[last_b_].released, compute));
    }
  }
  // The stage-in's wait has been enqueued, so the event can now mark the tile's products as done.
  if (c_where != Residence::in_place) FG_CUDA_CHECK(cudaEventRecord(c_slot.ready, compute));
  return Status::success();
}

// Writes a computed tile back to the caller's C (nothing to do for C in place).
Status HostWorker::download(HostJob &job, int64_t tile, DeviceSlot &c_slot) {
  const GemmProblem &p = job.problem;
  const HostTiling &t = job.tiling;
  const Residence c_where = job.c_on(device_);
  if (c_where == Residence::in_place) return Status::success();
  const int64_t row = tile / job.tiles_n * t.tile_m, col = tile % job.tiles_n * t.tile_n;
  const int64_t rows = std::min(t.tile_m, p.m - row), cols = std::min(t.tile_n, p.n - col);
  float *user_c = p.c + row * p.ldc + col;
  FG_CUDA_CHECK(cudaStreamWaitEvent(download_stream_, c_slot.ready, 0));
  if (c_where == Residence::direct) {
    FG_RETURN_IF_ERROR(copy_2d_async(user_c, p.ldc, c_slot.data, cols, rows, cols, download_stream_));
    FG_CUDA_CHECK(cudaEventRecord(c_slot.released, download_stream_));
    return Status::success();
  }
  struct Pending {
    RingChunk *chunk;
    int64_t first, lines;
  };
  std::deque<Pending> pending;
  const auto unpack_oldest = [&]() -> Status {
    const Pending oldest = pending.front();
    pending.pop_front();
    FG_CUDA_CHECK(cudaEventSynchronize(oldest.chunk->done));
    copy_lines(user_c + oldest.first * p.ldc, p.ldc, oldest.chunk->data, cols, oldest.lines, cols, job.copy_threads);
    return Status::success();
  };
  const int64_t lines_per_chunk = static_cast<int64_t>(ring_chunk_floats) / cols;
  for (int64_t first = 0; first < rows; first += lines_per_chunk) {
    // The ring is taken in order, so the oldest pending chunk is the one about to be reused.
    if (pending.size() == ring_chunks) FG_RETURN_IF_ERROR(unpack_oldest());
    const int64_t lines = std::min(lines_per_chunk, rows - first);
    RingChunk &chunk = next_chunk();
    FG_CUDA_CHECK(cudaEventSynchronize(chunk.done));
    FG_CUDA_CHECK(cudaMemcpyAsync(chunk.data, c_slot.data + first * cols,
                                  static_cast<size_t>(lines * cols) * sizeof(float), cudaMemcpyDeviceToHost,
                                  download_stream_));
    FG_CUDA_CHECK(cudaEventRecord(chunk.done, download_stream_));
    pending.push_back(Pending{&chunk, first, lines});
  }
  FG_CUDA_CHECK(cudaEventRecord(c_slot.released, download_stream_));
  while (!pending.empty()) FG_RETURN_IF_ERROR(unpack_oldest());
  return Status::success();
}

Status HostWorker::drain() {
  const Status compute = cuda_status(cudaStreamSynchronize(context_->stream()), "cudaStreamSynchronize");
  const Status up = cuda_status(cudaStreamSynchronize(upload_stream_), "cudaStreamSynchronize");
  const Status down = cuda_status(cudaStreamSynchronize(download_stream_), "cudaStreamSynchronize");
  return !compute.ok() ? compute : (!up.ok() ? up : down);
}

Status HostWorker::work(HostJob &job, fg_sgemm_algo_t *ran) {
  for (std::vector<DeviceSlot> *slots : {&a_slots_, &b_slots_, &c_slots_})
    for (DeviceSlot &slot : *slots) slot.key = -1;
  // The slot each operand used last belongs to the last call, whose B panels may each have had one of many
  // slots: a call that takes turns in two slots starts from the first.
  last_a_ = last_b_ = 0;
  // A tile is downloaded once the next one's products are enqueued, so that the host packs and unpacks
  // while the device computes.
  int64_t pending_tile = -1;
  int tiles_done = 0;
  Status status = Status::success();
  while (!job.failed.load()) {
    const int64_t tile = job.next_tile.fetch_add(1);
    if (tile >= job.tiles()) break;
    DeviceSlot &c_slot = c_slots_[tiles_done % 2];
    status = compute_tile(job, tile, c_slot, ran);
    if (status.ok() && pending_tile >= 0) status = download(job, pending_tile, c_slots_[(tiles_done - 1) % 2]);
    if (!status.ok()) break;
    pending_tile = tile;
    ++tiles_done;
  }
  if (status.ok() && pending_tile >= 0) status = download(job, pending_tile, c_slots_[(tiles_done - 1) % 2]);
  if (!status.ok()) job.failed.store(true);
  const Status drained = drain();
  return status.ok() ? drained : status;
}

int64_t host_tile_limit_from_environment() {
  const char *text = std::getenv("FASTGEMM_HOST_TILE");
  if (text == nullptr || *text == '\0') return 0;
  char *end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  return *end == '\0' && value > 0 ? static_cast<int64_t>(value) : 0;
}

HostTiling choose_host_tiling(int64_t m, int64_t n, int64_t k, size_t device_bytes, int64_t tile_limit) {
  // Any edge, the knob's included, stays within max_tile_k, so that one line fits in a ring chunk.
  const int64_t limit = std::min(tile_limit, max_tile_k);
  int64_t edge = largest_tile_edge;
  while (edge > smallest_tile_edge && 4 * edge > std::max(m, n)) edge /= 2;
  if (limit > 0) edge = limit;
  HostTiling tiling;
  tiling.tile_m = std::min(m, edge);
  tiling.tile_n = std::min(n, edge);
  if (k == 0) return tiling;
  tiling.tile_k = std::min(k, limit > 0 ? limit : max_tile_k);
  const size_t budget = std::min(device_bytes / 4, max_staging_bytes);
  const auto bytes = [&](int64_t depth) {
    return static_cast<size_t>(2 * (tiling.tile_m + tiling.tile_n) * depth + 2 * tiling.tile_m * tiling.tile_n) *
           sizeof(float);
  };
  while (tiling.tile_k > min_tile_k && bytes(tiling.tile_k) > budget) tiling.tile_k = (tiling.tile_k + 1) / 2;
  return tiling;
}

HostGemm::HostGemm(Context &primary) : primary_(primary), devices_{primary.device().ordinal} {}

HostGemm::~HostGemm() = default;

Status HostGemm::set_devices(const int *devices, int count) {
  if (count < 0)
    return Status::failure(StatusCode::invalid_value, "count = " + std::to_string(count) + " must be >= 0");
  if (count > 0 && devices == nullptr)
    return Status::failure(StatusCode::invalid_value, "devices is NULL but count > 0");
  if (count == 0) {
    if (devices != nullptr)
      return Status::failure(StatusCode::invalid_value,
                             "count = 0 with devices non-NULL: pass NULL, 0 for the "
                             "handle's own device");
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

Status HostGemm::ensure_workers() {
  if (!workers_.empty()) return Status::success();
  std::vector<std::unique_ptr<HostWorker>> made;
  for (int ordinal : devices_) {
    DeviceGuard guard;
    FG_RETURN_IF_ERROR(guard.enter(ordinal));
    std::unique_ptr<HostWorker> worker;
    FG_RETURN_IF_ERROR(HostWorker::create(ordinal, primary_, &worker));
    made.push_back(std::move(worker));
  }
  workers_ = std::move(made);
  return Status::success();
}

Status HostGemm::run(const GemmProblem &problem, bool product, fg_sgemm_algo_t algo, const HostTileOps &ops,
                     fg_sgemm_algo_t *ran) {
  *ran = FG_SGEMM_AUTO;
  // Earlier work on the handle's stream may still write the operands.
  FG_CUDA_CHECK(cudaStreamSynchronize(primary_.stream()));
  FG_RETURN_IF_ERROR(ensure_workers());

  HostJob job;
  job.problem = problem;
  job.product = product;
  job.algo = algo;
  job.ops = &ops;
  if (product) FG_RETURN_IF_ERROR(locate(problem.a.data, &job.a_place));
  if (product) FG_RETURN_IF_ERROR(locate(problem.b.data, &job.b_place));
  FG_RETURN_IF_ERROR(locate(problem.c, &job.c_place));

  size_t smallest_memory = SIZE_MAX;
  for (const auto &worker : workers_) {
    cudaDeviceProp properties = {};
    FG_CUDA_CHECK(cudaGetDeviceProperties(&properties, worker->device()));
    smallest_memory = std::min(smallest_memory, properties.totalGlobalMem);
  }
  job.tiling = choose_host_tiling(problem.m, problem.n, product ? problem.k : 0, smallest_memory,
                                  host_tile_limit_from_environment());
  job.tiles_m = (problem.m + job.tiling.tile_m - 1) / job.tiling.tile_m;
  job.tiles_n = (problem.n + job.tiling.tile_n - 1) / job.tiling.tile_n;
  job.chunks = product ? (problem.k + job.tiling.tile_k - 1) / job.tiling.tile_k : 0;
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  job.single_worker = workers_.size() == 1;
  job.copy_threads = std::clamp(hardware / static_cast<int>(workers_.size()), 1, max_copy_threads);

  // Every buffer is allocated before any tile starts, so that a failure leaves C untouched.
  for (const auto &worker : workers_) {
    DeviceGuard guard;
    FG_RETURN_IF_ERROR(guard.enter(worker->device()));
    FG_RETURN_IF_ERROR(worker->prepare(job));
  }

  std::vector<Status> results(workers_.size());
  std::vector<fg_sgemm_algo_t> ran_by(workers_.size(), FG_SGEMM_AUTO);
  const auto run_worker = [&](size_t index) {
    DeviceGuard guard;
    results[index] = guard.enter(workers_[index]->device());
    if (results[index].ok()) results[index] = workers_[index]->work(job, &ran_by[index]);
    if (!results[index].ok()) job.failed.store(true);
  };
  std::vector<std::thread> threads;
  for (size_t index = 1; index < workers_.size(); ++index) {
    try {
      threads.emplace_back(run_worker, index);
    } catch (...) {
      break;  // fewer threads: the workers that run take every tile
    }
  }
  run_worker(0);
  for (auto &thread : threads) thread.join();
  for (const Status &result : results)
    if (!result.ok()) return result;
  for (const fg_sgemm_algo_t algo_ran : ran_by)
    if (algo_ran != FG_SGEMM_AUTO) *ran = algo_ran;
  return Status::success();
}

}  // namespace fastgemm::detail
