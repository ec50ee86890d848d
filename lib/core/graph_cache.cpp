// SPDX-License-Identifier: Apache-2.0
#include "core/graph_cache.hpp"

#include <cstring>
#include <new>

#include "core/check.hpp"

namespace fastgemm::detail {

void GraphCache::release() {
  clear();
  if (slots_ != nullptr) (void)cudaFreeHost(slots_);
  if (done_ != nullptr) (void)cudaEventDestroy(done_);
  slots_ = nullptr;
  done_ = nullptr;
}

cudaGraphExec_t GraphCache::find(const Key &key, DeviceChoice **slot, int *tag, cudaGraphNode_t *node) {
  for (int index = 0; index < kCapacity; ++index) {
    Entry &entry = entries_[index];
    if (entry.exec != nullptr && entry.key == key) {
      entry.launched = ++clock_;
      *slot = slots_ + index;
      *tag = entry.tag;
      *node = entry.node;
      return entry.exec;
    }
  }
  return nullptr;
}

int GraphCache::least_recent() const {
  int oldest = 0;
  for (int index = 1; index < kCapacity; ++index)
    if (entries_[index].launched < entries_[oldest].launched) oldest = index;
  return oldest;
}

Status GraphCache::next_slot(DeviceChoice **host, DeviceChoice **device) {
  if (slots_ == nullptr) {
    void *memory = nullptr;
    FG_CUDA_CHECK(cudaHostAlloc(&memory, sizeof(DeviceChoice) * kCapacity, cudaHostAllocMapped));
    slots_ = new (memory) DeviceChoice[kCapacity];
  }
  *host = slots_ + least_recent();
  void *mapped = nullptr;
  FG_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, *host, 0));
  *device = static_cast<DeviceChoice *>(mapped);
  return Status::success();
}

void GraphCache::insert(const Key &key, cudaGraphExec_t exec, int tag, cudaGraph_t graph, cudaGraphNode_t node) {
  Entry &entry = entries_[least_recent()];
  if (entry.exec != nullptr) (void)cudaGraphExecDestroy(entry.exec);
  if (entry.graph != nullptr) (void)cudaGraphDestroy(entry.graph);
  entry.key = key;
  entry.exec = exec;
  entry.graph = graph;
  entry.node = node;
  entry.tag = tag;
  entry.launched = ++clock_;
}

Status GraphCache::record_done(cudaStream_t stream, cudaEvent_t *done) {
  if (done_ == nullptr) FG_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  FG_CUDA_CHECK(cudaEventRecord(done_, stream));
  *done = done_;
  return Status::success();
}

void GraphCache::clear() {
  for (Entry &entry : entries_) {
    if (entry.exec != nullptr) (void)cudaGraphExecDestroy(entry.exec);
    if (entry.graph != nullptr) (void)cudaGraphDestroy(entry.graph);
    entry = Entry{};
  }
}

KeyWriter &KeyWriter::add_float(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return add(static_cast<uint64_t>(bits));
}

}  // namespace fastgemm::detail
