// SPDX-License-Identifier: Apache-2.0
#include "blas/dgemm/device_level3.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "core/check.hpp"
#include "core/device.hpp"
#include "core/launch.cuh"
#include "host/copy_pool.hpp"

namespace fastgemm::blas_dgemm {

using detail::BasicGemmProblem;
using detail::CopyPool;
using detail::Status;
using detail::StatusCode;

namespace {

// The lines solved by substitution in one kernel, and its threads per block (one line of B each).
constexpr int kLeaf = 32;
constexpr int kLeafThreads = 128;
// The independent lines of B in a panel: at most this many, in a schedule fixed by the count of lines (panel_starts),
// so that a call's products are the same run after run.
constexpr int64_t kPanelLines = 4096;
#ifndef FASTGEMM_LEVEL3_TAPER
#define FASTGEMM_LEVEL3_TAPER 1
#endif
// The pinned staging: chunks of 16 MiB, so many for the uploads and as many for the downloads.
constexpr int64_t kChunkBytes = int64_t(16) << 20;
constexpr int kChunks = 4;
// A's columns per staged copy.
constexpr int64_t kTriangleColumns = 256;
// trsm and trmm of this order or more send A and their first panel in pieces as the first panel's work first reads
// them (PanelTriangle::Feed), the diagonal pieces a sixteenth of the order; smaller ones send all of A first.
constexpr int64_t kFeedOrder = 2048;
constexpr int64_t kFeedPieces = 16;
#ifndef FASTGEMM_LEVEL3_FEED
#define FASTGEMM_LEVEL3_FEED 1
#endif
// Device memory left free beside A and the two panels: the products' and the runtime's own.
constexpr size_t kDeviceMargin = size_t(256) << 20;
// A's and the panels' buffers are kept for the next call while they total at most this (the orders and widths of
// LAPACK's blocked calls), larger ones freed as the call ends.
constexpr size_t kKeptDeviceBytes = size_t(128) << 20;
// The pipeline's events: A's upload, and per slot its upload, its work and its download.
enum EventIndex {
  kAReady,
  kUploaded,
  kComputed = kUploaded + 2,
  kDownloaded = kComputed + 2,
  kEvents = kDownloaded + 2
};

// One block of at most 32 lines of the triangle M, for `lines` lines of B: solved, M x = scale b per line of B in
// place, or multiplied, b := scale M x per line from x (laid out as b). M is lower (`forward`: a solve runs from the
// first element on) or upper (from the last back), its element (i, l) at a[i + l lda] (`direct`) or a[l + i lda],
// only its triangle read, ones on the diagonal where `unit` (unread). Element i of line j of B is
// b[i along + j across].
template <typename T>
struct Leaf {
  const T *a;
  int64_t lda;
  bool direct, forward, unit;
  int size;
  T *b;
  const T *x;
  int64_t along, across, lines;
  T scale;
};

// a b + c rounded once: the leaves' steps spelled out, so that their sequence is the one documented (the products'
// fma, in the same order) whatever the compiler would contract.
__device__ inline float fused(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ inline double fused(double a, double b, double c) { return __fma_rn(a, b, c); }

// The block's triangle into shared memory, zeros elsewhere (and past `size`).
template <typename T>
__device__ void load_triangle(const Leaf<T> &leaf, T (*m)[kLeaf + 1]) {
  const int size = leaf.size;
  for (int e = threadIdx.x; e < kLeaf * kLeaf; e += blockDim.x) {
    const int i = e % kLeaf, l = e / kLeaf;
    T value = T(0);
    if (i < size && l < size && (i == l ? !leaf.unit : leaf.forward ? l < i : l > i))
      value = leaf.direct ? leaf.a[i + l * leaf.lda] : leaf.a[l + i * leaf.lda];
    m[i][l] = i == l && leaf.unit && i < size ? T(1) : value;
  }
  __syncthreads();
}

template <typename T>
__global__ void __launch_bounds__(kLeafThreads) leaf_solve(Leaf<T> leaf) {
  __shared__ T m[kLeaf][kLeaf + 1];
  load_triangle(leaf, m);
  const int size = leaf.size;
  const int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (line >= leaf.lines) return;
  T *b = leaf.b + line * leaf.across;
  T x[kLeaf];
#pragma unroll
  for (int i = 0; i < kLeaf; ++i) x[i] = i < size ? leaf.scale * b[i * leaf.along] : T(0);
  // Each x_i is scale b_i less its terms in the order of l, then divided by the diagonal: the same steps for every
  // line. Past `size`, m and x are zeros, which change nothing.
  if (leaf.forward) {
#pragma unroll
    for (int i = 0; i < kLeaf; ++i) {
      T value = x[i];
#pragma unroll
      for (int l = 0; l < i; ++l) value = fused(-m[i][l], x[l], value);
      x[i] = leaf.unit || i >= size ? value : value / m[i][i];
    }
  } else {
#pragma unroll
    for (int i = kLeaf - 1; i >= 0; --i) {
      T value = x[i];
#pragma unroll
      for (int l = kLeaf - 1; l > i; --l) value = fused(-m[i][l], x[l], value);
      x[i] = leaf.unit || i >= size ? value : value / m[i][i];
    }
  }
#pragma unroll
  for (int i = 0; i < kLeaf; ++i)
    if (i < size) b[i * leaf.along] = x[i];
}

// b := scale M x for `line` (of the thread block's lines), each element's terms summed in the order of l: the same
// steps for every line.
template <typename T>
__device__ void multiply_leaf(const Leaf<T> &leaf, int64_t line) {
  __shared__ T m[kLeaf][kLeaf + 1];
  load_triangle(leaf, m);
  const int size = leaf.size;
  if (line >= leaf.lines) return;
  const T *x_line = leaf.x + line * leaf.across;
  T x[kLeaf];
#pragma unroll
  for (int i = 0; i < kLeaf; ++i) x[i] = i < size ? x_line[i * leaf.along] : T(0);
  T *b = leaf.b + line * leaf.across;
#pragma unroll
  for (int i = 0; i < kLeaf; ++i) {
    T value = T(0);
    // Only the triangle's terms: a term of the other one, 0 times an infinite or NaN x, would be NaN.
#pragma unroll
    for (int l = 0; l < kLeaf; ++l)
      if (l < size && (leaf.forward ? l <= i : l >= i)) value = fused(m[i][l], x[l], value);
    if (i < size) b[i * leaf.along] = leaf.scale * value;
  }
}

// Every block of kLeaf lines of `leaf` (leaf.size lines from its first: the last block may be shorter), each
// multiplied by multiply_leaf: blockIdx.x the block, blockIdx.y the panel's lines.
template <typename T>
__global__ void __launch_bounds__(kLeafThreads) leaf_multiply_blocks(Leaf<T> leaf) {
  const int first = static_cast<int>(blockIdx.x) * kLeaf;
  Leaf<T> block = leaf;
  block.size = leaf.size - first < kLeaf ? leaf.size - first : kLeaf;
  block.a = leaf.a + first + first * leaf.lda;
  block.b = leaf.b + first * leaf.along;
  block.x = leaf.x + first * leaf.along;
  multiply_leaf(block, static_cast<int64_t>(blockIdx.y) * blockDim.x + threadIdx.x);
}

// symm's A: the other triangle written out as the stored one's transpose (the stored one, `upper` or lower, is already
// on the device, ld `order`). Tiles of 32 x 32 through shared memory, so that both the reads and the writes run along
// columns.
constexpr int kFillTile = 32, kFillRows = 8;
template <typename T>
__global__ void __launch_bounds__(kFillTile *kFillRows) mirror_triangle(T *a, int64_t order, bool upper) {
  __shared__ T tile[kFillTile][kFillTile + 1];
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kFillTile, j0 = static_cast<int64_t>(blockIdx.y) * kFillTile;
  // A tile wholly in the stored triangle (diagonal tiles excepted) has nothing to write.
  if (upper ? i0 + kFillTile <= j0 : j0 + kFillTile <= i0) return;
  const auto stored = [&](int64_t i, int64_t j) { return upper ? i <= j : i >= j; };
  // tile[r][c] = A(j0 + c, i0 + r), read along columns of the source tile.
  for (int r = threadIdx.y; r < kFillTile; r += kFillRows) {
    const int64_t row = j0 + threadIdx.x, col = i0 + r;
    if (row < order && col < order && stored(row, col)) tile[r][threadIdx.x] = a[row + col * order];
  }
  __syncthreads();
  for (int r = threadIdx.y; r < kFillTile; r += kFillRows) {
    const int64_t i = i0 + threadIdx.x, j = j0 + r;
    if (i < order && j < order && !stored(i, j)) a[i + j * order] = tile[threadIdx.x][r];  // A(j, i)
  }
}

// composed.cpp's cut: the smallest multiple of `block` times a power of two at least half of `size` (> block).
int64_t halving_cut(int64_t block, int64_t size) {
  int64_t cut = block;
  while (cut < size - cut) cut *= 2;
  return cut;
}

// The first line of each panel, then `lines`: equal panels of at most kPanelLines. Tapered (syrk and syr2k), past
// two panels' worth the first panels grow from an eighth of that by doubling and the last ones shrink back (512,
// 1024, 2048, then the rest in equal panels of at most kPanelLines, then 2048, 1024, 512): nothing is computed until
// the first panel is on the device, nor sent back until the last one is done, and a panel's work covers the
// transfers of one twice its size. Measured at order 16384 on an H200, tapering took 10-15% off syrk and syr2k
// and added 20-28% to trsm (its narrow panels' solves run far below the products' rate), so trsm, trmm and symm
// keep equal panels.
std::vector<int64_t> panel_starts(int64_t lines, bool tapered) {
  std::vector<int64_t> starts;
  const int64_t ramp[] = {kPanelLines / 8, kPanelLines / 4, kPanelLines / 2};
  int64_t ramps = 0;
  for (const int64_t width : ramp) ramps += 2 * width;
  const bool taper = tapered && FASTGEMM_LEVEL3_TAPER != 0 && lines > 2 * kPanelLines;
  int64_t first = 0;
  const auto add = [&](int64_t width) {
    starts.push_back(first);
    first += width;
  };
  if (taper)
    for (const int64_t width : ramp) add(width);
  const int64_t middle = lines - (taper ? ramps : 0);
  const int64_t count = (middle + kPanelLines - 1) / kPanelLines;
  for (int64_t panel = 0; panel < count; ++panel) add(middle / count + (panel < middle % count ? 1 : 0));
  if (taper)
    for (int index = 2; index >= 0; --index) add(ramp[index]);
  starts.push_back(first);
  return starts;
}

// Joins a thread where the scope ends, however it ends.
struct Joined {
  std::thread &thread;
  ~Joined() {
    if (thread.joinable()) thread.join();
  }
};

// Panels 0 .. panels - 1 through the two slots: start(p) packs panel p and enqueues its uploads and work, finish(p)
// brings it back. The next panel is started on a thread of its own while this one comes back on this thread, the
// device working on this one (then the next) meanwhile: the uploads and the work are enqueued only there, the
// downloads only here, and the next panel's slot was this thread's two panels ago, done before. Returns once the
// context's stream is done.
template <typename Start, typename Finish>
Status run_panels(detail::Context &context, int64_t panels, const Start &start, const Finish &finish) {
  FG_RETURN_IF_ERROR(start(0));
  for (int64_t panel = 0; panel < panels; ++panel) {
    Status next = Status::success();
    bool next_threw = false;  // an exception (no memory) on the thread, which must not leave it
    std::thread uploader;
    const Joined joined{uploader};  // joined however this iteration ends, an exception here included
    if (panel + 1 < panels) {
      try {
        uploader = std::thread([&next, &next_threw, &start, &context, following = panel + 1] {
          try {
            detail::DeviceGuard guard;  // a new thread: the handle's device made current there too
            const Status entered = guard.enter(context.device());
            static_cast<void>(next = entered.ok() ? start(following) : entered);
          } catch (...) {
            next_threw = true;
          }
        });
      } catch (...) {
        static_cast<void>(next = start(panel + 1));  // no thread to be had: in turn, before this panel comes back
      }
    }
    const Status back = finish(panel);
    if (uploader.joinable()) uploader.join();
    FG_RETURN_IF_ERROR(back);
    if (next_threw) return Status::failure(StatusCode::alloc_failed, "host memory could not be allocated");
    FG_RETURN_IF_ERROR(next);
  }
  FG_CUDA_CHECK(cudaStreamSynchronize(context.stream()));
  return Status::success();
}

}  // namespace

// Pinned chunks, each with the event of the last transfer that used it, and the packing threads; on the device the
// pipeline's two streams and events, and A's and the panels' buffers while they are small.
struct Level3Resources::State {
  struct Chunk {
    void *host = nullptr;
    cudaEvent_t done = nullptr;
  };
  std::vector<Chunk> up, down;
  std::unique_ptr<CopyPool> pool;
  int next_up = 0;
  cudaStream_t up_stream = nullptr, down_stream = nullptr;
  cudaEvent_t events[kEvents] = {};
  std::vector<cudaEvent_t> feed_events;  // one per group of a fed panel's sends
  void *a = nullptr;
  void *panels[4] = {};
  size_t a_bytes = 0, panel_bytes = 0;
  int panel_count = 0;

  size_t held_bytes() const { return a_bytes + static_cast<size_t>(panel_count) * panel_bytes; }

  // Frees A's and the panels' buffers; `busy` streams are waited for first (a failed call may leave work on them).
  void free_buffers(std::initializer_list<cudaStream_t> busy) {
    if (a == nullptr && panel_count == 0) return;
    for (cudaStream_t stream : busy)
      if (stream != nullptr) (void)cudaStreamSynchronize(stream);
    if (a != nullptr) (void)cudaFree(a);
    for (void *&panel : panels) {
      if (panel != nullptr) (void)cudaFree(panel);
      panel = nullptr;
    }
    a = nullptr;
    a_bytes = panel_bytes = 0;
    panel_count = 0;
  }

  // The streams and events (once), and buffers for A and `count` panels of at least these sizes, the ones held
  // reused where they are large enough. not_supported where the device lacks the memory.
  Status hold(size_t a_need, size_t panel_need, int count) {
    if (up_stream == nullptr) FG_CUDA_CHECK(cudaStreamCreateWithFlags(&up_stream, cudaStreamNonBlocking));
    if (down_stream == nullptr) FG_CUDA_CHECK(cudaStreamCreateWithFlags(&down_stream, cudaStreamNonBlocking));
    for (cudaEvent_t &event : events)
      if (event == nullptr) FG_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    if (a_bytes >= a_need && panel_bytes >= panel_need && panel_count >= count) return Status::success();
    // Small buffers grow to a power of two (1 MiB at least) and never below what is held, so that calls of
    // sizes that come and go (LAPACK's millions of small ones) reallocate a few times in all, not each call.
    const auto grown = [](size_t need, size_t held) {
      size_t size = need;
      if (need <= kKeptDeviceBytes / 4) {
        size = size_t(1) << 20;
        while (size < need) size *= 2;
      }
      return std::max(size, held);
    };
    size_t a_size = grown(a_need, a_bytes), panel_size = grown(panel_need, panel_bytes);
    int panel_total = std::max(count, panel_count);
    if (a_size + static_cast<size_t>(panel_total) * panel_size > kKeptDeviceBytes) {
      a_size = a_need;
      panel_size = panel_need;
      panel_total = count;
    }
    free_buffers({up_stream, down_stream});
    size_t free_bytes = 0, total_bytes = 0;
    FG_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (a_size + static_cast<size_t>(panel_total) * panel_size + kDeviceMargin > free_bytes) {
      a_size = a_need;
      panel_size = panel_need;
      panel_total = count;
    }
    if (a_size + static_cast<size_t>(panel_total) * panel_size + kDeviceMargin > free_bytes)
      return Status::failure(StatusCode::not_supported, "the device has no room for A and two panels of B");
    // Memory another user of the device took since the count above declines the call the same way.
    const auto allocate = [](void **buffer, size_t bytes) -> Status {
      const cudaError_t allocated = cudaMalloc(buffer, bytes);
      if (allocated == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();  // not sticky: cleared, so that the next call does not see it
        *buffer = nullptr;
        return Status::failure(StatusCode::not_supported, "the device has no room for A and two panels of B");
      }
      return detail::cuda_status(allocated, "cudaMalloc");
    };
    Status status = allocate(&a, a_size);
    if (status.ok()) a_bytes = a_size;
    for (int index = 0; status.ok() && index < panel_total; ++index) {
      static_cast<void>(status = allocate(&panels[index], panel_size));
      if (status.ok()) {
        panel_count = index + 1;
        panel_bytes = panel_size;
      }
    }
    if (!status.ok()) free_buffers({});
    return status;
  }

  // At least `count` feed events.
  Status feed_events_for(size_t count) {
    feed_events.reserve(count);
    while (feed_events.size() < count) {
      cudaEvent_t event = nullptr;
      FG_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
      feed_events.push_back(event);
    }
    return Status::success();
  }

  ~State() {
    free_buffers({up_stream, down_stream});
    for (cudaEvent_t event : events)
      if (event != nullptr) (void)cudaEventDestroy(event);
    for (cudaEvent_t event : feed_events) (void)cudaEventDestroy(event);
    for (cudaStream_t stream : {up_stream, down_stream})
      if (stream != nullptr) (void)cudaStreamDestroy(stream);
    for (std::vector<Chunk> *ring : {&up, &down})
      for (Chunk &chunk : *ring) {
        if (chunk.done != nullptr) {
          (void)cudaEventSynchronize(chunk.done);
          (void)cudaEventDestroy(chunk.done);
        }
        if (chunk.host != nullptr) (void)cudaFreeHost(chunk.host);
      }
  }

  Status ready() {
    if (pool == nullptr) {
      const int hardware = static_cast<int>(std::thread::hardware_concurrency());
      pool = std::make_unique<CopyPool>(std::clamp(hardware - 2, 0, detail::max_pool_threads));
    }
    for (std::vector<Chunk> *ring : {&up, &down}) {
      while (static_cast<int>(ring->size()) < kChunks) {
        Chunk chunk;
        FG_CUDA_CHECK(cudaEventCreateWithFlags(&chunk.done, cudaEventDisableTiming));
        const cudaError_t allocated = cudaHostAlloc(&chunk.host, static_cast<size_t>(kChunkBytes), 0);
        if (allocated != cudaSuccess) {
          (void)cudaEventDestroy(chunk.done);
          return detail::cuda_status(allocated, "cudaHostAlloc");
        }
        ring->push_back(chunk);
      }
    }
    return Status::success();
  }

  // `lines` host lines of `length` elements, `src_ld` apart, to the device at `dst`, `dst_ld` apart, through the
  // chunks, each packed by the pool once the transfer that last used it is done; enqueued on `stream`.
  template <typename T>
  Status upload(cudaStream_t stream, T *dst, int64_t dst_ld, const T *src, int64_t src_ld, int64_t lines,
                int64_t length) {
    const int64_t per_chunk = kChunkBytes / static_cast<int64_t>(sizeof(T)) / length;
    for (int64_t first = 0; first < lines; first += per_chunk) {
      const int64_t count = std::min(per_chunk, lines - first);
      Chunk &chunk = up[next_up];
      next_up = (next_up + 1) % kChunks;
      FG_CUDA_CHECK(cudaEventSynchronize(chunk.done));
      pool->copy(static_cast<T *>(chunk.host), length, src + first * src_ld, src_ld, count, length);
      FG_CUDA_CHECK(cudaMemcpy2DAsync(dst + first * dst_ld, static_cast<size_t>(dst_ld) * sizeof(T), chunk.host,
                                      static_cast<size_t>(length) * sizeof(T), static_cast<size_t>(length) * sizeof(T),
                                      static_cast<size_t>(count), cudaMemcpyHostToDevice, stream));
      FG_CUDA_CHECK(cudaEventRecord(chunk.done, stream));
    }
    return Status::success();
  }

  // The reverse, on `stream` (which waits for the work first): up to kChunks transfers ahead of the unpacking.
  // *unpacked counts the lines written to the host.
  template <typename T>
  Status download(cudaStream_t stream, T *dst, int64_t dst_ld, const T *src, int64_t src_ld, int64_t lines,
                  int64_t length, int64_t *unpacked) {
    return download_with(stream, src, src_ld, lines, length, unpacked,
                         [&](int64_t first, int64_t rows, const T *chunk) {
                           pool->copy(dst + first * dst_ld, dst_ld, chunk, length, rows, length);
                         });
  }

  // The square block of `size` lines at `src` (ld src_ld) into `dst` (ld dst_ld), only its `upper` or lower triangle
  // (the diagonal included) written, a line at a time on this thread.
  template <typename T>
  Status download_triangle(cudaStream_t stream, T *dst, int64_t dst_ld, const T *src, int64_t src_ld, int64_t size,
                           bool upper, int64_t *unpacked) {
    return download_with(stream, src, src_ld, size, size, unpacked, [&](int64_t first, int64_t rows, const T *chunk) {
      for (int64_t line = first; line < first + rows; ++line) {
        const int64_t from = upper ? 0 : line, to = upper ? line + 1 : size;
        std::memcpy(dst + from + line * dst_ld, chunk + (line - first) * size + from,
                    static_cast<size_t>(to - from) * sizeof(T));
      }
    });
  }

  // `lines` lines of `length` elements at `src` (ld src_ld) through the chunks, each unpacked by
  // unpack(first line, lines, the chunk's elements).
  template <typename T, typename Unpack>
  Status download_with(cudaStream_t stream, const T *src, int64_t src_ld, int64_t lines, int64_t length,
                       int64_t *unpacked, const Unpack &unpack) {
    *unpacked = 0;
    const int64_t per_chunk = kChunkBytes / static_cast<int64_t>(sizeof(T)) / length;
    const int64_t count = (lines + per_chunk - 1) / per_chunk;
    const auto enqueue = [&](int64_t index) -> Status {
      const int64_t first = index * per_chunk, rows = std::min(per_chunk, lines - first);
      Chunk &chunk = down[index % kChunks];
      FG_CUDA_CHECK(cudaMemcpy2DAsync(chunk.host, static_cast<size_t>(length) * sizeof(T), src + first * src_ld,
                                      static_cast<size_t>(src_ld) * sizeof(T), static_cast<size_t>(length) * sizeof(T),
                                      static_cast<size_t>(rows), cudaMemcpyDeviceToHost, stream));
      FG_CUDA_CHECK(cudaEventRecord(chunk.done, stream));
      return Status::success();
    };
    for (int64_t index = 0; index < std::min<int64_t>(count, kChunks); ++index) FG_RETURN_IF_ERROR(enqueue(index));
    for (int64_t index = 0; index < count; ++index) {
      const int64_t first = index * per_chunk, rows = std::min(per_chunk, lines - first);
      Chunk &chunk = down[index % kChunks];
      FG_CUDA_CHECK(cudaEventSynchronize(chunk.done));
      unpack(first, rows, static_cast<const T *>(chunk.host));
      *unpacked += rows;
      if (index + kChunks < count) FG_RETURN_IF_ERROR(enqueue(index + kChunks));
    }
    return Status::success();
  }
};

Level3Resources::Level3Resources() : state_(std::make_unique<State>()) {}
Level3Resources::~Level3Resources() = default;

namespace {

const char *routine_name(Level3Routine routine) {
  switch (routine) {
    case Level3Routine::trsm: return "trsm";
    case Level3Routine::trmm: return "trmm";
    case Level3Routine::symm: return "symm";
    case Level3Routine::syrk: return "syrk";
    case Level3Routine::syr2k: return "syr2k";
  }
  return "?";
}

// Where a call's time goes, when FASTGEMM_LEVEL3_PROFILE names a file (tuning, not for production): spans of the
// streams' work (A's upload, each panel's upload, work and download) and of every kernel and product of the panels'
// work, each between two timing events, appended to the file as the call ends. The events cost a microsecond or two
// of the device's time each, so the sums of many small spans read a little high.
class Timeline {
 public:
  Timeline() {
    static const char *const path = [] {
      const char *text = std::getenv("FASTGEMM_LEVEL3_PROFILE");
      return text != nullptr && *text != '\0' ? text : nullptr;
    }();
    path_ = path;
    started_ = std::chrono::steady_clock::now();
  }
  Timeline(const Timeline &) = delete;
  Timeline &operator=(const Timeline &) = delete;
  ~Timeline() {
    for (const Span &span : spans_)
      for (cudaEvent_t event : {span.begin, span.end})
        if (event != nullptr) (void)cudaEventDestroy(event);
  }

  // A span of `stream`'s work from now: its name (a literal), panel (-1: none) and size; -1 when off. Any thread.
  int begin(cudaStream_t stream, const char *name, int64_t panel, int64_t size) {
    if (path_ == nullptr) return -1;
    const std::lock_guard<std::mutex> lock(mutex_);
    Span span{name, panel, size, nullptr, nullptr};
    if (cudaEventCreate(&span.begin) != cudaSuccess || cudaEventRecord(span.begin, stream) != cudaSuccess) {
      (void)cudaGetLastError();
      if (span.begin != nullptr) (void)cudaEventDestroy(span.begin);
      return -1;
    }
    spans_.push_back(span);
    return static_cast<int>(spans_.size()) - 1;
  }
  void end(cudaStream_t stream, int id) {
    if (id < 0) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    Span &span = spans_[static_cast<size_t>(id)];
    if (cudaEventCreate(&span.end) != cudaSuccess || cudaEventRecord(span.end, stream) != cudaSuccess) {
      (void)cudaGetLastError();
      if (span.end != nullptr) (void)cudaEventDestroy(span.end);
      span.end = nullptr;
    }
  }

  // Appends the call's spans to the file: the streams' spans one a line, in ms from the first span's start; the
  // kernels' and products' summed by name and size. Nothing when off or when the events cannot be read.
  void write(const char *routine, int64_t m, int64_t n, size_t element_bytes) {
    if (path_ == nullptr || spans_.empty()) return;
    const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started_).count();
    const cudaEvent_t zero = spans_.front().begin;
    std::string text = std::string(element_bytes == sizeof(double) ? "d" : "s") + routine + " m=" + std::to_string(m) +
                       " n=" + std::to_string(n) + ": " + std::to_string(wall) + " ms on the host\n";
    std::map<std::pair<std::string, int64_t>, std::pair<int64_t, double>> sums;
    for (const Span &span : spans_) {
      float from = 0.0f, to = 0.0f;
      if (span.end == nullptr || cudaEventSynchronize(span.end) != cudaSuccess ||
          cudaEventElapsedTime(&from, zero, span.begin) != cudaSuccess ||
          cudaEventElapsedTime(&to, zero, span.end) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
      }
      if (std::strcmp(span.name, "leaf") == 0 || std::strcmp(span.name, "leaves") == 0 ||
          std::strcmp(span.name, "product") == 0 || std::strcmp(span.name, "A part") == 0 ||
          std::strcmp(span.name, "B part") == 0) {
        auto &sum = sums[{span.name, span.size}];
        sum.first += 1;
        sum.second += to - from;
      } else {
        char line[160];
        std::snprintf(line, sizeof line, "  %-8s panel %3lld (%lld lines): %9.3f .. %9.3f ms\n", span.name,
                      static_cast<long long>(span.panel), static_cast<long long>(span.size), from, to);
        text += line;
      }
    }
    for (const auto &[key, sum] : sums) {
      char line[160];
      std::snprintf(line, sizeof line, "  %-8s size %6lld: %6lld spans, %9.3f ms in all\n", key.first.c_str(),
                    static_cast<long long>(key.second), static_cast<long long>(sum.first), sum.second);
      text += line;
    }
    static std::mutex file_mutex;
    const std::lock_guard<std::mutex> lock(file_mutex);
    if (FILE *file = std::fopen(path_, "a")) {
      std::fputs(text.c_str(), file);
      std::fclose(file);
    }
  }

 private:
  struct Span {
    const char *name;
    int64_t panel, size;
    cudaEvent_t begin, end;
  };
  const char *path_ = nullptr;
  std::chrono::steady_clock::time_point started_;
  std::mutex mutex_;
  std::vector<Span> spans_;
};

// Column-major C (m x n) := alpha op(A) op(B) + beta C through `product`, as the row-major product
// C^T = op(B)^T op(A)^T.
template <typename T>
Status column_major(const DeviceProduct<T> &product, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                    T alpha, const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c, int64_t ldc) {
  BasicGemmProblem<T> p;
  p.m = n;
  p.n = m;
  p.k = k;
  p.alpha = alpha;
  p.beta = beta;
  p.a = detail::BasicGemmOperand<T>{b, ldb, 0, trans_b};
  p.b = detail::BasicGemmOperand<T>{a, lda, 0, trans_a};
  p.c = c;
  p.ldc = ldc;
  return product(p);
}

// One panel's trsm or trmm on the device: `lines` independent lines of B at `panel` (column-major, m x lines with ld m
// for side L; lines x n with ld lines for side R), A's stored triangle at `a` (order x order, ld order; the other
// triangle never read).
template <typename T>
class PanelTriangle {
 public:
  PanelTriangle(const Level3Call<T> &call, const T *a, int64_t order, const DeviceProduct<T> &product,
                cudaStream_t stream, Timeline &timeline)
      : call_(call), a_(a), order_(order), product_(product), stream_(stream), timeline_(timeline) {
    left_ = call.side == 'L';
    const bool lower = (call.uplo == 'L') != (call.transa == 'T');
    forward_ = left_ ? lower : !lower;
    // Side L solves op(A) x = b per column; side R x op(A) = b per row, that is op(A)^T x = b: M(i, l) is A(i, l)
    // where op and the side's transpose cancel, else A(l, i).
    direct_ = left_ == (call.transa == 'N');
  }

  // The panel the next calls work on, for the timeline.
  void set_panel(int64_t panel) { panel_index_ = panel; }

  // Where the next call's A and panel are still on the host (a call's first panel): the recursion brings each block
  // of A and each run of the panel's lines to the device as it first reads them, so that the work starts with the
  // first blocks instead of after all of A. The blocks: each diagonal block where the recursion enters one of at most
  // `piece` lines, whole (its stored triangle), and each block between two halves above that size.
  struct Feed {
    int64_t piece;
    // A's stored block at (row, col), rows x cols, or (triangle) the stored triangle of the diagonal block of `rows`
    // lines from `row` (col == row, cols == rows).
    std::function<Status(int64_t row, int64_t rows, int64_t col, int64_t cols, bool triangle)> block;
    // The panel's lines [first, first + count): rows of B's columns for side L, columns of B's rows for side R.
    std::function<Status(int64_t first, int64_t count)> lines;
    // What was sent, made ready for the work that follows on the compute stream.
    std::function<Status()> ready;
  };
  void set_feed(const Feed *feed) {
    feed_ = feed;
    fed_.assign(feed != nullptr ? static_cast<size_t>(order_) : 0, 0);
    inside_ = false;
  }
  // Dry: the next calls walk the recursion, feed included, and launch nothing.
  void set_dry(bool dry) { dry_ = dry; }

  // trsm in place.
  Status solve(T *panel, int64_t lines) {
    panel_ = panel;
    from_ = panel;
    lines_ = lines;
    ld_ = left_ ? call_.m : lines;
    return solve_lines(0, order_, false);
  }

  // trmm from `from` into `panel` (the same layout).
  Status multiply(const T *from, T *panel, int64_t lines) {
    panel_ = panel;
    from_ = from;
    lines_ = lines;
    ld_ = left_ ? call_.m : lines;
    return multiply_lines(0, order_);
  }

 private:
  // Element (row, col) of op(A), as the products read it.
  const T *op_block(int64_t row, int64_t col) const {
    return call_.transa == 'N' ? a_ + row + col * order_ : a_ + col + row * order_;
  }
  // The lines [first, ...) of the panel: rows for side L, columns for side R.
  T *at(int64_t first) const { return left_ ? panel_ + first : panel_ + first * ld_; }
  const T *from(int64_t first) const { return left_ ? from_ + first : from_ + first * ld_; }

  Status product(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T *a, int64_t lda,
                 const T *b, int64_t ldb, T beta, T *c, int64_t ldc) const {
    return column_major(product_, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }

  // With a feed, the panel's lines [first, first + count) not yet on the device, sent.
  Status feed_lines(int64_t first, int64_t count) {
    for (int64_t line = first; line < first + count;) {
      if (fed_[static_cast<size_t>(line)] != 0) {
        ++line;
        continue;
      }
      int64_t end = line;
      while (end < first + count && fed_[static_cast<size_t>(end)] == 0) fed_[static_cast<size_t>(end++)] = 1;
      FG_RETURN_IF_ERROR(feed_->lines(line, end - line));
      line = end;
    }
    return Status::success();
  }

  // With a feed, and outside the diagonal blocks it sends whole: M's block (target, source) and the panel's lines that
  // the update reads (its source, and its target where it is the solve's own), sent before the update.
  Status feed_update(int64_t target, int64_t target_size, int64_t source, int64_t source_size, bool reads_target) {
    if (feed_ == nullptr || inside_) return Status::success();
    FG_RETURN_IF_ERROR(feed_lines(source, source_size));
    if (reads_target) FG_RETURN_IF_ERROR(feed_lines(target, target_size));
    // A's storage holds M's block (target, source) as it is (direct) or transposed.
    FG_RETURN_IF_ERROR(direct_ ? feed_->block(target, target_size, source, source_size, false)
                               : feed_->block(source, source_size, target, target_size, false));
    return feed_->ready();
  }

  // `body` over the lines [first, first + size): with a feed, where they are a diagonal block that it sends whole, that
  // block and those lines sent first.
  template <typename Body>
  Status entered(int64_t first, int64_t size, const Body &body) {
    if (feed_ == nullptr || inside_ || size > feed_->piece) return body();
    FG_RETURN_IF_ERROR(feed_->block(first, size, first, size, true));
    FG_RETURN_IF_ERROR(feed_lines(first, size));
    FG_RETURN_IF_ERROR(feed_->ready());
    inside_ = true;
    const Status status = body();
    inside_ = false;
    return status;
  }

  // The panel's lines `target` scaled by beta, plus alpha times op(A)'s block times the lines `source` of `from`.
  Status update(int64_t target, int64_t target_size, int64_t source, int64_t source_size, T alpha, T beta) {
    FG_RETURN_IF_ERROR(feed_update(target, target_size, source, source_size, from_ == panel_));
    if (dry_) return Status::success();
    const bool trans = call_.transa == 'T';
    const int span = timeline_.begin(stream_, "product", panel_index_, source_size);
    const Status status = left_ ? product(trans, false, target_size, lines_, source_size, alpha,
                                          op_block(target, source), order_, from(source), ld_, beta, at(target), ld_)
                                : product(false, trans, lines_, target_size, source_size, alpha, from(source), ld_,
                                          op_block(source, target), order_, beta, at(target), ld_);
    timeline_.end(stream_, span);
    return status;
  }

  template <typename Kernel>
  Status leaf(Kernel kernel, int64_t first, int64_t size, T scale) const {
    if (dry_) return Status::success();
    const Leaf<T> leaf = leaf_at(first, size, scale);
    const dim3 grid(static_cast<unsigned>((lines_ + kLeafThreads - 1) / kLeafThreads));
    const int span = timeline_.begin(stream_, "leaf", panel_index_, size);
    const Status status = detail::launch(kernel, grid, dim3(kLeafThreads), 0, stream_, leaf);
    timeline_.end(stream_, span);
    return status;
  }

  // A leaf's description: M's block and the panel's lines from line `first`, `size` long.
  Leaf<T> leaf_at(int64_t first, int64_t size, T scale) const {
    Leaf<T> leaf{};
    leaf.a = a_ + first + first * order_;
    leaf.lda = order_;
    leaf.direct = direct_;
    leaf.forward = forward_;
    leaf.unit = call_.diag == 'U';
    leaf.size = static_cast<int>(size);
    leaf.b = at(first);
    leaf.x = from(first);
    leaf.along = left_ ? 1 : ld_;
    leaf.across = left_ ? ld_ : 1;
    leaf.lines = lines_;
    leaf.scale = scale;
    return leaf;
  }

  // As composed_trsm's: the lines [first, first + size), alpha not yet applied where `scaled` is false.
  Status solve_lines(int64_t first, int64_t size, bool scaled) {
    return entered(first, size, [&] { return solve_body(first, size, scaled); });
  }
  Status solve_body(int64_t first, int64_t size, bool scaled) {
    const T scale = scaled ? T(1) : call_.alpha;
    if (size <= kLeaf) return leaf(leaf_solve<T>, first, size, scale);
    const int64_t cut = halving_cut(kLeaf, size);
    const int64_t head = first, tail = first + cut, tail_size = size - cut;
    if (forward_) {
      FG_RETURN_IF_ERROR(solve_lines(head, cut, scaled));
      FG_RETURN_IF_ERROR(update(tail, tail_size, head, cut, T(-1), scale));
      return solve_lines(tail, tail_size, true);
    }
    FG_RETURN_IF_ERROR(solve_lines(tail, tail_size, scaled));
    FG_RETURN_IF_ERROR(update(head, cut, tail, tail_size, T(-1), scale));
    return solve_lines(head, cut, true);
  }

  // The lines [first, first + size) of the product, halved at the same cuts: each half's own triangle, then the
  // block between them (below the diagonal for a lower M, above it for an upper) added to the later half (lower) or
  // the earlier (upper). Half the work of one product with A written out whole, and no term of the other triangle.
  // trmm's leaves write their lines before any product adds to them and read only A and the panel's input, so the
  // leaves of a node (a piece the feed sends whole, else the whole order) go in one launch before its products: every
  // element's steps, and their order, as with a launch per leaf.
  Status multiply_lines(int64_t first, int64_t size) {
    return entered(first, size, [&]() -> Status {
      if (batched_ || size > (feed_ != nullptr ? feed_->piece : order_)) return multiply_body(first, size);
      FG_RETURN_IF_ERROR(all_leaves(first, size));
      batched_ = true;
      const Status status = multiply_body(first, size);
      batched_ = false;
      return status;
    });
  }
  Status all_leaves(int64_t first, int64_t size) const {
    if (dry_) return Status::success();
    const Leaf<T> all = leaf_at(first, size, call_.alpha);
    const dim3 grid(static_cast<unsigned>((size + kLeaf - 1) / kLeaf),
                    static_cast<unsigned>((lines_ + kLeafThreads - 1) / kLeafThreads));
    const int span = timeline_.begin(stream_, "leaves", panel_index_, size);
    const Status status = detail::launch(leaf_multiply_blocks<T>, grid, dim3(kLeafThreads), 0, stream_, all);
    timeline_.end(stream_, span);
    return status;
  }
  Status multiply_body(int64_t first, int64_t size) {
    if (size <= kLeaf) return Status::success();  // multiplied with its node's leaves (all_leaves)
    const int64_t cut = halving_cut(kLeaf, size);
    const int64_t head = first, tail = first + cut, tail_size = size - cut;
    FG_RETURN_IF_ERROR(multiply_lines(head, cut));
    FG_RETURN_IF_ERROR(multiply_lines(tail, tail_size));
    if (forward_) return update(tail, tail_size, head, cut, call_.alpha, T(1));
    return update(head, cut, tail, tail_size, call_.alpha, T(1));
  }

  const Level3Call<T> &call_;
  const T *a_;
  int64_t order_;
  const DeviceProduct<T> &product_;
  cudaStream_t stream_;
  Timeline &timeline_;
  int64_t panel_index_ = -1;
  bool left_ = true, forward_ = true, direct_ = true;
  T *panel_ = nullptr;
  const T *from_ = nullptr;
  int64_t lines_ = 0, ld_ = 0;
  const Feed *feed_ = nullptr;
  std::vector<char> fed_;  // per line of the panel, with a feed: on the device
  bool inside_ = false;    // within a diagonal block the feed sent whole
  bool dry_ = false;
  bool batched_ = false;  // trmm: within a node whose leaves were launched at once
};

}  // namespace

// However a call ends, buffers larger than a handle keeps are freed; after a failure all of them, once the work left
// on them is done.
struct Trim {
  Level3Resources::State &state;
  const bool &succeeded;
  cudaStream_t compute;
  ~Trim() {
    if (!succeeded || state.held_bytes() > kKeptDeviceBytes)
      state.free_buffers({state.up_stream, state.down_stream, compute});
  }
};

// syrk and syr2k: C := alpha X X^T + beta C, or alpha (X Y^T + Y X^T) + beta C, X and Y the n x k matrices A and B
// (trans 'N') or their transposes ('T'), only C's triangle `uplo` written. X (and Y) go to the device once, by the
// lines of C's panels (of its columns), in the order the panels are computed: from the last for a lower C, whose
// panel of columns [c0, c1) takes X's lines [c0, n), from the first for an upper one ([0, c1)). A panel of C is sent
// (where beta != 0) and computed whole, its rows past the diagonal block (or before it) and that block's triangle
// sent back. *partial says some of C was written.
template <typename T>
Status device_rank_k(detail::Context &context, Level3Resources &resources, const DeviceProduct<T> &product,
                     const Level3Call<T> &call, bool *partial) {
  *partial = false;
  const bool two = call.routine == Level3Routine::syr2k, trans = call.transa == 'T', lower = call.uplo == 'L';
  const int64_t order = call.m, depth = call.n;
  const int64_t width = std::min(order, kPanelLines);
  // Staged lines: C's columns (order long at most); X's, its columns cut to a panel's lines (trans N) or its
  // columns whole, depth long (trans T).
  const int64_t chunk_elements = kChunkBytes / static_cast<int64_t>(sizeof(T));
  if (order > chunk_elements || (trans && depth > chunk_elements))
    return Status::failure(StatusCode::not_supported, "order or depth past the staging");
  const size_t x_elements = static_cast<size_t>(order) * static_cast<size_t>(depth);
  const size_t x_bytes = (two ? 2 : 1) * x_elements * sizeof(T);
  const size_t panel_bytes = static_cast<size_t>(order) * static_cast<size_t>(width) * sizeof(T);
  Level3Resources::State &state = resources.state();
  const cudaStream_t compute = context.stream();
  bool succeeded = false;
  const Trim trim{state, succeeded, compute};
  FG_RETURN_IF_ERROR(state.hold(x_bytes, panel_bytes, 2));
  FG_RETURN_IF_ERROR(state.ready());
  const cudaStream_t up_stream = state.up_stream, down_stream = state.down_stream;
  cudaEvent_t *const events = state.events;
  // X's line i at x + i (ld order) for trans N, at x + i depth (ld depth) for T.
  T *const x = static_cast<T *>(state.a);
  T *const y = two ? x + x_elements : x;
  T *const c[2] = {static_cast<T *>(state.panels[0]), static_cast<T *>(state.panels[1])};
  const std::vector<int64_t> starts = panel_starts(order, true);
  const auto panels = static_cast<int64_t>(starts.size()) - 1;
  Timeline timeline;
  // The panel computed `index`-th: columns [c0, c1), rows [r0, r0 + rows) of C.
  struct Panel {
    int64_t c0, c1, r0, rows;
  };
  const auto panel_at = [&](int64_t index) {
    const int64_t p = lower ? panels - 1 - index : index;
    const int64_t c0 = starts[p], c1 = starts[p + 1];
    return Panel{c0, c1, lower ? c0 : 0, lower ? order - c0 : c1};
  };
  const auto send_lines = [&](const T *host, int64_t ld, T *device, int64_t first, int64_t count) {
    return trans ? state.upload(up_stream, device + first * depth, depth, host + first * ld, ld, count, depth)
                 : state.upload(up_stream, device + first, order, host + first, ld, depth, count);
  };
  // The panel's rows of `from` times the panel's lines of `with`, transposed, into the panel.
  const auto term = [&](const T *from, const T *with, const Panel &q, T beta, T *panel) {
    const int64_t w = q.c1 - q.c0;
    return trans ? column_major(product, true, false, q.rows, w, depth, call.alpha, from + q.r0 * depth, depth,
                                with + q.c0 * depth, depth, beta, panel, q.rows)
                 : column_major(product, false, true, q.rows, w, depth, call.alpha, from + q.r0, order, with + q.c0,
                                order, beta, panel, q.rows);
  };
  const auto start = [&](int64_t index) -> Status {
    const int slot = static_cast<int>(index % 2);
    const Panel q = panel_at(index);
    const int64_t w = q.c1 - q.c0;
    if (index >= 2) FG_CUDA_CHECK(cudaStreamWaitEvent(up_stream, events[kDownloaded + slot], 0));
    const int up_span = timeline.begin(up_stream, "up", index, w);
    FG_RETURN_IF_ERROR(send_lines(call.A, call.lda, x, q.c0, w));
    if (two) FG_RETURN_IF_ERROR(send_lines(call.B, call.ldb, y, q.c0, w));
    if (call.beta != T(0))
      FG_RETURN_IF_ERROR(
          state.upload(up_stream, c[slot], q.rows, call.C + q.r0 + q.c0 * call.ldc, call.ldc, w, q.rows));
    timeline.end(up_stream, up_span);
    FG_CUDA_CHECK(cudaEventRecord(events[kUploaded + slot], up_stream));
    FG_CUDA_CHECK(cudaStreamWaitEvent(compute, events[kUploaded + slot], 0));
    const int work_span = timeline.begin(compute, "work", index, w);
    FG_RETURN_IF_ERROR(term(x, y, q, call.beta, c[slot]));
    if (two) FG_RETURN_IF_ERROR(term(y, x, q, T(1), c[slot]));
    timeline.end(compute, work_span);
    FG_CUDA_CHECK(cudaEventRecord(events[kComputed + slot], compute));
    return Status::success();
  };
  const auto finish = [&](int64_t index) -> Status {
    const int slot = static_cast<int>(index % 2);
    const Panel q = panel_at(index);
    const int64_t w = q.c1 - q.c0;
    FG_CUDA_CHECK(cudaStreamWaitEvent(down_stream, events[kComputed + slot], 0));
    const int down_span = timeline.begin(down_stream, "down", index, w);
    // The rows off the diagonal block: below it for a lower C, above it for an upper one.
    const int64_t off_first = lower ? q.c1 : 0, off_rows = lower ? order - q.c1 : q.c0;
    const int64_t diagonal = q.c0 - q.r0;  // the diagonal block's first row in the panel
    int64_t unpacked = 0;
    Status back = Status::success();
    if (off_rows > 0) {
      static_cast<void>(back = state.download(down_stream, call.C + off_first + q.c0 * call.ldc, call.ldc,
                                              c[slot] + (off_first - q.r0), q.rows, w, off_rows, &unpacked));
      *partial = *partial || unpacked > 0;
      FG_RETURN_IF_ERROR(back);
    }
    static_cast<void>(back = state.download_triangle(down_stream, call.C + q.c0 + q.c0 * call.ldc, call.ldc,
                                                     c[slot] + diagonal, q.rows, w, !lower, &unpacked));
    *partial = *partial || unpacked > 0;
    FG_RETURN_IF_ERROR(back);
    timeline.end(down_stream, down_span);
    FG_CUDA_CHECK(cudaEventRecord(events[kDownloaded + slot], down_stream));
    return Status::success();
  };
  FG_RETURN_IF_ERROR(run_panels(context, panels, start, finish));
  succeeded = true;
  timeline.write(routine_name(call.routine), call.m, call.n, sizeof(T));
  *partial = false;  // a failure's mark only
  return Status::success();
}

template <typename T>
Status device_level3(detail::Context &context, Level3Resources &resources, const DeviceProduct<T> &product,
                     const Level3Call<T> &call, int64_t *done, bool *partial) {
  *done = 0;
  *partial = false;
  if (call.routine == Level3Routine::syrk || call.routine == Level3Routine::syr2k)
    return device_rank_k(context, resources, product, call, partial);
  const bool left = call.side == 'L';
  const bool solve = call.routine == Level3Routine::trsm;
  const bool reads_c = call.routine == Level3Routine::symm && call.beta != T(0);
  const int64_t order = left ? call.m : call.n, lines = left ? call.n : call.m;
  const int64_t width = std::min(lines, kPanelLines);
  // A panel's lines, uploaded and downloaded whole through the chunks: side L's are B's columns (m long), side R's
  // B's columns cut to the panel's rows (width long). A's are its columns.
  if (order > kChunkBytes / static_cast<int64_t>(sizeof(T)) || width > kChunkBytes / static_cast<int64_t>(sizeof(T)))
    return Status::failure(StatusCode::not_supported, "order " + std::to_string(order) + " is past the staging");
  const size_t a_bytes = static_cast<size_t>(order) * static_cast<size_t>(order) * sizeof(T);
  const size_t panel_bytes = static_cast<size_t>(order) * static_cast<size_t>(width) * sizeof(T);
  const int buffers_per_slot = solve ? 1 : 2;  // trsm in place; trmm and symm from one buffer into another
  Level3Resources::State &state = resources.state();
  const cudaStream_t compute = context.stream();
  bool succeeded = false;
  const Trim trim{state, succeeded, compute};
  FG_RETURN_IF_ERROR(state.hold(a_bytes, panel_bytes, 2 * buffers_per_slot));
  FG_RETURN_IF_ERROR(state.ready());
  const cudaStream_t up_stream = state.up_stream, down_stream = state.down_stream;
  cudaEvent_t *const events = state.events;
  T *const a = static_cast<T *>(state.a);
  T *const in[2] = {static_cast<T *>(state.panels[0]), static_cast<T *>(state.panels[1])};
  T *const out[2] = {solve ? nullptr : static_cast<T *>(state.panels[2]),
                     solve ? nullptr : static_cast<T *>(state.panels[3])};

  Timeline timeline;
  // The stored triangle of A's diagonal block of `size` lines from `first`, by blocks of columns: for uplo L rows
  // [column, first + size) of each, for U rows [first, column + 1) (the few elements of the other triangle that this
  // takes are never read by trsm and trmm, and symm's mirror overwrites them).
  const auto send_triangle = [&](int64_t first, int64_t size) -> Status {
    for (int64_t column = first; column < first + size; column += kTriangleColumns) {
      const int64_t columns = std::min(kTriangleColumns, first + size - column);
      const int64_t row = call.uplo == 'L' ? column : first;
      const int64_t rows = call.uplo == 'L' ? first + size - column : column + columns - first;
      FG_RETURN_IF_ERROR(state.upload(up_stream, a + row + column * order, order, call.A + row + column * call.lda,
                                      call.lda, columns, rows));
    }
    return Status::success();
  };
  // Large trsm and trmm send A and their first panel as its work reads them (fed); the others all of A first.
  const bool fed = FASTGEMM_LEVEL3_FEED != 0 && call.routine != Level3Routine::symm && order >= kFeedOrder;
  if (!fed) {
    const int a_span = timeline.begin(up_stream, "A up", -1, order);
    FG_RETURN_IF_ERROR(send_triangle(0, order));
    timeline.end(up_stream, a_span);
    FG_CUDA_CHECK(cudaEventRecord(events[kAReady], up_stream));
    FG_CUDA_CHECK(cudaStreamWaitEvent(compute, events[kAReady], 0));
  }
  if (call.routine == Level3Routine::symm) {
    const int64_t tiles = (order + kFillTile - 1) / kFillTile;
    const int span = timeline.begin(compute, "mirror", -1, order);
    FG_RETURN_IF_ERROR(detail::launch(mirror_triangle<T>,
                                      dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(tiles)),
                                      dim3(kFillTile, kFillRows), 0, compute, a, order, call.uplo == 'U'));
    timeline.end(compute, span);
  }

  PanelTriangle<T> triangle(call, a, order, product, compute, timeline);
  const std::vector<int64_t> starts = panel_starts(lines, false);
  const auto panels = static_cast<int64_t>(starts.size()) - 1;
  // The first panel's feed (panel 0's buffer; its lines, and A's blocks, each sent on the upload stream and waited for
  // by the compute stream before the work that reads them).
  const int64_t first_count = panels > 0 ? starts[1] - starts[0] : 0;
  typename PanelTriangle<T>::Feed feed;
  feed.piece = order / kFeedPieces;
  feed.block = [&](int64_t row, int64_t rows, int64_t col, int64_t cols, bool diagonal) -> Status {
    const int span = timeline.begin(up_stream, "A part", -1, rows);
    const Status status = diagonal ? send_triangle(row, rows)
                                   : state.upload(up_stream, a + row + col * order, order,
                                                  call.A + row + col * call.lda, call.lda, cols, rows);
    timeline.end(up_stream, span);
    return status;
  };
  feed.lines = [&](int64_t first, int64_t count) -> Status {
    // The first panel's lines [first, first + count): side L rows of B's first columns, side R columns of its first
    // rows (laid out as start's load lays them).
    const int span = timeline.begin(up_stream, "B part", -1, count);
    const Status status =
        left ? state.upload(up_stream, in[0] + first, call.m, call.B + first, call.ldb, first_count, count)
             : state.upload(up_stream, in[0] + first * first_count, first_count, call.B + first * call.ldb, call.ldb,
                            count, first_count);
    timeline.end(up_stream, span);
    return status;
  };
  // The first panel's work (`work`, fed): the recursion first walks it dry to list its sends in the order its work
  // reads them, grouped by the points where the work waits for them. A thread of its own then packs and enqueues the
  // groups one after another, each closed by an event, while this thread enqueues the work, which waits at each point
  // until the group is enqueued (on the host) and done (on the device): the packing of A and of the panel and the
  // enqueueing of the work's kernels and products, each milliseconds of the host's time, overlap. With no thread to
  // be had, every group is enqueued first.
  struct Send {
    bool lines, diagonal;
    int64_t row, rows, col, cols;
  };
  const auto fed_work = [&](const std::function<Status()> &work) -> Status {
    std::vector<std::vector<Send>> groups(1);
    typename PanelTriangle<T>::Feed plan;
    plan.piece = feed.piece;
    plan.block = [&](int64_t row, int64_t rows, int64_t col, int64_t cols, bool diagonal) {
      groups.back().push_back({false, diagonal, row, rows, col, cols});
      return Status::success();
    };
    plan.lines = [&](int64_t first, int64_t count) {
      groups.back().push_back({true, false, first, count, 0, 0});
      return Status::success();
    };
    plan.ready = [&] {
      groups.emplace_back();
      return Status::success();
    };
    triangle.set_feed(&plan);
    triangle.set_dry(true);
    const Status planned = work();
    triangle.set_dry(false);
    triangle.set_feed(nullptr);
    FG_RETURN_IF_ERROR(planned);
    groups.pop_back();  // past the last point: empty
    FG_RETURN_IF_ERROR(state.feed_events_for(groups.size()));
    std::mutex mutex;
    std::condition_variable changed;
    size_t enqueued = 0;  // groups enqueued, each with its event recorded
    bool stop = false;    // the work failed: send no more
    Status sent = Status::success();
    const auto send_groups = [&] {
      Status status = Status::success();
      try {
        for (size_t group = 0; group < groups.size() && status.ok(); ++group) {
          {
            const std::lock_guard<std::mutex> lock(mutex);
            if (stop) break;
          }
          for (const Send &one : groups[group]) {
            static_cast<void>(status = one.lines ? feed.lines(one.row, one.rows)
                                                 : feed.block(one.row, one.rows, one.col, one.cols, one.diagonal));
            if (!status.ok()) break;
          }
          if (status.ok())
            static_cast<void>(
                status = detail::cuda_status(cudaEventRecord(state.feed_events[group], up_stream), "cudaEventRecord"));
          const std::lock_guard<std::mutex> lock(mutex);
          if (status.ok())
            enqueued = group + 1;
          else
            static_cast<void>(sent = status);
          changed.notify_all();
        }
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex);
        static_cast<void>(sent = Status::failure(StatusCode::alloc_failed, "host memory could not be allocated"));
        changed.notify_all();
      }
    };
    std::thread sender;
    const Joined joined{sender};
    try {
      sender = std::thread([&] {
        detail::DeviceGuard guard;  // a new thread: the handle's device made current there too
        const Status entered = guard.enter(context.device());
        if (entered.ok()) return send_groups();
        const std::lock_guard<std::mutex> lock(mutex);
        static_cast<void>(sent = entered);
        changed.notify_all();
      });
    } catch (...) {
      send_groups();  // no thread to be had: every group first, in turn
    }
    size_t next = 0;
    typename PanelTriangle<T>::Feed wait;
    wait.piece = feed.piece;
    wait.block = [](int64_t, int64_t, int64_t, int64_t, bool) { return Status::success(); };
    wait.lines = [](int64_t, int64_t) { return Status::success(); };
    wait.ready = [&]() -> Status {
      if (next >= groups.size()) return Status::failure(StatusCode::internal_error, "the feed's plan ran out");
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return enqueued > next || !sent.ok(); });
        if (enqueued <= next) return sent;
      }
      FG_CUDA_CHECK(cudaStreamWaitEvent(compute, state.feed_events[next++], 0));
      return Status::success();
    };
    triangle.set_feed(&wait);
    const Status done = work();
    triangle.set_feed(nullptr);
    {
      const std::lock_guard<std::mutex> lock(mutex);
      stop = true;
    }
    if (sender.joinable()) sender.join();
    FG_RETURN_IF_ERROR(done);
    return sent;
  };
  // symm: one panel of `count` lines of B at `from` (ld `ld`) into `to`, one product.
  const auto symmetric = [&](const T *from, T *to, int64_t count, int64_t ld) -> Status {
    detail::BasicGemmProblem<T> p;
    // Column-major: side L to := alpha A from + beta to (m x count), side R to := alpha from A + beta to
    // (count x n); as the row-major product to^T = from^T A (side L) or A from^T (side R), A being symmetric.
    p.alpha = call.alpha;
    p.beta = call.beta;
    p.c = to;
    p.ldc = ld;
    if (left) {
      p.m = count;
      p.n = call.m;
      p.k = call.m;
      p.a = detail::BasicGemmOperand<T>{from, ld, 0, false};
      p.b = detail::BasicGemmOperand<T>{a, order, 0, false};
    } else {
      p.m = call.n;
      p.n = count;
      p.k = call.n;
      p.a = detail::BasicGemmOperand<T>{a, order, 0, false};
      p.b = detail::BasicGemmOperand<T>{from, ld, 0, false};
    }
    return product(p);
  };
  const auto panel_lines = [&](int64_t panel) { return starts[panel + 1] - starts[panel]; };
  // Panel p: side L columns [starts[p], ...), lines of m; side R rows [starts[p], ...), n lines of the panel's width.
  const auto start = [&](int64_t panel) -> Status {
    const int slot = static_cast<int>(panel % 2);
    const int64_t count = panel_lines(panel), first = starts[panel], ld = left ? call.m : count;
    if (panel >= 2) FG_CUDA_CHECK(cudaStreamWaitEvent(up_stream, events[kDownloaded + slot], 0));
    const auto load = [&](const T *host, int64_t host_ld, T *device) {
      return left ? state.upload(up_stream, device, ld, host + first * host_ld, host_ld, count, call.m)
                  : state.upload(up_stream, device, ld, host + first, host_ld, call.n, count);
    };
    const bool feeding = fed && panel == 0;  // the panel's lines sent by the feed
    if (!feeding) {
      const int up_span = timeline.begin(up_stream, "up", panel, count);
      FG_RETURN_IF_ERROR(load(call.B, call.ldb, in[slot]));
      if (reads_c) FG_RETURN_IF_ERROR(load(call.C, call.ldc, out[slot]));
      timeline.end(up_stream, up_span);
      FG_CUDA_CHECK(cudaEventRecord(events[kUploaded + slot], up_stream));
      FG_CUDA_CHECK(cudaStreamWaitEvent(compute, events[kUploaded + slot], 0));
    }
    const int work_span = timeline.begin(compute, "work", panel, count);
    triangle.set_panel(panel);
    const auto work = [&]() -> Status {
      if (solve) return triangle.solve(in[slot], count);
      if (call.routine == Level3Routine::trmm) return triangle.multiply(in[slot], out[slot], count);
      return symmetric(in[slot], out[slot], count, ld);
    };
    FG_RETURN_IF_ERROR(feeding ? fed_work(work) : work());
    timeline.end(compute, work_span);
    FG_CUDA_CHECK(cudaEventRecord(events[kComputed + slot], compute));
    return Status::success();
  };
  const auto finish = [&](int64_t panel) -> Status {
    const int slot = static_cast<int>(panel % 2);
    const int64_t count = panel_lines(panel), first = starts[panel], ld = left ? call.m : count;
    const T *result = solve ? in[slot] : out[slot];
    int64_t unpacked = 0;
    const Status back = [&]() -> Status {
      FG_CUDA_CHECK(cudaStreamWaitEvent(down_stream, events[kComputed + slot], 0));
      const int span = timeline.begin(down_stream, "down", panel, count);
      const Status status =
          left ? state.download(down_stream, call.C + first * call.ldc, call.ldc, result, ld, count, call.m, &unpacked)
               : state.download(down_stream, call.C + first, call.ldc, result, ld, call.n, count, &unpacked);
      timeline.end(down_stream, span);
      return status;
    }();
    if (!back.ok()) {
      // Side L's chunks hold whole columns of the output, each final; side R's hold every row of the panel in part.
      if (left)
        *done += unpacked;
      else
        *partial = unpacked > 0;
      return back;
    }
    *done += count;
    FG_CUDA_CHECK(cudaEventRecord(events[kDownloaded + slot], down_stream));
    return Status::success();
  };
  FG_RETURN_IF_ERROR(run_panels(context, panels, start, finish));
  succeeded = true;
  timeline.write(routine_name(call.routine), call.m, call.n, sizeof(T));
  return Status::success();
}

template Status device_level3<float>(detail::Context &, Level3Resources &, const DeviceProduct<float> &,
                                     const Level3Call<float> &, int64_t *, bool *);
template Status device_level3<double>(detail::Context &, Level3Resources &, const DeviceProduct<double> &,
                                      const Level3Call<double> &, int64_t *, bool *);

}  // namespace fastgemm::blas_dgemm
