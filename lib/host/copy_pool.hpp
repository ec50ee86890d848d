// SPDX-License-Identifier: Apache-2.0
// The host side of packing: copies of 2-D regions of elements (float or double) with streaming stores, cut in parts
// that a pool of host threads, kept for the handle's life, runs beside the thread that asks. They pack pageable
// operands into pinned buffers and unpack computed tiles into a pageable C, for every worker of the handle.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace fastgemm::detail {

// Host copies are cut in parts of at least this many bytes, one per thread of the pool.
constexpr size_t copy_part_bytes = size_t(256) << 10;
// The pool's threads per device, beside the threads that enqueue work: a 16-core host packs at 40 GB/s
// with 8 threads writing with streaming stores, and the copies of both directions run at once. The pool
// leaves four of the host's cores to those threads.
constexpr int max_pool_threads = 12;
// Copies `lines` runs of `length_bytes` bytes, `src_ld_bytes` apart, to runs `dst_ld_bytes` apart, on the calling
// thread.
void copy_lines_serial(char *dst, int64_t dst_ld_bytes, const char *src, int64_t src_ld_bytes, int64_t lines,
                       int64_t length_bytes);

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

  // Copies `lines` lines of `length` elements, `src_ld` apart, to lines `dst_ld` apart; returns once every part is
  // done. Callable from several threads at once.
  template <typename T>
  void copy(T *dst, int64_t dst_ld, const T *src, int64_t src_ld, int64_t lines, int64_t length) {
    constexpr int64_t size = sizeof(T);
    copy_bytes(reinterpret_cast<char *>(dst), dst_ld * size, reinterpret_cast<const char *>(src), src_ld * size, lines,
               length * size);
  }

 private:
  // The leading dimensions and the lines' length in bytes.
  struct Batch {
    char *dst;
    int64_t dst_ld;
    const char *src;
    int64_t src_ld, lines, length, parts, lines_per_part;
    int64_t claimed = 0, done = 0;
  };

  void copy_bytes(char *dst, int64_t dst_ld, const char *src, int64_t src_ld, int64_t lines, int64_t length) {
    const size_t bytes = static_cast<size_t>(lines) * static_cast<size_t>(length);
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

}  // namespace fastgemm::detail
