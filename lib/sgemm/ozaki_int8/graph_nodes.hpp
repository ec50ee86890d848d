// SPDX-License-Identifier: Apache-2.0
// How FG_SGEMM_OZAKI_INT8 builds its graphs (steps.cpp, graph_call.cpp): the stream its parts are captured on, the
// switch nodes and their branches, and the child graph nodes of its FP32 products.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "core/check.hpp"
#include "core/problem.hpp"
#include "core/status.hpp"
#include "core/variant.hpp"

namespace fastgemm::detail::ozaki {

// A stream of its own for capturing the branches' bodies, with the call's cuBLAS handle bound to it and given its
// workspace again (binding a stream resets cuBLAS to a pool of its own, whose allocations a branch cannot hold);
// both bound back to the call's stream at the end.
class BranchCapture {
 public:
  // With `stream`, that one (not being captured, and kept by the caller) instead of one of its own.
  explicit BranchCapture(const RunArgs &args, cudaStream_t stream = nullptr)
      : args_(args), stream_(stream), owned_(stream == nullptr) {}
  ~BranchCapture() {
    if (args_.cublas != nullptr && bound_) {
      (void)cublasSetStream(args_.cublas, args_.stream);
      (void)cublasSetWorkspace(args_.cublas, args_.cublas_workspace, args_.cublas_workspace_bytes);
    }
    if (owned_ && stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  }
  BranchCapture(const BranchCapture &) = delete;
  BranchCapture &operator=(const BranchCapture &) = delete;
  Status begin() {
    if (owned_) FG_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    if (args_.cublas != nullptr) {
      bound_ = true;
      FG_CUBLAS_CHECK(cublasSetStream(args_.cublas, stream_));
      FG_CUBLAS_CHECK(cublasSetWorkspace(args_.cublas, args_.cublas_workspace, args_.cublas_workspace_bytes));
    }
    return Status::success();
  }
  cudaStream_t stream() const { return stream_; }

 private:
  const RunArgs &args_;
  cudaStream_t stream_ = nullptr;
  bool owned_ = true;
  bool bound_ = false;
};

// A conditional handle in the graph that `stream` is being captured into.
Status new_handle(cudaStream_t stream, cudaGraphConditionalHandle *handle);

// A switch node of `size` branches on `handle` after everything captured on `stream` so far, which goes on after
// it; *bodies are its branches' graphs, to be captured into (owned by the node).
Status add_switch(cudaStream_t stream, cudaGraphConditionalHandle handle, unsigned int size, cudaGraph_t **bodies);

// Captures the branches of a switch node: branch(index, args) enqueues branch `index` on args.stream, a stream of
// its own (BranchCapture) captured into bodies[index].
template <typename Branch>
Status capture_branches(const RunArgs &args, cudaGraph_t *bodies, unsigned int size, const Branch &branch) {
  BranchCapture capture(args);
  FG_RETURN_IF_ERROR(capture.begin());
  RunArgs body_args = args;
  body_args.stream = capture.stream();
  for (unsigned int index = 0; index < size; ++index) {
    FG_CUDA_CHECK(cudaStreamBeginCaptureToGraph(capture.stream(), bodies[index], nullptr, nullptr, 0,
                                                cudaStreamCaptureModeRelaxed));
    const Status built = branch(index, body_args);
    cudaGraph_t body = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(capture.stream(), &body);
    FG_RETURN_IF_ERROR(built);
    FG_CUDA_CHECK(ended);
  }
  return Status::success();
}

// The FP32 product of p (the operation's workspace-free AUTO choice, which holds p's addresses and scalars) captured
// into a graph of its own, on `stream` or on a stream of its own; *algo is that choice.
Status capture_fp32(const GemmProblem &p, const RunArgs &args, cudaGraph_t *graph, fg_sgemm_algo_t *algo,
                    cudaStream_t stream = nullptr);

// Whether two graphs captured from one FP32 product run the same kernels: as many nodes, of the same types in the same
// order, whose kernel nodes launch the same function over the same grid, blocks and shared memory. *same is false
// where a node's parameters cannot be read.
Status same_kernels(cudaGraph_t first, cudaGraph_t second, bool *same);

// A child graph node running `child` (copied) after everything captured on `stream` so far, which goes on after it.
Status add_child(cudaStream_t stream, cudaGraph_t child, cudaGraphNode_t *node);

// The node last captured on `stream`.
Status last_captured_node(cudaStream_t stream, cudaGraphNode_t *node);

}  // namespace fastgemm::detail::ozaki
