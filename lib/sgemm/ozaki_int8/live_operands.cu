// SPDX-License-Identifier: Apache-2.0
// A kept graph's operands given at each launch (kernels.hpp's publish_operands): the graph's first node is a kernel
// whose arguments are the call's addresses and scalars, set again by the host before a launch of the kept graph for
// other operands; it writes them to the workspace, where the emulation's kernels read them (GemmProblem::live).
#include <cuda_runtime.h>

#include "core/check.hpp"
#include "core/launch.cuh"
#include "sgemm/ozaki_int8/kernel_common.cuh"
#include "sgemm/ozaki_int8/kernels.hpp"

namespace fastgemm::detail::ozaki {
namespace {

__global__ void publish_kernel(LiveOperands given, LiveOperands *live) { *live = given; }

LiveOperands given_of(const GemmProblem &p) {
  LiveOperands given;
  given.a = p.a.data;
  given.b = p.b.data;
  given.c = p.c;
  given.alpha = p.alpha;
  given.beta = p.beta;
  return given;
}

}  // namespace

LiveOperands *live_operands(char *workspace, const WorkspaceLayout &layout) {
  static_assert(sizeof(LiveOperands) <= 256, "the layout keeps 256 bytes for them");
  return reinterpret_cast<LiveOperands *>(workspace + layout.live);
}

Status publish_operands(const GemmProblem &p, LiveOperands *live, cudaStream_t stream) {
  return launch(publish_kernel, dim3(1), dim3(1), 0, stream, given_of(p), live);
}

Status publish_again(cudaGraphExec_t exec, cudaGraphNode_t node, const GemmProblem &p, LiveOperands *live) {
  LiveOperands given = given_of(p);
  void *arguments[] = {&given, &live};
  cudaKernelNodeParams params = {};
  params.func = reinterpret_cast<void *>(publish_kernel);
  params.gridDim = dim3(1);
  params.blockDim = dim3(1);
  params.sharedMemBytes = 0;
  params.kernelParams = arguments;
  params.extra = nullptr;
  FG_CUDA_CHECK(cudaGraphExecKernelNodeSetParams(exec, node, &params));
  return Status::success();
}

}  // namespace fastgemm::detail::ozaki
