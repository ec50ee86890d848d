// SPDX-License-Identifier: Apache-2.0
// What the emulated mode's tests (test_emulated*.cpp) share: operands of the accuracy suite's distributions and of
// the hard families, their double references, the per-element guarantee, and a product on the device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/gemm_harness.hpp"

namespace fgtest {

enum class Distribution {
  uniform,           // (-1, 1)
  uniform_positive,  // (0, 1)
  normal,
  lognormal,      // (U - 0.5) exp(phi N(0, 1))
  exponents,      // exponents spread over +-2^16
  scaled_lines,   // rows of A and columns of B scaled by 2^-20 .. 2^20
  near_max,       // A near FLT_MAX
  near_denormal,  // A near and in the denormal range
  beyond_moduli,  // one value near 1 in each row of A and column of B, the rest near 2^-40
};

struct Inputs {
  Distribution distribution = Distribution::uniform;
  double phi = 0;
  std::string name() const {
    static const char *const names[] = {"uniform(-1,1)", "uniform(0,1)",  "normal",
                                        "lognormal",     "exponents+-16", "lines scaled 2^+-20",
                                        "near FLT_MAX",  "near denormal", "isolated values"};
    std::string text = names[static_cast<int>(distribution)];
    if (distribution == Distribution::lognormal) text += " phi " + std::to_string(phi).substr(0, 3);
    return text;
  }
};

// Row-major op(A) (m x k) and op(B) (k x n) of the distribution.
struct Operands {
  int64_t m = 0, n = 0, k = 0;
  std::vector<float> a, b;
};

Operands make_operands(const Inputs &inputs, int64_t m, int64_t n, int64_t k, uint64_t seed);

// The exact product R (in double: relative error ~2^-53 sqrt(k), far below FP32's) and |A||B|.
struct Reference {
  std::vector<double> product, magnitude;
  // Nonzeros of each row of A and column of B: the guarantee's t (guarantee_of).
  std::vector<int64_t> row_nonzeros, col_nonzeros;
};

Reference reference_of(const Operands &o);

// What the last call's emulation did: its moduli count and the elements its certificate sent to FP32.
struct Emulation {
  int moduli = 0;
  int64_t fp32_elements = 0;
};

Emulation emulation_of(fg_handle_t handle);

// Device copies of the operands and C, with calls through fastgemm and through cuBLAS (FP32 math).
class DeviceProduct {
 public:
  explicit DeviceProduct(const Operands &o);

  void poison();  // NaN

  fg_status_t run(fg_handle_t handle, float alpha = 1.0f, float beta = 0.0f);

  std::vector<float> cublas_fp32();

  std::vector<float> result();
  float *c() { return c_.as<float>(); }
  // Other operands of the same shape into the same device memory: what a captured graph reads at its next replay.
  void load(const Operands &o);

 private:
  const Operands &o_;
  DeviceMemory a_, b_, c_;
};

fg_sgemm_algo_t last_algo(fg_handle_t handle);

bool all_nan(const std::vector<float> &values);

enum class Hard { inner, outlier, sparse, binary, counts, integers, cancel };

struct HardCase {
  Hard family;
  int parameter;  // inner: the exponents' spread; outlier: its size; sparse: nonzeros per 1000
  const char *name;
};

// Operands that defeat a scaling by each line alone: magnitude varying along k (A D times D^-1 B), an outlier
// column of A against a zero row of B, sparse operands stored dense, integers (exact in FP32), and columns
// that cancel in pairs.
Operands make_hard(const HardCase &hc, int64_t m, int64_t n, int64_t k, uint64_t seed);

// A reference with every element scaled by alpha.
Reference scaled(const Reference &r, double alpha);

// Elements of C beyond the guarantee |C - R| <= 2^-24 (1 + sqrt(t)) |A||B|, t = min(k, nonzeros of the row of A, of
// the column of B) at least 1 (the double reference's own error, below k 2^-53 |A||B|, allowed on top), and the
// largest |C - R| / (|A||B|) in units of 2^-24 sqrt(t).
struct Guarantee {
  int64_t beyond = 0;
  double worst = 0;
};

Guarantee guarantee_of(const std::vector<float> &c, const Reference &r, int64_t k);

}  // namespace fgtest
