// SPDX-License-Identifier: Apache-2.0
// A handle's instantiated CUDA graphs, for work whose choices are made on the device (the emulated mode outside a
// capture): a call captures its work once into a graph, on a stream of its own, and launches the instantiated graph
// on the handle's stream; the same call met again (the same key: whatever the graph's nodes hold that the caller
// cannot give again at launch) launches it again without capturing. A graph may have one kernel node whose
// arguments the caller sets before each launch (the call's addresses and scalars): the graph is kept with it. The
// least recently launched graph makes room for a new one.
//
// Each graph has a slot of mapped pinned memory, a DeviceChoice, where its kernels leave what they chose; an event
// recorded behind each launch tells the host when the slot holds the launch's choice. A graph launched again is
// ordered behind its earlier launches (CUDA runs one launch of an executable graph at a time), and a slot is given
// to a new graph only when its old one is evicted, by a later call.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "core/status.hpp"
#include "core/variant.hpp"

namespace fastgemm::detail {

class GraphCache {
 public:
  static constexpr int kCapacity = 64;
  static constexpr int kKeyWords = 32;
  using Key = std::array<uint64_t, kKeyWords>;

  GraphCache() = default;
  ~GraphCache() { release(); }
  // Destroys the graphs (one still running is freed when it completes), the slots and the event: only once the work
  // that writes the slots is done, and while the device's context is still held.
  void release();
  GraphCache(const GraphCache &) = delete;
  GraphCache &operator=(const GraphCache &) = delete;

  // The graph kept for `key`, or nullptr; *slot is its slot (as the host reads it), *tag and *node what insert() was
  // told.
  cudaGraphExec_t find(const Key &key, DeviceChoice **slot, int *tag, cudaGraphNode_t *node);
  // The slot of the next graph kept, as the host reads it (*host) and as its kernels write it (*device): the least
  // recently launched graph's, which insert() replaces. The slots are allocated on first use.
  Status next_slot(DeviceChoice **host, DeviceChoice **device);
  // Keeps `exec` (which writes the slot next_slot gave) for `key`, with a tag of the caller's, destroying the graph
  // it replaces. `graph`, which `exec` was instantiated from, is kept (and owned) with it where `node`, one of its
  // kernel nodes, is set again at launches (cudaGraphExecKernelNodeSetParams names the node of that graph);
  // both may be nullptr.
  void insert(const Key &key, cudaGraphExec_t exec, int tag, cudaGraph_t graph, cudaGraphNode_t node);
  // Records the cache's event on `stream`, behind a launch: *done is the event, which the report waits for.
  Status record_done(cudaStream_t stream, cudaEvent_t *done);
  // Destroys every graph kept (the slots stay).
  void clear();

 private:
  struct Entry {
    Key key{};
    cudaGraphExec_t exec = nullptr;
    cudaGraph_t graph = nullptr;
    cudaGraphNode_t node = nullptr;
    int tag = 0;
    uint64_t launched = 0;  // the clock at its last launch; 0 for an empty entry
  };
  int least_recent() const;

  Entry entries_[kCapacity];
  DeviceChoice *slots_ = nullptr;  // kCapacity of them, mapped pinned memory
  uint64_t clock_ = 0;
  cudaEvent_t done_ = nullptr;
};

// Appends words to a GraphCache::Key, in order.
class KeyWriter {
 public:
  explicit KeyWriter(GraphCache::Key *key) : key_(key) { key_->fill(0); }
  KeyWriter &add(uint64_t word) {
    if (used_ < GraphCache::kKeyWords) (*key_)[used_] = word;
    ++used_;
    return *this;
  }
  KeyWriter &add(const void *pointer) { return add(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(pointer))); }
  KeyWriter &add_float(float value);
  // Whether every word fitted.
  bool complete() const { return used_ <= GraphCache::kKeyWords; }

 private:
  GraphCache::Key *key_;
  int used_ = 0;
};

}  // namespace fastgemm::detail
