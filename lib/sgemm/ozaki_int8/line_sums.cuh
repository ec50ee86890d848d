// SPDX-License-Identifier: Apache-2.0
// What the scans of FG_SGEMM_OZAKI_INT8 gather of a line (the whole scan's, and the preview's of sampled lines),
// summed in a fixed order so that the facts are the same from run to run.
#pragma once

#include <cuda_runtime.h>

#include "sgemm/ozaki_int8/math.hpp"

namespace fastgemm::detail::ozaki {

// What one thread has gathered of a line.
struct LineSums {
  double squares = 0, absolutes = 0;        // sums of x^2 and |x|
  float largest = 0, smallest = HUGE_VALF;  // of |x| over the nonzero elements
  int nonzeros = 0;
  float finest = HUGE_VALF;  // the least lowest_bit_value over the nonzero elements
  bool finite = true;

  __device__ void add(float x) {
    const double value = x;
    squares = fma(value, value, squares);
    absolutes += fabs(value);
    const float magnitude = fabsf(x);
    finite = finite && isfinite(x);
    if (x != 0.0f && isfinite(x)) {
      ++nonzeros;
      largest = fmaxf(largest, magnitude);
      smallest = fminf(smallest, magnitude);
      finest = fminf(finest, lowest_bit_value(x));
    }
  }

  // The line's integral exponent: the largest integral_exponent_of over its nonzero elements.
  __device__ int integral() const {
    return finest == HUGE_VALF ? kNoIntegralExponent : integral_exponent_of_bit(finest);
  }

  // Adds another thread's sums (in a fixed order, so that results are the same from run to run).
  __device__ void merge(const LineSums &other) {
    squares += other.squares;
    absolutes += other.absolutes;
    largest = fmaxf(largest, other.largest);
    smallest = fminf(smallest, other.smallest);
    nonzeros += other.nonzeros;
    finest = fminf(finest, other.finest);
    finite = finite && other.finite;
  }

  // The sums of the warp's 32 lanes, in every lane.
  __device__ LineSums warp_total() const {
    LineSums total = *this;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      LineSums other;
      other.squares = __shfl_xor_sync(0xffffffffu, total.squares, offset);
      other.absolutes = __shfl_xor_sync(0xffffffffu, total.absolutes, offset);
      other.largest = __shfl_xor_sync(0xffffffffu, total.largest, offset);
      other.smallest = __shfl_xor_sync(0xffffffffu, total.smallest, offset);
      other.nonzeros = __shfl_xor_sync(0xffffffffu, total.nonzeros, offset);
      other.finest = __shfl_xor_sync(0xffffffffu, total.finest, offset);
      other.finite = __shfl_xor_sync(0xffffffffu, static_cast<int>(total.finite), offset) != 0;
      total.merge(other);
    }
    return total;
  }
};

}  // namespace fastgemm::detail::ozaki
