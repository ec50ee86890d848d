// SPDX-License-Identifier: Apache-2.0
// FG_ROWMEAN_STAGED: any L, M and N, in two passes through the workspace.
//
// 1. Row means in double, read at the speed of the input (staged_means.cu).
// 2. The product. When the matrix is read once or stays in L2, it runs on FP64 tensor cores (staged_product.cu). When
//    the matrix is large and re-read for many batches (L = 4096, N = 16384: a compute-bound 4096 x 16384 x 4096
//    product), cuBLAS DGEMM does it, on the means in double and, for f32, a double copy of the matrix. Either way the
//    products are exact and summed in double.
#include "core/check.hpp"
#include "core/dtype.hpp"
#include "core/launch.cuh"
#include "rowmean/staged_passes.cuh"
#include "rowmean/variant.hpp"
#include "rowmean/workspace.hpp"

namespace fastgemm::detail {
namespace staged {
namespace {

template <typename From, typename To>
__global__ void convert_kernel(const From *from, To *to, int64_t count) {
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x)
    to[index] = static_cast<To>(from[index]);
}

template <typename From, typename To>
Status convert(const From *from, To *to, int64_t count, cudaStream_t stream) {
  return launch(convert_kernel<From, To>, dim3(capped_grid(ceil_div(count, kBlockThreads), INT32_MAX)),
                dim3(kBlockThreads), 0, stream, from, to, count);
}

// Both passes' plans, and where their arrays lie in the workspace.
struct StagedPlan {
  MeansPlan means;
  bool matrix_vector_ok = false;
  ProductPlan product;
  size_t means_at = 0, piece_sums_at = 0, segment_sums_at = 0, matrix_copy_at = 0, output_copy_at = 0;
  size_t workspace_bytes = 0;
};

StagedPlan plan_staged(const RowmeanProblem &p, const DeviceInfo &device) {
  StagedPlan plan;
  plan.means = plan_means(p, device);
  plan.matrix_vector_ok = reinterpret_cast<uintptr_t>(p.matrix) % 16 == 0 && p.L % (16 / element_size(p.dtype)) == 0;
  plan.product = plan_product(p, device, plan.matrix_vector_ok);
  const bool f32 = p.dtype == FG_F32;
  WorkspaceCarver carver;
  plan.means_at = carver.take(p.N * p.L * 8);
  plan.piece_sums_at = plan.means.log2_pieces > 0 ? carver.take(plan.means.span_count * 8) : 0;
  plan.segment_sums_at =
      plan.product.tensor_cores && plan.product.segments > 1 ? carver.take(plan.product.segments * p.L * p.N * 8) : 0;
  plan.matrix_copy_at = !plan.product.tensor_cores && f32 ? carver.take(p.L * p.L * 8) : 0;
  plan.output_copy_at = !plan.product.tensor_cores && f32 ? carver.take(p.L * p.N * 8) : 0;
  plan.workspace_bytes = carver.bytes;
  return plan;
}

size_t staged_workspace_bytes(const RowmeanProblem &p, const DeviceInfo &device) {
  return plan_staged(p, device).workspace_bytes;
}

// The product goes through cuBLAS where the tensor-core kernel does not take it.
bool staged_uses_cublas(const RowmeanProblem &p, const DeviceInfo &device) {
  return !plan_staged(p, device).product.tensor_cores;
}

template <typename T>
Status run_typed(const RowmeanProblem &p, const RunArgs &args) {
  const DeviceInfo &device = *args.device;
  const cudaStream_t stream = args.stream;
  const T *matrix = static_cast<const T *>(p.matrix);
  T *output = static_cast<T *>(p.output);
  const StagedPlan plan = plan_staged(p, device);
  const ProductPlan &product = plan.product;
  // The kernels after the row sums start by programmatic dependent launch where the device has it.
  const bool overlap = device.arch() >= 90;

  char *base = static_cast<char *>(args.workspace);
  double *means = reinterpret_cast<double *>(base + plan.means_at);
  FG_RETURN_IF_ERROR(launch_means<T>(p, plan.means, means, reinterpret_cast<double *>(base + plan.piece_sums_at),
                                     overlap, device, stream));

  if (product.tensor_cores) {
    ProductParams<T> params;
    params.matrix = matrix;
    params.means = means;
    params.output = output;
    params.segment_sums = reinterpret_cast<double *>(base + plan.segment_sums_at);
    params.L = p.L;
    params.N = p.N;
    params.row_tiles = product.row_tiles;
    params.slabs = product.slabs;
    params.segments = product.segments;
    params.segment_length = product.segment_length;
    params.matrix_prefetch = product.matrix_prefetch;
    params.matrix_vector_ok = plan.matrix_vector_ok;
    params.means_vector_ok = p.L % 2 == 0;
    params.output_pair_ok = reinterpret_cast<uintptr_t>(output) % (2 * sizeof(T)) == 0 && p.N % 2 == 0;
    params.segment_pair_ok = p.N % 2 == 0;
    return launch_product(params, product, overlap, stream);
  }

  // In cuBLAS's column-major terms the row-major L x N output is the N x L matrix means * matrix^T.
  cublasHandle_t handle = args.cublas;
  const double one = 1.0, zero = 0.0;
  if constexpr (sizeof(T) == 8) {
    FG_CUBLAS_CHECK(cublasDgemm_64(handle, CUBLAS_OP_T, CUBLAS_OP_N, p.N, p.L, p.L, &one, means, p.L, matrix, p.L,
                                   &zero, output, p.N));
  } else {
    double *matrix_copy = reinterpret_cast<double *>(base + plan.matrix_copy_at);
    double *output_copy = reinterpret_cast<double *>(base + plan.output_copy_at);
    FG_RETURN_IF_ERROR(convert(matrix, matrix_copy, p.L * p.L, stream));
    FG_CUBLAS_CHECK(cublasDgemm_64(handle, CUBLAS_OP_T, CUBLAS_OP_N, p.N, p.L, p.L, &one, means, p.L, matrix_copy, p.L,
                                   &zero, output_copy, p.N));
    FG_RETURN_IF_ERROR(convert(static_cast<const double *>(output_copy), output, p.L * p.N, stream));
  }
  return Status::success();
}

Status run_staged(const RowmeanProblem &p, const RunArgs &args) {
  return dispatch_dtype(p.dtype, [&](auto zero) { return run_typed<decltype(zero)>(p, args); });
}

}  // namespace
}  // namespace staged

extern const RowmeanVariant staged_rowmean = {
    FG_ROWMEAN_STAGED,  "staged", accepts_any_problem<RowmeanProblem>, staged::staged_workspace_bytes,
    staged::run_staged, 0,        staged::staged_uses_cublas};

}  // namespace fastgemm::detail
