/* SPDX-License-Identifier: Apache-2.0 */
/* The C header compiles as C99 on its own, its deprecated enumerator names included. */
#include "fastgemm/fastgemm.h"

/* A C enumeration may give one value two names: the former one stays as an alias. */
typedef char fastgemm_relay_alias_check[FG_ROWMEAN_PIPELINED == FG_ROWMEAN_RELAY ? 1 : -1];

int fastgemm_header_c99_check(void) {
  return FG_VERSION == FG_VERSION_MAJOR * 10000 + FG_VERSION_MINOR * 100 + FG_VERSION_PATCH;
}
