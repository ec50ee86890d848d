// SPDX-License-Identifier: Apache-2.0
// A block size from the environment (FASTGEMM_PBLAS_BLOCK, FASTGEMM_LAPACK_BLOCK): a whole number from 1 to
// `largest`, written in decimal digits alone, without a sign, spaces or leading zeros.
#pragma once

namespace fastgemm_blas {

// The block `text` names, or 0 where it names none within 1 to `largest`.
inline long parse_block_setting(const char *text, long largest) {
  if (text[0] < '1' || text[0] > '9') return 0;
  long value = 0;
  for (const char *p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return 0;
    value = value * 10 + (*p - '0');
    if (value > largest) return 0;
  }
  return value;
}

}  // namespace fastgemm_blas
