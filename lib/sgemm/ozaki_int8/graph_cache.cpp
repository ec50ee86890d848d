// SPDX-License-Identifier: Apache-2.0
#include "sgemm/ozaki_int8/graph_cache.hpp"

#include <cstring>
#include <new>

#include "core/check.hpp"

namespace fastgemm::detail {

GraphCache *GraphCache::of(const RunArgs &args) {
  if (args.state == nullptr) return nullptr;
  if (*args.state == nullptr) args.state->reset(new (std::nothrow) GraphCache());
  return static_cast<GraphCache *>(args.state->get());
}

void GraphCache::release() {
  clear();
  if (slots_ != nullptr) (void)cudaFreeHost(slots_);
  if (done_ != nullptr) (void)cudaEventDestroy(done_);
  if (capture_stream_ != nullptr) (void)cudaStreamDestroy(capture_stream_);
  slots_ = nullptr;
  done_ = nullptr;
  capture_stream_ = nullptr;
}

GraphCache::Kept *GraphCache::find(const Key &key, DeviceChoice **slot) {
  for (int index = 0; index < kCapacity; ++index) {
    Entry &entry = entries_[index];
    if (entry.kept.exec != nullptr && entry.key == key) {
      entry.launched = ++clock_;
      *slot = slots_ + index;
      return &entry.kept;
    }
  }
  return nullptr;
}

void GraphCache::destroy(Entry &entry) {
  if (entry.kept.exec != nullptr) (void)cudaGraphExecDestroy(entry.kept.exec);
  if (entry.kept.graph != nullptr) (void)cudaGraphDestroy(entry.kept.graph);
  for (Kept::ChildGraph &child : entry.kept.child_graphs)
    if (child.graph != nullptr) (void)cudaGraphDestroy(child.graph);
  entry = Entry{};
}

cudaGraph_t GraphCache::Kept::child_graph(const Key &for_operands) {
  for (int index = 0; index < kChildGraphs; ++index) {
    if (child_graphs[index].graph == nullptr || child_graphs[index].operands != for_operands) continue;
    const ChildGraph found = child_graphs[index];
    for (int later = index; later > 0; --later) child_graphs[later] = child_graphs[later - 1];
    child_graphs[0] = found;
    return found.graph;
  }
  return nullptr;
}

void GraphCache::Kept::keep_child_graph(const Key &for_operands, cudaGraph_t captured) {
  ChildGraph &last = child_graphs[kChildGraphs - 1];
  if (last.graph != nullptr) (void)cudaGraphDestroy(last.graph);
  for (int later = kChildGraphs - 1; later > 0; --later) child_graphs[later] = child_graphs[later - 1];
  child_graphs[0] = ChildGraph{for_operands, captured};
}

void GraphCache::erase(Kept *kept) {
  for (Entry &entry : entries_)
    if (&entry.kept == kept) destroy(entry);
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

void GraphCache::insert(const Key &key, const Kept &kept) {
  Entry &entry = entries_[least_recent()];
  destroy(entry);
  entry.key = key;
  entry.kept = kept;
  entry.launched = ++clock_;
}

Status GraphCache::capture_stream(cudaStream_t *stream) {
  if (capture_stream_ == nullptr) FG_CUDA_CHECK(cudaStreamCreateWithFlags(&capture_stream_, cudaStreamNonBlocking));
  *stream = capture_stream_;
  return Status::success();
}

Status GraphCache::record_done(cudaStream_t stream, cudaEvent_t *done) {
  if (done_ == nullptr) FG_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  FG_CUDA_CHECK(cudaEventRecord(done_, stream));
  *done = done_;
  return Status::success();
}

void GraphCache::clear() {
  for (Entry &entry : entries_) destroy(entry);
}

KeyWriter &KeyWriter::add_float(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return add(static_cast<uint64_t>(bits));
}

}  // namespace fastgemm::detail
