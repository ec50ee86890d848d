// SPDX-License-Identifier: Apache-2.0
#include "sgemm/ozaki_int8/graph_nodes.hpp"

#include <vector>

#include "core/device.hpp"
#include "sgemm/variant.hpp"

namespace fastgemm::detail::ozaki {

// A conditional handle in the graph that `stream` is being captured into.
Status new_handle(cudaStream_t stream, cudaGraphConditionalHandle *handle) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  FG_CUDA_CHECK(cudaStreamGetCaptureInfo(stream, &capture, nullptr, &graph, nullptr, nullptr, nullptr));
  if (capture != cudaStreamCaptureStatusActive)
    return Status::failure(StatusCode::internal_error, "the stream's capture is no longer active");
  FG_CUDA_CHECK(cudaGraphConditionalHandleCreate(handle, graph, 0, cudaGraphCondAssignDefault));
  return Status::success();
}

// A switch node of `size` branches on `handle` after everything captured on `stream` so far, which goes on after
// it; *bodies are its branches' graphs, to be captured into (owned by the node).
Status add_switch(cudaStream_t stream, cudaGraphConditionalHandle handle, unsigned int size, cudaGraph_t **bodies) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t *dependencies = nullptr;
  size_t dependency_count = 0;
  FG_CUDA_CHECK(cudaStreamGetCaptureInfo(stream, &capture, nullptr, &graph, &dependencies, nullptr, &dependency_count));
  cudaGraphNodeParams params = {};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = cudaGraphCondTypeSwitch;
  params.conditional.size = size;
  cudaGraphNode_t node = nullptr;
  FG_CUDA_CHECK(cudaGraphAddNode(&node, graph, dependencies, nullptr, dependency_count, &params));
  FG_CUDA_CHECK(cudaStreamUpdateCaptureDependencies(stream, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
  *bodies = params.conditional.phGraph_out;
  return Status::success();
}

// The FP32 product of p (the operation's workspace-free AUTO choice, which holds p's addresses, and its scalars
// unless it is cuBLAS's and p.live is given) captured into a graph of its own, on `stream` or on a stream of its
// own; *algo is that choice.
Status capture_fp32(const GemmProblem &p, const RunArgs &args, cudaGraph_t *graph, fg_sgemm_algo_t *algo,
                    cudaStream_t stream) {
  BranchCapture capture(args, stream);
  FG_RETURN_IF_ERROR(capture.begin());
  RunArgs inner = args;
  inner.stream = capture.stream();
  FG_CUDA_CHECK(cudaStreamBeginCapture(capture.stream(), cudaStreamCaptureModeRelaxed));
  const Status built = run_fp32_fallback(p, inner, algo);
  *graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(capture.stream(), graph);
  if (!built.ok() || ended != cudaSuccess) {
    if (*graph != nullptr) (void)cudaGraphDestroy(*graph);
    *graph = nullptr;
    FG_RETURN_IF_ERROR(built);
    FG_CUDA_CHECK(ended);
  }
  return Status::success();
}

Status same_kernels(cudaGraph_t first, cudaGraph_t second, bool *same) {
  *same = false;
  size_t count = 0, other_count = 0;
  FG_CUDA_CHECK(cudaGraphGetNodes(first, nullptr, &count));
  FG_CUDA_CHECK(cudaGraphGetNodes(second, nullptr, &other_count));
  if (count != other_count || count == 0) return Status::success();
  std::vector<cudaGraphNode_t> nodes(count), other_nodes(count);
  FG_CUDA_CHECK(cudaGraphGetNodes(first, nodes.data(), &count));
  FG_CUDA_CHECK(cudaGraphGetNodes(second, other_nodes.data(), &other_count));
  for (size_t index = 0; index < count; ++index) {
    cudaGraphNodeType type = cudaGraphNodeTypeEmpty, other_type = cudaGraphNodeTypeEmpty;
    FG_CUDA_CHECK(cudaGraphNodeGetType(nodes[index], &type));
    FG_CUDA_CHECK(cudaGraphNodeGetType(other_nodes[index], &other_type));
    if (type != other_type) return Status::success();
    if (type != cudaGraphNodeTypeKernel) continue;
    KernelNodeLaunch launch, other;
    // A kernel whose launch the driver cannot give counts as another.
    if (!kernel_node_launch(nodes[index], &launch).ok() || !kernel_node_launch(other_nodes[index], &other).ok())
      return Status::success();
    bool alike =
        launch.function != nullptr && launch.function == other.function && launch.shared_bytes == other.shared_bytes;
    for (int axis = 0; axis < 3; ++axis)
      alike = alike && launch.grid[axis] == other.grid[axis] && launch.block[axis] == other.block[axis];
    if (!alike) return Status::success();
  }
  *same = true;
  return Status::success();
}

// A child graph node running `child` (copied) after everything captured on `stream` so far, which goes on after it.
Status add_child(cudaStream_t stream, cudaGraph_t child, cudaGraphNode_t *node) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t *dependencies = nullptr;
  size_t dependency_count = 0;
  FG_CUDA_CHECK(cudaStreamGetCaptureInfo(stream, &capture, nullptr, &graph, &dependencies, nullptr, &dependency_count));
  FG_CUDA_CHECK(cudaGraphAddChildGraphNode(node, graph, dependencies, dependency_count, child));
  FG_CUDA_CHECK(cudaStreamUpdateCaptureDependencies(stream, node, nullptr, 1, cudaStreamSetCaptureDependencies));
  return Status::success();
}

// The node last captured on `stream`.
Status last_captured_node(cudaStream_t stream, cudaGraphNode_t *node) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t *dependencies = nullptr;
  size_t dependency_count = 0;
  FG_CUDA_CHECK(
      cudaStreamGetCaptureInfo(stream, &capture, nullptr, nullptr, &dependencies, nullptr, &dependency_count));
  if (capture != cudaStreamCaptureStatusActive || dependency_count != 1)
    return Status::failure(StatusCode::internal_error, "the capture does not end in one node");
  *node = dependencies[0];
  return Status::success();
}

}  // namespace fastgemm::detail::ozaki
