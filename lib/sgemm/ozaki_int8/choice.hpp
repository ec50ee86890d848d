// SPDX-License-Identifier: Apache-2.0
// What FG_SGEMM_OZAKI_INT8 does with what its plan found: the moduli count, or FP32 throughout. The same code runs
// on the host, which reads the plan's summary back (a call outside a graph capture), and on the device, where one
// thread decides for a captured call's replays (product_kernels.cu's decide).
#pragma once

#include <cstdint>

#include "sgemm/ozaki_int8/math.hpp"
#include "sgemm/ozaki_int8/plan.hpp"
#include "tuning/tuning.hpp"

namespace fastgemm::detail::ozaki {

// The FP32 fix-up of the elements that NaN or Inf reach reads a row of op(A) and a column of op(B) per element,
// k FMAs each: it may take up to 1 / kFlaggedShare of the product's FMAs, or kFlaggedWork, whichever is more
// (a few milliseconds at most); beyond, plain FP32 throughout is the faster way.
constexpr double kFlaggedShare = 128, kFlaggedWork = double(1 << 26);

// Whether `rows` rows of op(A) and `cols` columns of op(B) holding NaN or Inf are too many for that fix-up.
FG_OZAKI_INLINE bool too_many_flagged(double rows, double cols, int64_t m, int64_t n, int64_t k, int64_t batch) {
  const double fix_up_work = (rows * static_cast<double>(n) + cols * static_cast<double>(m)) * static_cast<double>(k);
  const double product_work = static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) * k;
  return fix_up_work > kFlaggedWork && fix_up_work * kFlaggedShare > product_work;
}

// The moduli count of a call, from the histogram of the elements' needs (needs[N] elements need N moduli,
// needs[kNeedsFp32] no count).
FG_OZAKI_INLINE ModuliChoice choose_moduli(const unsigned long long (&needs)[kNeedsFp32 + 1], int64_t m, int64_t n,
                                           int64_t k, int64_t batch, bool reads_c) {
  // The rates of lib/tuning/tuning.hpp (estimates on the H100, bench/NOTES-emulated.md).
  using namespace tuning;
  // Rates as their inverses, known when compiled: the device's one thread deciding a replay divides nothing (a
  // double's division is a long sequence there; 13 counts of them took it about 6 µs). Seconds: a byte an element of
  // op(A) and op(B), a byte an element of C, one modulus's products, one element recomputed in FP32.
  constexpr double kSecondsPerByte = 1.0 / kMemoryBytesPerSecond;
  const double elements = static_cast<double>(m) * n * batch;
  const double work = 2.0 * elements * k;
  const double line_bytes = static_cast<double>(m + n) * k * batch * kSecondsPerByte;
  const double element_bytes = elements * kSecondsPerByte;
  const double product_seconds = work * (1.0 / kInt8OpsPerSecond);
  const double recompute_seconds = 2.0 * k * (1.0 / kRecomputeFlopsPerSecond);
  ModuliChoice choice;
  choice.fp32_seconds = work * (1.0 / kFp32FlopsPerSecond);
  double later_needs = static_cast<double>(needs[kNeedsFp32]);  // elements that need more than `count`
  double best = 1e300;                                          // above any estimate
  for (int count = kMaxModuli; count >= kMinModuli; --count) {
    const double residues = line_bytes * (4.0 + count);
    const double rebuild = element_bytes * (4.0 * count + 5.0 + (reads_c ? 4.0 : 0.0));
    const double seconds = count * product_seconds + residues + rebuild + later_needs * recompute_seconds;
    if (seconds <= best) {  // ties go to fewer moduli: the cost is the same and the certificate holds either way
      best = seconds;
      choice.count = count;
      choice.fp32_elements = static_cast<int64_t>(later_needs);
    }
    later_needs += static_cast<double>(needs[count]);
  }
  choice.emulated_seconds = best;
  // Where nothing is recomputed the emulation runs whatever its speed (AUTO takes it only where it pays); where
  // recomputing makes it slower than FP32 throughout, it declines, unless the whole call is too short for the
  // difference to matter (then a forced emulation still runs).
  constexpr double kNegligibleSeconds = 50e-6;
  if (choice.fp32_elements > 0 && best > choice.fp32_seconds && best > kNegligibleSeconds) {
    // The emulation is slower than FP32 here anyway: rather than recompute elements, take the fewest moduli that
    // certify every element, if any do.
    choice.declined = true;
    for (int count = kMinModuli; count <= kMaxModuli && choice.declined; ++count) {
      unsigned long long above = needs[kNeedsFp32];
      for (int larger = count + 1; larger <= kMaxModuli; ++larger) above += needs[larger];
      if (above == 0) {
        choice.count = count;
        choice.fp32_elements = 0;
        choice.declined = false;
      }
    }
  }
  return choice;
}

}  // namespace fastgemm::detail::ozaki
