// SPDX-License-Identifier: Apache-2.0
// A kept graph's operands given at each launch (kernels.hpp's LiveBuffers): the graph's first node is a kernel whose
// arguments are the call's addresses and scalars, set again by the host before each launch of the kept graph; it
// writes them to the workspace, where the emulation's kernels read them (GemmProblem::live), and the addresses of
// each product's A, B and C, which cuBLAS's batched FP32 product reads there (its scalars too, in device pointer
// mode). The graph of a call thus serves every call of the same shape, layout and workspace.
#include <cuda_runtime.h>

#include <climits>

#include "core/check.hpp"
#include "core/launch.cuh"
#include "sgemm/ozaki_int8/kernel_common.cuh"
#include "sgemm/ozaki_int8/kernels.hpp"

namespace fastgemm::detail::ozaki {
namespace {

constexpr int kPublishThreads = 256;
constexpr int64_t kPublishBlocks = 64;

// What the publishing kernel is given by value: the addresses and scalars, and the batch's strides.
struct Published {
  LiveOperands operands;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0, batch = 1;
};

__global__ void __launch_bounds__(kPublishThreads) publish_kernel(Published published, LiveBuffers buffers) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *buffers.operands = published.operands;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < published.batch;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    buffers.a[t] = published.operands.a + t * published.stride_a;
    buffers.b[t] = published.operands.b + t * published.stride_b;
    buffers.c[t] = published.operands.c + t * published.stride_c;
  }
}

Published published_of(const GemmProblem &p) {
  Published published;
  published.operands.a = p.a.data;
  published.operands.b = p.b.data;
  published.operands.c = p.c;
  published.operands.alpha = p.alpha;
  published.operands.beta = p.beta;
  published.stride_a = p.a.stride;
  published.stride_b = p.b.stride;
  published.stride_c = p.stride_c;
  published.batch = p.batch;
  return published;
}

dim3 publish_grid(int64_t batch) { return dim3(capped_grid(divide_up(batch, kPublishThreads), kPublishBlocks)); }

bool fits_int(const GemmProblem &p) {
  for (int64_t value : {p.m, p.n, p.k, p.batch, p.a.ld, p.b.ld, p.ldc})
    if (value > INT_MAX) return false;
  return true;
}

// Restores the handle's pointer mode when it goes out of scope.
class DevicePointerMode {
 public:
  explicit DevicePointerMode(cublasHandle_t handle) : handle_(handle) {}
  ~DevicePointerMode() {
    if (set_) (void)cublasSetPointerMode(handle_, before_);
  }
  DevicePointerMode(const DevicePointerMode &) = delete;
  DevicePointerMode &operator=(const DevicePointerMode &) = delete;
  Status enter() {
    FG_CUBLAS_CHECK(cublasGetPointerMode(handle_, &before_));
    FG_CUBLAS_CHECK(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_DEVICE));
    set_ = true;
    return Status::success();
  }

 private:
  cublasHandle_t handle_;
  cublasPointerMode_t before_ = CUBLAS_POINTER_MODE_HOST;
  bool set_ = false;
};

}  // namespace

LiveBuffers live_buffers(char *workspace, const WorkspaceLayout &layout, int64_t batch) {
  LiveBuffers buffers;
  char *at = workspace + layout.live;
  buffers.operands = reinterpret_cast<LiveOperands *>(at);
  static_assert(sizeof(LiveOperands) <= 256, "the layout keeps 256 bytes for them");
  buffers.a = reinterpret_cast<const float **>(at + 256);
  buffers.b = buffers.a + batch;
  buffers.c = reinterpret_cast<float **>(at + 256 + 2 * batch * sizeof(float *));
  return buffers;
}

Status publish_operands(const GemmProblem &p, const LiveBuffers &buffers, cudaStream_t stream) {
  return launch(publish_kernel, publish_grid(p.batch), dim3(kPublishThreads), 0, stream, published_of(p), buffers);
}

Status publish_again(cudaGraphExec_t exec, cudaGraphNode_t node, const GemmProblem &p, const LiveBuffers &buffers) {
  Published published = published_of(p);
  LiveBuffers where = buffers;
  void *arguments[] = {&published, &where};
  cudaKernelNodeParams params = {};
  params.func = reinterpret_cast<void *>(publish_kernel);
  params.gridDim = publish_grid(p.batch);
  params.blockDim = dim3(kPublishThreads);
  params.sharedMemBytes = 0;
  params.kernelParams = arguments;
  params.extra = nullptr;
  FG_CUDA_CHECK(cudaGraphExecKernelNodeSetParams(exec, node, &params));
  return Status::success();
}

Status fp32_live_product(const GemmProblem &p, const LiveBuffers &buffers, cublasHandle_t handle) {
  if (handle == nullptr)
    return Status::failure(StatusCode::internal_error, "the FP32 product needs a cuBLAS handle it was not given");
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: B first.
  const cublasOperation_t op_b = p.b.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = p.a.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const float *alpha = &buffers.operands->alpha, *beta = &buffers.operands->beta;
  DevicePointerMode mode(handle);
  FG_RETURN_IF_ERROR(mode.enter());
  if (fits_int(p)) {
    FG_CUBLAS_CHECK(cublasSgemmBatched(handle, op_b, op_a, static_cast<int>(p.n), static_cast<int>(p.m),
                                       static_cast<int>(p.k), alpha, buffers.b, static_cast<int>(p.b.ld), buffers.a,
                                       static_cast<int>(p.a.ld), beta, buffers.c, static_cast<int>(p.ldc),
                                       static_cast<int>(p.batch)));
  } else {
    FG_CUBLAS_CHECK(cublasSgemmBatched_64(handle, op_b, op_a, p.n, p.m, p.k, alpha, buffers.b, p.b.ld, buffers.a,
                                          p.a.ld, beta, buffers.c, p.ldc, p.batch));
  }
  return Status::success();
}

}  // namespace fastgemm::detail::ozaki
