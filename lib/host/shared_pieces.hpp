// SPDX-License-Identifier: Apache-2.0
// The pinned pieces of a pageable B that every worker of a call uploads (the host's packed B panels).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include <cuda_runtime_api.h>

#include "host/copy_pool.hpp"
#include "host/staging.hpp"

namespace fastgemm::detail {

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
constexpr size_t max_shared_piece_elements = size_t(16) << 20;
// Pinned host buffers holding packed pieces of a pageable B for every worker of a call: the first worker that
// needs a piece packs it, the others upload the same copy while it is there. A piece in use by a worker (being packed,
// or read by a transfer that worker has not seen finish) is never replaced; of the others, the one used longest ago is.
// Kept for the handle's life. T is the engine's element.
template <typename T>
class SharedPieces {
 public:
  struct Piece {
    T *data = nullptr;
    int64_t key = -1;     // which piece of the call it holds; -1: none
    bool packed = false;  // its contents are complete
    int users = 0;        // workers that wait for it or whose transfer from it may still run
    uint64_t last_use = 0;
  };

  SharedPieces() = default;
  ~SharedPieces() { free_buffers(); }
  SharedPieces(const SharedPieces &) = delete;
  SharedPieces &operator=(const SharedPieces &) = delete;

  // At least `count` buffers of `elements` each, holding nothing, for a new call (no transfer of an earlier
  // call runs). False when the host cannot pin that much: the call then packs B through each worker's ring.
  bool prepare(size_t count, size_t elements) {
    if (pieces_.size() < count || elements_ < elements) {
      free_buffers();
      pieces_.resize(count);
      for (Piece &piece : pieces_) {
        if (cudaHostAlloc(reinterpret_cast<void **>(&piece.data), elements * sizeof(T), cudaHostAllocPortable) ==
            cudaSuccess)
          continue;
        piece.data = nullptr;
        (void)cudaGetLastError();  // an allocation failure is not sticky; the call goes on without these
        free_buffers();
        return false;
      }
      elements_ = elements;
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
  Piece *acquire(int64_t key, const Region<T> &region, CopyPool &pool) {
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
    elements_ = 0;
  }

  std::mutex mutex_;
  std::condition_variable packed_;
  std::vector<Piece> pieces_;
  size_t elements_ = 0;
  uint64_t clock_ = 0;
};

}  // namespace fastgemm::detail
