// SPDX-License-Identifier: Apache-2.0
// The exact integer arithmetic of FG_SGEMM_OZAKI_INT8 in doubles, for the kernels and for the host (the unit
// tests check it against 128-bit integers).
#pragma once

#include <math.h>

#include <cstdint>

#include "sgemm/ozaki_int8.hpp"

#if defined(__CUDACC__)
#define FG_OZAKI_INLINE __host__ __device__ __forceinline__
#else
#define FG_OZAKI_INLINE inline
#endif

namespace fastgemm::detail::ozaki {

// The residue of the integer v (|v| < 2^53) modulo p, in [-128, 127]. rint(v / p) is within 1 of the nearest
// integer to v / p (1 / p is rounded), so v - q p lies within 1.5 p of 0, and two corrections bring it into range.
FG_OZAKI_INLINE int symmetric_residue(double v, double p, double inverse_p) {
  const double q = rint(v * inverse_p);
  int r = static_cast<int>(fma(-q, p, v));  // exact: the result is a small integer
  const int modulus = static_cast<int>(p);
  if (r > 127) r -= modulus;
  if (r < -128) r += modulus;
  if (r > 127) r -= modulus;
  return r;
}

// The sums of CrtConstants over the moduli, from the INT32 product modulo each.
struct CrtSums {
  double fraction = 0, high = 0, low = 0;

  // Adds the product's sum of residue products for modulus l (any integer congruent to the product modulo p_l,
  // |sum| < 2^31): reduced to [-p_l / 2, p_l / 2] first; the high sum stays exact (CrtConstants).
  FG_OZAKI_INLINE void add(double sum, const CrtConstants &constants, int l) {
    const double c = fma(-rint(sum * constants.inverse_modulus[l]), constants.modulus[l], sum);
    fraction = fma(c, constants.weight_fraction[l], fraction);
    high = fma(c, constants.weight_high[l], high);
    low = fma(c, constants.weight_low[l], low);
  }

  // The product itself, rounded to a double: valid while its magnitude is below P / 2 (1 - 2^-20).
  FG_OZAKI_INLINE double value(const CrtConstants &constants) const {
    const double q = rint(fraction);
    return fma(-q, constants.product_high, high) + fma(-q, constants.product_low, low);
  }
};

}  // namespace fastgemm::detail::ozaki
