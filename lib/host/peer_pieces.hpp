// SPDX-License-Identifier: Apache-2.0
// Pieces of B passed between the workers of a call over the devices' own links (FASTGEMM_HOST_PEER): the first worker
// that needs a piece uploads it from the host and publishes its device copy; the others copy it from that device
// instead of reading host memory again. Every device needs all of B, so with n devices this takes B's traffic over the
// host's memory and links from n copies to one.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <cuda_runtime_api.h>

namespace fastgemm::detail {

// One call's directory of device copies, kept by the engine across calls and reset for each. An entry lives until its
// owner reuses the slot that holds it: the owner first withdraws it (no new reader starts), then makes its stream wait
// for the copies the readers enqueued. A reader enqueues its copy between read and read_done without waiting for
// anything, so a withdrawal waits for host threads briefly and for the devices not at all.
template <typename T>
class PeerPieces {
 public:
  struct Entry {
    enum class State { pending, published, withdrawn };
    int64_t key = -1;
    State state = State::pending;
    int device = -1;
    const T *data = nullptr;
    cudaEvent_t ready = nullptr;      // recorded on the owner's device once data holds the piece
    int readers = 0;                  // readers between read and read_done
    std::vector<cudaEvent_t> copies;  // recorded on each reader's device after its copy
  };

  // For a new call: no copy of an earlier call is in flight.
  void reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.clear();
    by_key_.clear();
  }

  // The entry of `key`: a new one owned by the caller (*owner true), who must publish or withdraw it, when no other
  // worker holds the piece on its device or is bringing it there; else that worker's. nullptr when no memory is left
  // for the entry: the caller loads the piece itself.
  Entry *claim(int64_t key, bool *owner) {
    std::lock_guard<std::mutex> lock(mutex_);
    *owner = false;
    try {
      const auto found = by_key_.find(key);
      if (found != by_key_.end() && found->second->state != Entry::State::withdrawn) return found->second;
      entries_.emplace_back();
      Entry *entry = &entries_.back();
      entry->key = key;
      by_key_[key] = entry;
      *owner = true;
      return entry;
    } catch (...) {
      return nullptr;
    }
  }

  // The owner's piece is in `data` on `device` once `ready` (recorded before this call) has completed.
  void publish(Entry *entry, int device, const T *data, cudaEvent_t ready) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      entry->device = device;
      entry->data = data;
      entry->ready = ready;
      entry->state = Entry::State::published;
    }
    changed_.notify_all();
  }

  // For a reader: waits while the owner brings the piece to its device. True with where to copy it from once it is
  // published; false when the owner withdrew it (the reader loads the piece itself) or, *aborted set, when another
  // worker failed. After true, the reader enqueues its copy after `ready` and calls read_done.
  bool read(Entry *entry, const std::atomic<bool> &failed, int *device, const T **data, cudaEvent_t *ready,
            bool *aborted) {
    std::unique_lock<std::mutex> lock(mutex_);
    *aborted = false;
    while (entry->state == Entry::State::pending) {
      if (failed.load()) {
        *aborted = true;
        return false;
      }
      changed_.wait_for(lock, std::chrono::milliseconds(20));
    }
    if (entry->state != Entry::State::published) return false;
    ++entry->readers;
    *device = entry->device;
    *data = entry->data;
    *ready = entry->ready;
    return true;
  }

  // The reader's copy is enqueued and `copy` recorded after it (nullptr: nothing was enqueued, or the copy is done).
  // False when the event could not be kept: the reader then waits for its copy on the host and calls again with
  // nullptr.
  bool read_done(Entry *entry, cudaEvent_t copy) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (copy != nullptr) {
        try {
          entry->copies.push_back(copy);
        } catch (...) {
          return false;
        }
      }
      --entry->readers;
    }
    changed_.notify_all();
    return true;
  }

  // The owner's: no reader starts any more. Returns, once every reader that started has enqueued its copy, the events
  // that say those copies are done, for the owner's stream to wait for before it reuses the slot.
  std::vector<cudaEvent_t> withdraw(Entry *entry) {
    std::vector<cudaEvent_t> copies;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      entry->state = Entry::State::withdrawn;
      changed_.wait(lock, [&] { return entry->readers == 0; });
      copies.swap(entry->copies);
    }
    changed_.notify_all();
    return copies;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Entry> entries_;  // stable addresses as entries are added
  std::unordered_map<int64_t, Entry *> by_key_;
};

}  // namespace fastgemm::detail
