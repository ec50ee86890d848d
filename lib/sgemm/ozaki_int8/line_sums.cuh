// SPDX-License-Identifier: Apache-2.0
// What the scans of FG_SGEMM_OZAKI_INT8 gather of a line (the whole scan's, and the preview's of sampled lines),
// summed in a fixed order so that the facts are the same from run to run.
#pragma once

#include <cuda_runtime.h>

#include "sgemm/ozaki_int8/math.hpp"

namespace fastgemm::detail::ozaki {

// What one thread has gathered of a line. The magnitudes' extremes are kept as the bits of |x| (the order of
// non-negative floats is their bits' as unsigned integers): the largest over every element (zeros do not raise it,
// NaN and Inf do, which is how the line's finiteness is told), the least over the nonzero ones as their bits less
// one (a zero's wraps to the largest unsigned). For a line without NaN or Inf these are the float extremes over its
// nonzero elements, bit for bit; a line with them is only ever flagged.
struct LineSums {
  double squares = 0, absolutes = 0;  // sums of x^2 and |x|
  uint32_t largest_bits = 0;          // max of |x|'s bits
  uint32_t smallest_bits_less_one = 0xffffffffu;
  int nonzeros = 0;
  float finest = HUGE_VALF;  // the least lowest_bit_value over the nonzero elements

  __device__ void add(float x) {
    const double value = x;
    squares = fma(value, value, squares);
    absolutes += fabs(value);
    const uint32_t magnitude = __float_as_uint(x) & 0x7fffffffu;
    largest_bits = max(largest_bits, magnitude);
    smallest_bits_less_one = min(smallest_bits_less_one, magnitude - 1u);
    nonzeros += magnitude != 0u ? 1 : 0;
    finest = fminf(finest, magnitude != 0u ? lowest_bit_value(x) : HUGE_VALF);
  }

  __device__ bool finite() const { return largest_bits < 0x7f800000u; }
  // Over the nonzero elements (0 where there are none), of a line without NaN or Inf.
  __device__ float largest() const { return __uint_as_float(largest_bits); }
  // Over the nonzero elements (HUGE_VALF where there are none), of a line without NaN or Inf.
  __device__ float smallest() const {
    return smallest_bits_less_one == 0xffffffffu ? HUGE_VALF : __uint_as_float(smallest_bits_less_one + 1u);
  }

  // The line's integral exponent: the largest integral_exponent_of over its nonzero elements.
  __device__ int integral() const {
    return finest == HUGE_VALF ? kNoIntegralExponent : integral_exponent_of_bit(finest);
  }

  // Adds another thread's sums (in a fixed order, so that results are the same from run to run).
  __device__ void merge(const LineSums &other) {
    squares += other.squares;
    absolutes += other.absolutes;
    largest_bits = max(largest_bits, other.largest_bits);
    smallest_bits_less_one = min(smallest_bits_less_one, other.smallest_bits_less_one);
    nonzeros += other.nonzeros;
    finest = fminf(finest, other.finest);
  }

  // The sums of the warp's 32 lanes, in every lane.
  __device__ LineSums warp_total() const {
    LineSums total = *this;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      LineSums other;
      other.squares = __shfl_xor_sync(0xffffffffu, total.squares, offset);
      other.absolutes = __shfl_xor_sync(0xffffffffu, total.absolutes, offset);
      other.largest_bits = __shfl_xor_sync(0xffffffffu, total.largest_bits, offset);
      other.smallest_bits_less_one = __shfl_xor_sync(0xffffffffu, total.smallest_bits_less_one, offset);
      other.nonzeros = __shfl_xor_sync(0xffffffffu, total.nonzeros, offset);
      other.finest = __shfl_xor_sync(0xffffffffu, total.finest, offset);
      total.merge(other);
    }
    return total;
  }
};

}  // namespace fastgemm::detail::ozaki
