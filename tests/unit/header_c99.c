/* SPDX-License-Identifier: Apache-2.0 */
/* The C header compiles as C99 on its own. */
#include "fastgemm/fastgemm.h"

int fastgemm_header_c99_check(void) {
  return FG_VERSION == FG_VERSION_MAJOR * 10000 + FG_VERSION_MINOR * 100 + FG_VERSION_PATCH;
}
