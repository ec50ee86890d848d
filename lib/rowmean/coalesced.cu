// SPDX-License-Identifier: Apache-2.0
// The third rung: one block per batch as before, but a warp reads a row together, consecutive lanes on consecutive
// elements, so that each warp load is one contiguous stretch of memory instead of 32 scattered ones; the row sums and
// the dot products with the matrix rows (read the same way) are reduced with warp shuffles. The batch's means live in
// shared memory (8 bytes a row, whatever the type), which bounds L: about 29000 rows on a 227 KiB block. Since it
// needs no workspace, AUTO runs it where a caller's workspace holds none of the faster algorithms' arrays.
#include <string>

#include "core/check.hpp"
#include "core/dtype.hpp"
#include "core/launch.cuh"
#include "cuda/warp_reduce.cuh"
#include "rowmean/variant.hpp"

namespace fastgemm::detail {
namespace {

constexpr int kWarpsPerBlock = 8;

template <typename T>
__global__ void coalesced_kernel(const T *input, const T *matrix, T *output, int L, int64_t M, int64_t N) {
  extern __shared__ double means[];
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  for (int64_t k = blockIdx.x; k < N; k += gridDim.x) {
    for (int j = warp; j < L; j += kWarpsPerBlock) {
      const T *row = input + (k * L + j) * M;
      double sum = 0.0;
      for (int64_t m = lane; m < M; m += 32) sum += static_cast<double>(row[m]);
      sum = warp_sum(sum);
      if (lane == 0) means[j] = sum / static_cast<double>(M);
    }
    __syncthreads();
    for (int i = warp; i < L; i += kWarpsPerBlock) {
      const T *matrix_row = matrix + static_cast<int64_t>(i) * L;
      double dot = 0.0;
      for (int j = lane; j < L; j += 32) dot += static_cast<double>(matrix_row[j]) * means[j];
      dot = warp_sum(dot);
      if (lane == 0) output[static_cast<int64_t>(i) * N + k] = static_cast<T>(dot);
    }
    // The next batch overwrites the means this one's products are still reading.
    __syncthreads();
  }
}

size_t means_bytes(int64_t L) { return static_cast<size_t>(L) * sizeof(double); }

Status can_implement_coalesced(const RowmeanProblem &p, const DeviceInfo &device) {
  if (means_bytes(p.L) <= device.smem_per_block_optin) return Status::success();
  return Status::failure(StatusCode::not_supported, "a batch's means at L = " + std::to_string(p.L) + " need " +
                                                        std::to_string(means_bytes(p.L)) +
                                                        " bytes of shared memory, the device has " +
                                                        std::to_string(device.smem_per_block_optin) + " per block");
}

// The shared-memory limit is an attribute of the kernel, shared by every thread that launches it: each sets it to
// the device's largest, the same value from all of them, so that no thread's setting can undercut another's launch.
template <typename T>
Status run_typed(const RowmeanProblem &p, const RunArgs &args) {
  auto *kernel = coalesced_kernel<T>;
  FG_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(args.device->smem_per_block_optin)));
  return launch(kernel, dim3(capped_grid(p.N, INT32_MAX)), dim3(kWarpsPerBlock * 32), means_bytes(p.L), args.stream,
                static_cast<const T *>(p.input), static_cast<const T *>(p.matrix), static_cast<T *>(p.output),
                static_cast<int>(p.L), p.M, p.N);
}

Status run_coalesced(const RowmeanProblem &p, const RunArgs &args) {
  return dispatch_dtype(p.dtype, [&](auto zero) { return run_typed<decltype(zero)>(p, args); });
}

}  // namespace

extern const RowmeanVariant coalesced_rowmean = {FG_ROWMEAN_COALESCED, "coalesced", can_implement_coalesced,
                                                 no_workspace<RowmeanProblem>, run_coalesced};

}  // namespace fastgemm::detail
