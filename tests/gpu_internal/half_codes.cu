// SPDX-License-Identifier: Apache-2.0
// The device's half_code (lib/sgemm/ozaki_int8/math.hpp: its root from rsqrtf, unlike the host's) for every two
// codes, for test_own_products.cpp to hold against exact integer roots.
#include <cuda_runtime.h>

#include <vector>

#include "sgemm/ozaki_int8/math.hpp"

namespace {

__global__ void half_codes_kernel(int *out) {
  const int a = blockIdx.x, b = threadIdx.x;
  out[a * 128 + b] = fastgemm::detail::ozaki::half_code(static_cast<float>(a), static_cast<float>(b));
}

}  // namespace

// half_code(a, b) for a, b in 0..127 at [a * 128 + b]; empty where a CUDA call fails.
std::vector<int> device_half_codes() {
  int *out = nullptr;
  if (cudaMalloc(&out, 128 * 128 * sizeof(int)) != cudaSuccess) return {};
  std::vector<int> codes(128 * 128);
  half_codes_kernel<<<128, 128>>>(out);
  const bool ok = cudaGetLastError() == cudaSuccess &&
                  cudaMemcpy(codes.data(), out, codes.size() * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess;
  (void)cudaFree(out);
  if (!ok) codes.clear();
  return codes;
}
