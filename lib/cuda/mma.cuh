// SPDX-License-Identifier: Apache-2.0
// Tensor-core fragments: the FP64 m16n8k8 product (compute capability 9.0; four m8n8k4 on 8.0; FMAs before).
#pragma once

#include <cuda_runtime.h>

namespace fastgemm::detail {

// d += a * b for one 16 x 8 x 8 double tile, in the m16n8k8 fragment layout (g = lane / 4, t = lane % 4):
// a = {A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4]}, b = {B[t][g], B[t+4][g]},
// d = {D[g][2t], D[g][2t+1], D[g+8][2t], D[g+8][2t+1]}. All 32 lanes must call it together.
__device__ __forceinline__ void mma_16x8x8(double (&d)[4], const double (&a)[4], const double (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  // Four m8n8k4 (the shape Ampere has): rows g or g + 8, reduction index t or t + 4.
#pragma unroll
  for (int half = 0; half < 2; ++half)
#pragma unroll
    for (int row = 0; row < 2; ++row)
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
                   : "+d"(d[2 * row]), "+d"(d[2 * row + 1])
                   : "d"(a[row + 2 * half]), "d"(b[half]));
#else
  // No FP64 tensor cores: the same sums in FMAs, each operand fetched from the lane that holds it.
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
#pragma unroll
    for (int index = 0; index < 4; ++index) {
      const double a_low = __shfl_sync(0xffffffffu, a[2 * half], g * 4 + index);
      const double a_high = __shfl_sync(0xffffffffu, a[2 * half + 1], g * 4 + index);
      const double b_even = __shfl_sync(0xffffffffu, b[half], (2 * t) * 4 + index);
      const double b_odd = __shfl_sync(0xffffffffu, b[half], (2 * t + 1) * 4 + index);
      d[0] = fma(a_low, b_even, d[0]);
      d[1] = fma(a_low, b_odd, d[1]);
      d[2] = fma(a_high, b_even, d[2]);
      d[3] = fma(a_high, b_odd, d[3]);
    }
  }
#endif
}

}  // namespace fastgemm::detail
