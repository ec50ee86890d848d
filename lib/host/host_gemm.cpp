// SPDX-License-Identifier: Apache-2.0
#include "host/host_gemm.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/check.hpp"
#include "core/device.hpp"

namespace fastgemm::detail {
namespace {

// Tiles from 1024 to 4096 on a side, the largest that still cuts the longer side of C in four: a product
// of 4096 or more on a side has at least 16 tiles, so the first upload and the last download, which
// nothing overlaps, are a small part of the traffic, while each tile's product (0.2 ms for 1024 x 1024 x
// 4096 at 46 TFLOPS, 2.7 ms at 4096 square) still dwarfs the launch and event overheads.
constexpr int64_t largest_tile_edge = 4096;
constexpr int64_t smallest_tile_edge = 1024;
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
// The staging buffers of the grid's formula may use at most a quarter of the device's memory, and never
// more than this.
constexpr size_t max_staging_bytes = size_t(6) << 30;
// Pageable memory moves through rings of pinned chunks: small enough that packing one overlaps the copy
// of the previous, large enough to hold the longest line (max_tile_k floats). The upload ring is deeper:
// packing runs ahead of the copies while a slot waits for the products that read it.
constexpr size_t ring_chunk_floats = size_t(4) << 20;
constexpr int upload_ring_chunks = 6;
constexpr int download_ring_chunks = 4;
// With several workers, pieces of a pageable B are packed into pinned buffers shared by all of them, so
// that a piece every device needs is packed once while the devices keep within a few pieces of each other
// (packing B once per device made the host's copies the limit with two devices). A worker holds at most
// this many shared pieces, the one it packs or waits for and those whose transfer it has not seen finish;
// beyond those, each worker leaves this many more packed for the others to find. Pieces larger than the
// cap go through the rings, and so does B with one worker: whole pieces packed before their transfer made
// 4096^3 on pageable operands 0.5-0.8 ms slower on the H100 than the ring's chunks of 16 MiB (8.2-8.4 ms
// against 7.4-7.8).
constexpr int shared_pieces_in_flight = 3;
constexpr int shared_pieces_kept_per_worker = 2;
constexpr size_t max_shared_piece_floats = size_t(16) << 20;
// Host copies are cut in parts of at least this many bytes, one per thread of the pool.
constexpr size_t copy_part_bytes = size_t(256) << 10;
// The pool's threads per device, beside the threads that enqueue work: a 16-core host packs at 40 GB/s
// with 8 threads writing with streaming stores, and the copies of both directions run at once. The pool
// leaves four of the host's cores to those threads.
constexpr int max_pool_threads = 12;
// Steps (one k chunk of one tile) planned ahead of the one whose product is enqueued next: two tiles' worth,
// within these bounds, so that the upload thread moves the next row's panels while light tiles compute.
constexpr int64_t min_lookahead_steps = 3;
constexpr int64_t max_lookahead_steps = 16;
// The most workers FASTGEMM_HOST_WORKERS_PER_DEVICE may ask for on one device.
constexpr int max_workers_per_device = 8;
// Device memory left to the products themselves (workspaces) when the staging buffers are sized.
constexpr size_t reserved_device_bytes = size_t(768) << 20;

// Copies count floats; large copies use streaming stores, which neither read the destination first nor
// fill the caches with it: the destination is a pinned buffer the device reads next, or the caller's C.
void copy_floats(float *dst, const float *src, size_t count) {
#if defined(__SSE2__)
  if (count >= 256 && (reinterpret_cast<uintptr_t>(dst) & 3) == 0) {
    while ((reinterpret_cast<uintptr_t>(dst) & 15) != 0) {
      *dst++ = *src++;
      --count;
    }
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
      const __m128 v0 = _mm_loadu_ps(src + i), v1 = _mm_loadu_ps(src + i + 4);
      const __m128 v2 = _mm_loadu_ps(src + i + 8), v3 = _mm_loadu_ps(src + i + 12);
      _mm_stream_ps(dst + i, v0);
      _mm_stream_ps(dst + i + 4, v1);
      _mm_stream_ps(dst + i + 8, v2);
      _mm_stream_ps(dst + i + 12, v3);
    }
    if (i < count) std::memcpy(dst + i, src + i, (count - i) * sizeof(float));
    return;
  }
#endif
  std::memcpy(dst, src, count * sizeof(float));
}

void copy_lines_serial(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t lines, int64_t length) {
  if (dst_ld == length && src_ld == length) {
    copy_floats(dst, src, static_cast<size_t>(lines) * static_cast<size_t>(length));
  } else {
    for (int64_t line = 0; line < lines; ++line)
      copy_floats(dst + line * dst_ld, src + line * src_ld, static_cast<size_t>(length));
  }
#if defined(__SSE2__)
  _mm_sfence();  // the streaming stores are visible before the copy is reported done
#endif
}

}  // namespace

// Host threads that copy parts of a region beside the thread that asks; kept for the handle's life so that
// no copy waits for threads to start. They make no CUDA call.
class CopyPool {
 public:
  explicit CopyPool(int threads) : wanted_(threads) {}
  ~CopyPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    work_.notify_all();
    for (std::thread &thread : threads_) thread.join();
  }
  CopyPool(const CopyPool &) = delete;
  CopyPool &operator=(const CopyPool &) = delete;

  // Copies `lines` lines of `length` floats; returns once every part is done. Callable from several
  // threads at once.
  void copy(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t lines, int64_t length) {
    const size_t bytes = static_cast<size_t>(lines) * static_cast<size_t>(length) * sizeof(float);
    const int64_t parts =
        std::min<int64_t>({static_cast<int64_t>(wanted_) + 1, lines, static_cast<int64_t>(bytes / copy_part_bytes)});
    if (parts <= 1 || !started()) {
      copy_lines_serial(dst, dst_ld, src, src_ld, lines, length);
      return;
    }
    Batch batch{dst, dst_ld, src, src_ld, lines, length, parts, (lines + parts - 1) / parts};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.push_back(&batch);
    }
    work_.notify_all();
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      const int64_t part = claim(batch);
      if (part < 0) break;
      lock.unlock();
      run(batch, part);
      lock.lock();
      ++batch.done;
    }
    finished_.wait(lock, [&] { return batch.done == batch.parts; });
  }

 private:
  struct Batch {
    float *dst;
    int64_t dst_ld;
    const float *src;
    int64_t src_ld, lines, length, parts, lines_per_part;
    int64_t claimed = 0, done = 0;
  };

  // With the mutex held: the next part of `batch`, or -1; the batch leaves the queue with its last part.
  int64_t claim(Batch &batch) {
    if (batch.claimed == batch.parts) return -1;
    const int64_t part = batch.claimed++;
    if (batch.claimed == batch.parts) pending_.erase(std::find(pending_.begin(), pending_.end(), &batch));
    return part;
  }

  static void run(const Batch &batch, int64_t part) {
    const int64_t first = part * batch.lines_per_part;
    const int64_t lines = std::min(batch.lines_per_part, batch.lines - first);
    if (lines > 0)
      copy_lines_serial(batch.dst + first * batch.dst_ld, batch.dst_ld, batch.src + first * batch.src_ld, batch.src_ld,
                        lines, batch.length);
  }

  // Starts the threads on first use; a host that cannot give them leaves the callers to copy alone.
  bool started() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!tried_) {
      tried_ = true;
      try {
        while (static_cast<int>(threads_.size()) < wanted_) threads_.emplace_back([this] { serve(); });
      } catch (...) {
      }
    }
    return !threads_.empty();
  }

  void serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      work_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      if (stopping_) return;
      Batch &batch = *pending_.front();
      const int64_t part = claim(batch);
      lock.unlock();
      run(batch, part);
      lock.lock();
      if (++batch.done == batch.parts) finished_.notify_all();
    }
  }

  const int wanted_;
  std::mutex mutex_;
  std::condition_variable work_, finished_;
  std::deque<Batch *> pending_;
  std::vector<std::thread> threads_;
  bool tried_ = false, stopping_ = false;
};

namespace {

// Where an operand lives, as seen from one worker's device.
enum class Residence {
  in_place,  // device memory of the worker's device: read and written where it is
  direct,    // pinned host, managed, or another device's memory: one asynchronous 2D copy reaches it
  pageable,  // ordinary host memory: packed through a pinned ring by the host
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

}  // namespace

// Pinned host buffers holding packed pieces of a pageable B for every worker of a call: the first worker that
// needs a piece packs it, the others upload the same copy while it is there. A piece in use by a worker (being packed,
// or read by a transfer that worker has not seen finish) is never replaced; of the others, the one used longest ago is.
// Kept for the handle's life.
class SharedPieces {
 public:
  struct Piece {
    float *data = nullptr;
    int64_t key = -1;     // which piece of the call it holds; -1: none
    bool packed = false;  // its contents are complete
    int users = 0;        // workers that wait for it or whose transfer from it may still run
    uint64_t last_use = 0;
  };

  SharedPieces() = default;
  ~SharedPieces() { free_buffers(); }
  SharedPieces(const SharedPieces &) = delete;
  SharedPieces &operator=(const SharedPieces &) = delete;

  // At least `count` buffers of `floats` each, holding nothing, for a new call (no transfer of an earlier
  // call runs). False when the host cannot pin that much: the call then packs B through each worker's ring.
  bool prepare(size_t count, size_t floats) {
    if (pieces_.size() < count || floats_ < floats) {
      free_buffers();
      pieces_.resize(count);
      for (Piece &piece : pieces_) {
        if (cudaHostAlloc(reinterpret_cast<void **>(&piece.data), floats * sizeof(float), cudaHostAllocPortable) ==
            cudaSuccess)
          continue;
        piece.data = nullptr;
        (void)cudaGetLastError();  // an allocation failure is not sticky; the call goes on without these
        free_buffers();
        return false;
      }
      floats_ = floats;
    }
    for (Piece &piece : pieces_) {
      piece.key = -1;
      piece.packed = false;
      piece.users = 0;
      piece.last_use = 0;
    }
    clock_ = 0;
    return true;
  }

  // The piece holding `key`, packed from `region` by the calling thread when no worker has packed it yet;
  // nullptr when every buffer is in use. The caller releases it once nothing reads it any more.
  Piece *acquire(int64_t key, const Region &region, CopyPool &pool) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (Piece &piece : pieces_) {
      if (piece.key != key) continue;
      ++piece.users;
      piece.last_use = ++clock_;
      packed_.wait(lock, [&] { return piece.packed; });
      return &piece;
    }
    Piece *chosen = nullptr;
    for (Piece &piece : pieces_)
      if (piece.users == 0 && (chosen == nullptr || piece.last_use < chosen->last_use)) chosen = &piece;
    if (chosen == nullptr) return nullptr;
    chosen->key = key;
    chosen->packed = false;
    chosen->users = 1;
    chosen->last_use = ++clock_;
    lock.unlock();
    pool.copy(chosen->data, region.length, region.data, region.ld, region.lines, region.length);
    lock.lock();
    chosen->packed = true;
    packed_.notify_all();
    return chosen;
  }

  void release(Piece *piece) {
    std::lock_guard<std::mutex> lock(mutex_);
    --piece->users;
  }

 private:
  void free_buffers() {
    for (Piece &piece : pieces_)
      if (piece.data != nullptr) (void)cudaFreeHost(piece.data);
    pieces_.clear();
    floats_ = 0;
  }

  std::mutex mutex_;
  std::condition_variable packed_;
  std::vector<Piece> pieces_;
  size_t floats_ = 0;
  uint64_t clock_ = 0;
};

namespace {

// A device buffer for one k chunk of an A or B panel, or one C tile, and the events that order its reuse.
struct DeviceSlot {
  float *data = nullptr;
  size_t floats = 0;
  int64_t key = -1;                // which piece it holds during this call; -1: none
  int64_t last_step = -1;          // the last planned step that reads it
  int64_t request = -1;            // the upload that fills it
  cudaEvent_t ready = nullptr;     // its upload is done; for a C tile, then its products
  cudaEvent_t released = nullptr;  // the last work that read or wrote it is done
};

struct RingChunk {
  float *data = nullptr;
  cudaEvent_t done = nullptr;  // the last copy from or to it is done
};

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

}  // namespace

// What every worker of one call shares.
struct HostJob {
  GemmProblem problem;
  bool product = true;
  fg_sgemm_algo_t algo = FG_SGEMM_AUTO;
  const HostTileOps *ops = nullptr;
  CopyPool *pool = nullptr;
  SharedPieces *shared = nullptr;  // where B's pieces are packed when B is pageable; null: each worker's ring
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

namespace {

struct UploadRequest {
  Region region;
  Residence where;
  DeviceSlot *slot;
  int64_t after_step;      // >= 0: the slot is free once this step's products are done
  int64_t after_download;  // >= 0: the slot is free once this download is done
  int64_t shared_key;      // >= 0: a piece of B, packed through the call's shared pieces when it can be
};

struct DownloadRequest {
  int64_t tile;
  DeviceSlot *slot;
};

// The hand-offs between a worker's three threads during one call. An event is waited for only once the
// thread that records it has said so here, so that every wait sees the record it needs.
struct Progress {
  std::mutex mutex;
  std::condition_variable changed;
  int64_t steps_enqueued = 0;      // steps whose products, and the release of their pieces, are enqueued
  int64_t uploads_recorded = 0;    // upload requests whose slot's ready event is recorded
  int64_t downloads_released = 0;  // download requests whose slot's released event is recorded
  std::deque<UploadRequest> uploads;
  std::deque<DownloadRequest> downloads;
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

Status failed_elsewhere() {
  return Status::failure(StatusCode::internal_error, "another part of fg_sgemm_host failed");
}

}  // namespace

// One device's share of the work: its streams, buffers and pinned rings, kept across calls.
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
  Status prepare(const HostJob &job);
  // Computes its share of the tiles (worker `index` of the job's); with the device current. Returns once
  // its streams are idle.
  Status work(HostJob &job, int index, fg_sgemm_algo_t *ran);

 private:
  struct Step {
    int64_t tile = -1, chunk = 0, tile_index = 0;  // tile_index: how many tiles this worker began before
  };
  struct Planned {
    Step step;
    DeviceSlot *a = nullptr, *b = nullptr, *c = nullptr;
    int64_t uploads_needed = 0;  // uploads_recorded that the step's product waits for
  };

  HostWorker() = default;
  Status ensure_slots(std::vector<DeviceSlot> &slots, size_t count, size_t floats);
  bool next_step(HostJob &job, int index, bool may_help, Step *step);
  void plan(HostJob &job, const Step &step, int64_t step_index, Planned *planned, int64_t *requests);
  DeviceSlot *stage(std::vector<DeviceSlot> &slots, int64_t key, const Region &region, Residence where, bool shareable,
                    int64_t step_index, int64_t *requests, int64_t *needed);
  Status enqueue(HostJob &job, const Planned &planned, int64_t step_index, fg_sgemm_algo_t *ran);
  Status upload_all(HostJob &job);
  Status download_all(HostJob &job);
  Status upload(HostJob &job, const UploadRequest &request);
  Status upload_shared(HostJob &job, const UploadRequest &request, bool *uploaded);
  Status release_held(HostJob &job, int count);
  Status download(HostJob &job, const DownloadRequest &request);
  Status drain();
  Status wait_until_one_tile_left();

  int device_ = -1;
  Context *context_ = nullptr;
  std::unique_ptr<Context> own_context_;
  cudaStream_t own_stream_ = nullptr;  // own_context_'s stream
  cudaStream_t upload_stream_ = nullptr, download_stream_ = nullptr;
  std::vector<DeviceSlot> a_slots_, b_slots_, c_slots_;
  RingChunk upload_ring_[upload_ring_chunks], download_ring_[download_ring_chunks];
  int upload_next_ = 0;
  // The shared pieces whose transfer the upload thread has enqueued, oldest first, each with the event that
  // says the transfer is done.
  struct HeldPiece {
    SharedPieces::Piece *piece = nullptr;
    cudaEvent_t done = nullptr;
  };
  HeldPiece held_[shared_pieces_in_flight];
  int held_first_ = 0, held_count_ = 0;
  // Recorded after the products of the last two tiles this worker enqueued (tile n in tile_done_[n % 2]).
  cudaEvent_t tile_done_[2] = {nullptr, nullptr};
  int64_t tiles_enqueued_ = 0;
  Progress progress_;
  // The steps of a chunk-major call: this worker's tiles, and where the walk over them is.
  std::vector<int64_t> my_tiles_;
  int64_t walk_ = 0;
};

namespace {

Status create_event(cudaEvent_t *event) {
  FG_CUDA_CHECK(cudaEventCreateWithFlags(event, cudaEventDisableTiming));
  return Status::success();
}

size_t slot_bytes(const std::vector<DeviceSlot> &slots) {
  size_t bytes = 0;
  for (const DeviceSlot &slot : slots) bytes += slot.floats * sizeof(float);
  return bytes;
}

}  // namespace

size_t HostWorker::held_bytes() const { return slot_bytes(a_slots_) + slot_bytes(b_slots_) + slot_bytes(c_slots_); }

// Buffers are allocated and freed in the upload stream's order, so that neither a larger problem nor a
// handle's end synchronizes the device. Slots beyond `count` are freed: a call that needed many (all of
// C's tiles) does not keep them from the next.
Status HostWorker::ensure_slots(std::vector<DeviceSlot> &slots, size_t count, size_t floats) {
  while (slots.size() > count) {
    DeviceSlot &slot = slots.back();
    if (slot.data != nullptr) FG_CUDA_CHECK(cudaFreeAsync(slot.data, upload_stream_));
    (void)cudaEventDestroy(slot.ready);
    (void)cudaEventDestroy(slot.released);
    slots.pop_back();
  }
  slots.reserve(count);
  while (slots.size() < count) {
    DeviceSlot slot;
    FG_RETURN_IF_ERROR(create_event(&slot.ready));
    const Status released = create_event(&slot.released);
    if (!released.ok()) (void)cudaEventDestroy(slot.ready);
    FG_RETURN_IF_ERROR(released);
    slots.push_back(slot);
  }
  for (DeviceSlot &slot : slots) {
    if (slot.floats >= floats) continue;
    if (slot.data != nullptr) FG_CUDA_CHECK(cudaFreeAsync(slot.data, upload_stream_));
    slot.data = nullptr;
    slot.floats = 0;
    FG_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void **>(&slot.data), floats * sizeof(float), upload_stream_));
    slot.floats = floats;
  }
  return Status::success();
}

Status HostWorker::create(int device, Context &primary, bool in_primary, std::unique_ptr<HostWorker> *out) {
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
  for (RingChunk &chunk : worker->upload_ring_) FG_RETURN_IF_ERROR(create_event(&chunk.done));
  for (RingChunk &chunk : worker->download_ring_) FG_RETURN_IF_ERROR(create_event(&chunk.done));
  for (HeldPiece &held : worker->held_) FG_RETURN_IF_ERROR(create_event(&held.done));
  // Waited for by a thread that has nothing else to do: it sleeps instead of spinning on a core the copies use.
  for (cudaEvent_t &event : worker->tile_done_)
    FG_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming | cudaEventBlockingSync));
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
  for (RingChunk *ring : {upload_ring_, download_ring_})
    for (int i = 0; i < (ring == upload_ring_ ? upload_ring_chunks : download_ring_chunks); ++i) {
      if (ring[i].data != nullptr) (void)cudaFreeHost(ring[i].data);
      if (ring[i].done != nullptr) (void)cudaEventDestroy(ring[i].done);
    }
  for (HeldPiece &held : held_)
    if (held.done != nullptr) (void)cudaEventDestroy(held.done);
  for (cudaEvent_t event : tile_done_)
    if (event != nullptr) (void)cudaEventDestroy(event);
  if (upload_stream_ != nullptr) (void)cudaStreamDestroy(upload_stream_);
  if (download_stream_ != nullptr) (void)cudaStreamDestroy(download_stream_);
  own_context_.reset();
  if (own_stream_ != nullptr) (void)cudaStreamDestroy(own_stream_);
}

Status HostWorker::prepare(const HostJob &job) {
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
    for (RingChunk &chunk : upload_ring_)
      FG_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&chunk.data), ring_chunk_floats * sizeof(float),
                                  cudaHostAllocPortable));
    for (RingChunk &chunk : download_ring_)
      FG_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&chunk.data), ring_chunk_floats * sizeof(float),
                                  cudaHostAllocPortable));
  }
  return Status::success();
}

// The worker's next step, or false when it has none left (tile-major: none in its band, and none in the
// others when it `may_help`). Tile-major: tiles are taken from the job's counters as they come, the worker's
// own band first. Chunk-major: worker `index` of n keeps tiles index, index + n,
// ... for every chunk.
bool HostWorker::next_step(HostJob &job, int index, bool may_help, Step *step) {
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
DeviceSlot *HostWorker::stage(std::vector<DeviceSlot> &slots, int64_t key, const Region &region, Residence where,
                              bool shareable, int64_t step_index, int64_t *requests, int64_t *needed) {
  DeviceSlot *chosen = nullptr;
  for (DeviceSlot &slot : slots)
    if (slot.key == key) chosen = &slot;
  if (chosen == nullptr) {
    chosen = &slots[0];
    for (DeviceSlot &slot : slots)
      if (slot.last_step < chosen->last_step) chosen = &slot;
    UploadRequest request{region, where, chosen, chosen->last_step, -1, shareable ? key : -1};
    chosen->key = key;
    chosen->request = (*requests)++;
    progress_.update([&] { progress_.uploads.push_back(request); });
  }
  chosen->last_step = step_index;
  *needed = std::max(*needed, chosen->request + 1);
  return chosen;
}

void HostWorker::plan(HostJob &job, const Step &step, int64_t step_index, Planned *planned, int64_t *requests) {
  const GemmProblem &p = job.problem;
  const HostTiling &t = job.tiling;
  planned->step = step;
  planned->uploads_needed = 0;
  const int64_t tile_row = step.tile / job.tiles_n, tile_col = step.tile % job.tiles_n;
  const int64_t row = tile_row * t.tile_m, col = tile_col * t.tile_n;
  const int64_t rows = std::min(t.tile_m, p.m - row), cols = std::min(t.tile_n, p.n - col);
  const Residence c_where = job.c_on(device_);
  if (c_where != Residence::in_place) {
    DeviceSlot &slot = c_slots_[static_cast<size_t>(step.tile_index) % c_slots_.size()];
    planned->c = &slot;
    // The tile's C is fetched before its first product when beta needs it, once the slot's previous tile
    // is downloaded.
    if (step.chunk == 0 && p.beta != 0.0f) {
      const int64_t previous = step.tile_index - static_cast<int64_t>(c_slots_.size());
      UploadRequest request{Region{p.c + row * p.ldc + col, p.ldc, rows, cols}, c_where, &slot, -1, previous, -1};
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

Status HostWorker::enqueue(HostJob &job, const Planned &planned, int64_t step_index, fg_sgemm_algo_t *ran) {
  const GemmProblem &p = job.problem;
  const HostTiling &t = job.tiling;
  const Step &step = planned.step;
  const int64_t row = step.tile / job.tiles_n * t.tile_m, col = step.tile % job.tiles_n * t.tile_n;
  const int64_t rows = std::min(t.tile_m, p.m - row), cols = std::min(t.tile_n, p.n - col);
  const cudaStream_t compute = context_->stream();
  const int64_t last_chunk = std::max<int64_t>(job.chunks, 1) - 1;
  if (!progress_.wait(job.failed, [&] { return progress_.uploads_recorded >= planned.uploads_needed; }))
    return failed_elsewhere();

  GemmProblem part;
  part.m = rows;
  part.n = cols;
  part.alpha = p.alpha;
  part.beta = p.beta;
  part.math = p.math;
  if (planned.c == nullptr) {
    part.c = p.c + row * p.ldc + col;
    part.ldc = p.ldc;
  } else {
    part.c = planned.c->data;
    part.ldc = cols;
    if (step.chunk == 0) {
      if (p.beta != 0.0f) {
        FG_CUDA_CHECK(cudaStreamWaitEvent(compute, planned.c->ready, 0));
      } else {
        // The slot's previous tile must be downloaded before it is overwritten.
        const int64_t previous = step.tile_index - static_cast<int64_t>(c_slots_.size());
        if (!progress_.wait(job.failed, [&] { return progress_.downloads_released > previous; }))
          return failed_elsewhere();
        FG_CUDA_CHECK(cudaStreamWaitEvent(compute, planned.c->released, 0));
      }
    }
  }

  if (!job.product) {
    FG_RETURN_IF_ERROR(job.ops->scale(part, compute));
  } else {
    const int64_t k0 = step.chunk * t.tile_k, depth = std::min(t.tile_k, p.k - k0);
    const Region a = a_region(p.a, row, rows, k0, depth), b = b_region(p.b, k0, depth, col, cols);
    if (planned.a != nullptr) FG_CUDA_CHECK(cudaStreamWaitEvent(compute, planned.a->ready, 0));
    if (planned.b != nullptr) FG_CUDA_CHECK(cudaStreamWaitEvent(compute, planned.b->ready, 0));
    part.k = depth;
    part.a = planned.a != nullptr ? GemmOperand{planned.a->data, a.length, 0, p.a.transposed}
                                  : GemmOperand{a.data, a.ld, 0, p.a.transposed};
    part.b = planned.b != nullptr ? GemmOperand{planned.b->data, b.length, 0, p.b.transposed}
                                  : GemmOperand{b.data, b.ld, 0, p.b.transposed};
    // The chunks of k are summed in order into C, which holds beta * C after the first.
    part.beta = step.chunk == 0 ? p.beta : 1.0f;
    FG_RETURN_IF_ERROR(job.ops->product(part, *context_, job.algo, ran));
    if (planned.a != nullptr) FG_CUDA_CHECK(cudaEventRecord(planned.a->released, compute));
    if (planned.b != nullptr) FG_CUDA_CHECK(cudaEventRecord(planned.b->released, compute));
  }
  const bool tile_done = step.chunk == last_chunk;
  if (tile_done && planned.c != nullptr) FG_CUDA_CHECK(cudaEventRecord(planned.c->ready, compute));
  if (tile_done) FG_CUDA_CHECK(cudaEventRecord(tile_done_[tiles_enqueued_++ % 2], compute));
  progress_.update([&] {
    progress_.steps_enqueued = step_index + 1;
    if (tile_done && planned.c != nullptr) progress_.downloads.push_back(DownloadRequest{step.tile, planned.c});
  });
  return Status::success();
}

// Lets go of the `count` oldest held pieces once their transfers are done.
Status HostWorker::release_held(HostJob &job, int count) {
  for (; count > 0 && held_count_ > 0; --count) {
    HeldPiece &held = held_[held_first_];
    const cudaError_t error = cudaEventSynchronize(held.done);
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
Status HostWorker::upload_shared(HostJob &job, const UploadRequest &request, bool *uploaded) {
  *uploaded = false;
  if (held_count_ == shared_pieces_in_flight) FG_RETURN_IF_ERROR(release_held(job, 1));
  const Region &region = request.region;
  SharedPieces::Piece *piece = job.shared->acquire(request.shared_key, region, *job.pool);
  if (piece == nullptr) return Status::success();
  HeldPiece &held = held_[(held_first_ + held_count_) % shared_pieces_in_flight];
  const size_t bytes = static_cast<size_t>(region.lines * region.length) * sizeof(float);
  const cudaError_t copied =
      cudaMemcpyAsync(request.slot->data, piece->data, bytes, cudaMemcpyHostToDevice, upload_stream_);
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

Status HostWorker::upload(HostJob &job, const UploadRequest &request) {
  const Region &region = request.region;
  float *dst = request.slot->data;
  if (request.where == Residence::direct)
    return copy_2d_async(dst, region.length, region.data, region.ld, region.lines, region.length, upload_stream_);
  if (request.shared_key >= 0 && job.shared != nullptr) {
    bool uploaded = false;
    FG_RETURN_IF_ERROR(upload_shared(job, request, &uploaded));
    if (uploaded) return Status::success();
  }
  const int64_t lines_per_chunk = static_cast<int64_t>(ring_chunk_floats) / region.length;
  for (int64_t first = 0; first < region.lines; first += lines_per_chunk) {
    if (job.failed.load()) return failed_elsewhere();
    const int64_t lines = std::min(lines_per_chunk, region.lines - first);
    RingChunk &chunk = upload_ring_[upload_next_];
    upload_next_ = (upload_next_ + 1) % upload_ring_chunks;
    FG_CUDA_CHECK(cudaEventSynchronize(chunk.done));
    job.pool->copy(chunk.data, region.length, region.data + first * region.ld, region.ld, lines, region.length);
    FG_CUDA_CHECK(cudaMemcpyAsync(dst + first * region.length, chunk.data,
                                  static_cast<size_t>(lines * region.length) * sizeof(float), cudaMemcpyHostToDevice,
                                  upload_stream_));
    FG_CUDA_CHECK(cudaEventRecord(chunk.done, upload_stream_));
  }
  return Status::success();
}

// The upload thread: the requests in order, each once the slot's earlier contents are no longer needed.
Status HostWorker::upload_all(HostJob &job) {
  for (;;) {
    UploadRequest request{};
    bool have = false;
    if (!progress_.take(job.failed, progress_.uploads, &request, &have)) return failed_elsewhere();
    if (!have) return job.shared != nullptr ? release_held(job, held_count_) : Status::success();
    if (request.after_step >= 0 || request.after_download >= 0) {
      if (!progress_.wait(job.failed, [&] {
            return progress_.steps_enqueued > request.after_step &&
                   progress_.downloads_released > request.after_download;
          }))
        return failed_elsewhere();
      FG_CUDA_CHECK(cudaStreamWaitEvent(upload_stream_, request.slot->released, 0));
    }
    FG_RETURN_IF_ERROR(upload(job, request));
    FG_CUDA_CHECK(cudaEventRecord(request.slot->ready, upload_stream_));
    progress_.update([&] { ++progress_.uploads_recorded; });
  }
}

// Writes a computed tile back to the caller's C: D2H copies into the ring, each unpacked once it is done;
// the slot is released as soon as its last copy is enqueued.
Status HostWorker::download(HostJob &job, const DownloadRequest &request) {
  const GemmProblem &p = job.problem;
  const HostTiling &t = job.tiling;
  const int64_t row = request.tile / job.tiles_n * t.tile_m, col = request.tile % job.tiles_n * t.tile_n;
  const int64_t rows = std::min(t.tile_m, p.m - row), cols = std::min(t.tile_n, p.n - col);
  float *user_c = p.c + row * p.ldc + col;
  DeviceSlot &slot = *request.slot;
  FG_CUDA_CHECK(cudaStreamWaitEvent(download_stream_, slot.ready, 0));
  if (job.c_on(device_) == Residence::direct) {
    FG_RETURN_IF_ERROR(copy_2d_async(user_c, p.ldc, slot.data, cols, rows, cols, download_stream_));
    FG_CUDA_CHECK(cudaEventRecord(slot.released, download_stream_));
    progress_.update([&] { ++progress_.downloads_released; });
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
    job.pool->copy(user_c + oldest.first * p.ldc, p.ldc, oldest.chunk->data, cols, oldest.lines, cols);
    return Status::success();
  };
  const int64_t lines_per_chunk = static_cast<int64_t>(ring_chunk_floats) / cols;
  int next = 0;
  for (int64_t first = 0; first < rows; first += lines_per_chunk) {
    // The ring is taken in order, so the oldest pending chunk is the one about to be reused.
    if (pending.size() == download_ring_chunks) FG_RETURN_IF_ERROR(unpack_oldest());
    const int64_t lines = std::min(lines_per_chunk, rows - first);
    RingChunk &chunk = download_ring_[next];
    next = (next + 1) % download_ring_chunks;
    FG_CUDA_CHECK(cudaMemcpyAsync(chunk.data, slot.data + first * cols,
                                  static_cast<size_t>(lines * cols) * sizeof(float), cudaMemcpyDeviceToHost,
                                  download_stream_));
    FG_CUDA_CHECK(cudaEventRecord(chunk.done, download_stream_));
    pending.push_back(Pending{&chunk, first, lines});
  }
  FG_CUDA_CHECK(cudaEventRecord(slot.released, download_stream_));
  progress_.update([&] { ++progress_.downloads_released; });
  while (!pending.empty()) FG_RETURN_IF_ERROR(unpack_oldest());
  return Status::success();
}

// The download thread: each computed tile in the order the products finished being enqueued.
Status HostWorker::download_all(HostJob &job) {
  for (;;) {
    DownloadRequest request{};
    bool have = false;
    if (!progress_.take(job.failed, progress_.downloads, &request, &have)) return failed_elsewhere();
    if (!have) return Status::success();
    FG_RETURN_IF_ERROR(download(job, request));
  }
}

Status HostWorker::drain() {
  const Status compute = cuda_status(cudaStreamSynchronize(context_->stream()), "cudaStreamSynchronize");
  const Status up = cuda_status(cudaStreamSynchronize(upload_stream_), "cudaStreamSynchronize");
  const Status down = cuda_status(cudaStreamSynchronize(download_stream_), "cudaStreamSynchronize");
  return !compute.ok() ? compute : (!up.ok() ? up : down);
}

// Returns once the device has computed every enqueued tile but the last.
Status HostWorker::wait_until_one_tile_left() {
  if (tiles_enqueued_ < 2) return Status::success();
  FG_CUDA_CHECK(cudaEventSynchronize(tile_done_[(tiles_enqueued_ - 2) % 2]));
  return Status::success();
}

Status HostWorker::work(HostJob &job, int index, fg_sgemm_algo_t *ran) {
  for (std::vector<DeviceSlot> *slots : {&a_slots_, &b_slots_, &c_slots_})
    for (DeviceSlot &slot : *slots) slot.key = slot.last_step = slot.request = -1;
  // Earlier calls' transfers were all drained: the rings' chunks and the shared pieces hold nothing pending.
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
  const auto helper = [&](Status (HostWorker::*body)(HostJob &), Status *result) {
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
    status = Status::failure(StatusCode::alloc_failed, "fg_sgemm_host: no host thread could be started");
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
        status = wait_until_one_tile_left();
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
  // The first failure is the one to report; the others only followed it.
  for (const Status *result : {&status, &upload_result, &download_result})
    if (!result->ok() && result->message != failed_elsewhere().message) return *result;
  for (const Status *result : {&status, &upload_result, &download_result})
    if (!result->ok()) return *result;
  return drained;
}

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
  if (limit > 0) {
    tiling.tile_k = std::min(k, limit);
  } else {
    const int64_t depth = std::max(edge, min_chunk_k);
    const int64_t chunks = (k + depth - 1) / depth;
    const int64_t balanced = (k + chunks - 1) / chunks;
    tiling.tile_k = std::min(k, (balanced + chunk_k_multiple - 1) / chunk_k_multiple * chunk_k_multiple);
  }
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

namespace {

// Workers per listed device as FASTGEMM_HOST_WORKERS_PER_DEVICE asks (1 to max_workers_per_device; a
// testing aid), else 1.
int host_workers_per_device_from_environment() {
  const int64_t value = positive_integer_from_environment("FASTGEMM_HOST_WORKERS_PER_DEVICE");
  return value > 0 && value <= max_workers_per_device ? static_cast<int>(value) : 1;
}

}  // namespace

Status HostGemm::ensure_workers() {
  const int per_device = host_workers_per_device_from_environment();
  if (!workers_.empty() && workers_per_device_ == per_device) return Status::success();
  workers_.clear();
  std::vector<std::unique_ptr<HostWorker>> made;
  bool primary_taken = false;
  for (int ordinal : devices_) {
    DeviceGuard guard;
    FG_RETURN_IF_ERROR(guard.enter(ordinal));
    for (int copy = 0; copy < per_device; ++copy) {
      const bool in_primary = ordinal == primary_.device().ordinal && !primary_taken;
      primary_taken = primary_taken || in_primary;
      std::unique_ptr<HostWorker> worker;
      FG_RETURN_IF_ERROR(HostWorker::create(ordinal, primary_, in_primary, &worker));
      made.push_back(std::move(worker));
    }
  }
  workers_ = std::move(made);
  workers_per_device_ = per_device;
  return Status::success();
}

namespace {

// The device memory the staging buffers may use, as FASTGEMM_HOST_STAGING asks (bytes; a testing knob that
// forces the orders and slot counts of a device with little memory), or 0 when it asks for no limit.
size_t host_staging_limit_from_environment() {
  return static_cast<size_t>(positive_integer_from_environment("FASTGEMM_HOST_STAGING"));
}

// The slots one call uses on each device, within `room` bytes of device memory (the smallest worker's).
SlotCounts choose_slot_counts(const HostJob &job, int device, size_t room) {
  const HostTiling &t = job.tiling;
  const int64_t chunks = std::max<int64_t>(job.chunks, 1);
  const int64_t tiles_per_worker = (job.tiles() + job.workers - 1) / job.workers;
  const bool staged_a = job.product && job.a_on(device) != Residence::in_place;
  const bool staged_b = job.product && job.b_on(device) != Residence::in_place;
  const bool staged_c = job.c_on(device) != Residence::in_place;
  const auto bytes = [&](const SlotCounts &counts) {
    return (counts.a * static_cast<size_t>(t.tile_m * t.tile_k) + counts.b * static_cast<size_t>(t.tile_k * t.tile_n) +
            counts.c * static_cast<size_t>(t.tile_m * t.tile_n)) *
           sizeof(float);
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

}  // namespace

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

  // The staging buffers may use a device's free memory and what its workers' buffers hold already, less
  // what the products need, shared evenly by the device's workers.
  size_t smallest_memory = SIZE_MAX, smallest_room = SIZE_MAX;
  for (int ordinal : devices_) {
    cudaDeviceProp properties = {};
    FG_CUDA_CHECK(cudaGetDeviceProperties(&properties, ordinal));
    smallest_memory = std::min(smallest_memory, properties.totalGlobalMem);
    DeviceGuard guard;
    FG_RETURN_IF_ERROR(guard.enter(ordinal));
    size_t free_bytes = 0, total_bytes = 0;
    FG_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    size_t room = free_bytes;
    for (const auto &worker : workers_)
      if (worker->device() == ordinal) room += worker->held_bytes();
    room = room > reserved_device_bytes ? (room - reserved_device_bytes) / static_cast<size_t>(workers_per_device_) : 0;
    smallest_room = std::min(smallest_room, room);
  }
  const size_t staging_limit = host_staging_limit_from_environment();
  if (staging_limit > 0) smallest_room = std::min(smallest_room, staging_limit);
  job.tiling = choose_host_tiling(problem.m, problem.n, product ? problem.k : 0, smallest_memory,
                                  host_tile_limit_from_environment());
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
        return Status::failure(StatusCode::alloc_failed, "fg_sgemm_host: host memory could not be allocated");
      }
      pool_threads_ = threads;
    }
  }
  job.pool = pool_.get();
  const size_t piece_floats = static_cast<size_t>(job.tiling.tile_k * job.tiling.tile_n);
  if (product && job.workers > 1 && job.b_place.type == cudaMemoryTypeUnregistered &&
      piece_floats <= max_shared_piece_floats) {
    if (!shared_) {
      try {
        shared_ = std::make_unique<SharedPieces>();
      } catch (...) {
        return Status::failure(StatusCode::alloc_failed, "fg_sgemm_host: host memory could not be allocated");
      }
    }
    // What each worker holds at most, so that one is always free, and pieces kept for the others.
    const int per_worker = shared_pieces_in_flight + shared_pieces_kept_per_worker;
    const size_t count = static_cast<size_t>(job.workers) * static_cast<size_t>(per_worker);
    if (shared_->prepare(count, piece_floats)) job.shared = shared_.get();
  }

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
      results[index] = Status::failure(StatusCode::alloc_failed, "fg_sgemm_host: no host thread could be started");
      break;
    }
  }
  run_worker(0);
  for (auto &thread : threads) thread.join();
  for (const Status &result : results)
    if (!result.ok() && result.message != failed_elsewhere().message) return result;
  for (const Status &result : results)
    if (!result.ok()) return result;
  for (const fg_sgemm_algo_t algo_ran : ran_by)
    if (algo_ran != FG_SGEMM_AUTO) *ran = algo_ran;
  return Status::success();
}

}  // namespace fastgemm::detail
