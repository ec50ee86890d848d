// SPDX-License-Identifier: Apache-2.0
// A handle's instantiated CUDA graphs, for work whose choices are made on the device (the emulated mode outside a
// capture): a call captures its work once into a graph, on a stream of its own, and launches the instantiated graph
// on the handle's stream; the same call met again (the same key: whatever the graph's nodes hold that the caller
// cannot give again at launch) launches it again without capturing. A graph may have nodes that the caller sets
// again before a launch for other operands (a kernel node given the call's addresses and scalars, child graph nodes
// captured again for them): the graph they belong to is kept with its instantiation, with the operands of its last
// launch. The least recently launched graph makes room for a new one.
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
#include "core/variant_state.hpp"
#include "sgemm/emulation_report.hpp"

namespace fastgemm::detail {

// The emulated mode's state in the handle (RunArgs::state, core/variant_state.hpp).
class GraphCache final : public VariantState {
 public:
  // The cache kept in args.state, made there on first use; nullptr where the caller keeps none or it could not be
  // made.
  static GraphCache *of(const RunArgs &args);
  static constexpr int kCapacity = 64;
  static constexpr int kKeyWords = 32;
  using Key = std::array<uint64_t, kKeyWords>;
  static constexpr int kMostChildren = 2;
  // Graphs captured for the child graph nodes kept per graph, each for the operands it was captured for: calls that
  // take turns over a few sets of memory capture each set's once.
  static constexpr int kChildGraphs = 4;

  // A graph kept, as the caller made it.
  struct Kept {
    cudaGraphExec_t exec = nullptr;
    cudaGraph_t graph = nullptr;      // what `exec` was instantiated from, kept for its nodes below (owned)
    cudaGraphNode_t given = nullptr;  // a kernel node set again for other operands, or nullptr
    cudaGraphNode_t children[kMostChildren] = {};  // child graph nodes set again for other operands
    int child_count = 0;
    Key operands{};  // the operands of its last launch, in the caller's words
    int tag = 0;
    Key children_for{};  // what the child graphs it holds now were captured for, in the caller's words
    bool children_read_addresses = false;  // they read the operands' addresses at launch: children_for leaves them out
    struct ChildGraph {
      Key operands{};
      cudaGraph_t graph = nullptr;  // owned
    };
    ChildGraph child_graphs[kChildGraphs] = {};  // the most recently used first

    // The child graph kept for `for_operands` (moved to the front), or nullptr.
    cudaGraph_t child_graph(const Key &for_operands);
    // Keeps `captured` (the cache owns it from here) for `for_operands`, first, destroying the least recently used.
    void keep_child_graph(const Key &for_operands, cudaGraph_t captured);
  };

  GraphCache() = default;
  ~GraphCache() override { release(); }
  // Destroys the graphs (one still running is freed when it completes), the slots and the event: only once the work
  // that writes the slots is done, and while the device's context is still held.
  void release() override;
  // The graphs' nodes hold the old workspace's addresses: they go.
  void workspace_changed() override { clear(); }
  GraphCache(const GraphCache &) = delete;
  GraphCache &operator=(const GraphCache &) = delete;

  // The graph kept for `key`, or nullptr; *slot is its slot (as the host reads it). The caller may change its
  // operands.
  Kept *find(const Key &key, DeviceChoice **slot);
  // The slot of the next graph kept, as the host reads it (*host) and as its kernels write it (*device): the least
  // recently launched graph's, which insert() replaces. The slots are allocated on first use.
  Status next_slot(DeviceChoice **host, DeviceChoice **device);
  // Keeps `kept` (whose graph writes the slot next_slot gave, and which the cache now owns) for `key`, destroying
  // the graph it replaces.
  void insert(const Key &key, const Kept &kept);
  // Destroys a graph kept (found by find), for one made again.
  void erase(Kept *kept);
  // A stream of the cache's own (made on first use), for the caller's captures of the nodes it sets again.
  Status capture_stream(cudaStream_t *stream);
  // Records the cache's event on `stream`, behind a launch: *done is the event, which the report waits for.
  Status record_done(cudaStream_t stream, cudaEvent_t *done);
  // Destroys every graph kept (the slots stay).
  void clear();

 private:
  struct Entry {
    Key key{};
    Kept kept;
    uint64_t launched = 0;  // the clock at its last launch; 0 for an empty entry
  };
  static void destroy(Entry &entry);
  int least_recent() const;

  Entry entries_[kCapacity];
  DeviceChoice *slots_ = nullptr;  // kCapacity of them, mapped pinned memory
  uint64_t clock_ = 0;
  cudaEvent_t done_ = nullptr;
  cudaStream_t capture_stream_ = nullptr;
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
