// SPDX-License-Identifier: Apache-2.0
// What the parts of libfastgemm_blas share: the settings read from the environment once, the types of the
// SGEMM entry points it defines and looks up, and CBLAS's values.
#pragma once

#include <cstddef>

namespace fastgemm_blas {

using FortranSgemm = void (*)(const char *, const char *, const int *, const int *, const int *, const float *,
                              const float *, const int *, const float *, const int *, const float *, float *,
                              const int *, size_t, size_t);
using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *,
                            int);

// CBLAS's enumerations, as cblas.h numbers them.
enum CblasValue {
  row_major = 101,
  col_major = 102,
  no_trans = 111,
  trans = 112,
  conj_trans = 113,
  upper = 121,
  lower = 122,
  non_unit = 131,
  unit = 132,
  left = 141,
  right = 142
};

struct Settings {
  double min_flops = 0.0;
  bool default_rule = true;        // FASTGEMM_BLAS_MIN_FLOPS unset: the rule of gpu.cpp
  bool log = false;                // FASTGEMM_LOG=1
  const char *devices = nullptr;   // FASTGEMM_BLAS_DEVICES as given; nullptr or "": the handle's own device
  const char *fallback = nullptr;  // FASTGEMM_BLAS_FALLBACK: the BLAS library for the CPU's products
};

const Settings &settings();

}  // namespace fastgemm_blas
