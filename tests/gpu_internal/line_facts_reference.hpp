// SPDX-License-Identifier: Apache-2.0
// A line's facts as the emulated mode's scan makes them, found on the host from its elements in order (math.hpp's
// line_facts from the line's sums and statistics): the reference of the internal GPU tests of the scan and the plan.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "sgemm/ozaki_int8/math.hpp"

namespace fgtest {

// The least e such that x 2^e is an integer (x nonzero and finite).
inline int lowest_bit_exponent(float x) {
  int exponent = 0;
  const double fraction = std::frexp(static_cast<double>(x), &exponent);  // x = fraction 2^exponent
  auto significand = static_cast<int64_t>(std::ldexp(std::fabs(fraction), 24));
  int trailing = 0;
  while ((significand & 1) == 0) significand >>= 1, ++trailing;
  return -(exponent - 24 + trailing);
}

// A line's facts as the scan makes them (its sums added in the line's order here: the scan's order differs, so the
// norms may differ in their last bits).
inline fastgemm::detail::ozaki::LineFacts facts_of(const std::vector<float> &line,
                                                   const fastgemm::detail::ozaki::CertificateConstants &constants) {
  double squares = 0, absolutes = 0;
  float largest = 0, smallest = std::numeric_limits<float>::infinity();
  int nonzeros = 0, integral = fastgemm::detail::ozaki::kNoIntegralExponent;
  bool finite = true;
  for (const float x : line) {
    if (!std::isfinite(x)) finite = false;
    if (x == 0.0f || !std::isfinite(x)) continue;
    squares += static_cast<double>(x) * x;
    absolutes += std::fabs(static_cast<double>(x));
    largest = std::fmax(largest, std::fabs(x));
    smallest = std::fmin(smallest, std::fabs(x));
    ++nonzeros;
    const int e = lowest_bit_exponent(x);
    integral = e > integral ? e : integral;
  }
  return fastgemm::detail::ozaki::line_facts(squares, absolutes, largest, smallest, nonzeros, integral, finite,
                                             constants);
}

}  // namespace fgtest
