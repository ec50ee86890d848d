// SPDX-License-Identifier: Apache-2.0
// Both headers compile as C++11 on their own, the C header's deprecated enumerator names included.
#include "fastgemm/fastgemm.hpp"

static_assert(FG_ROWMEAN_PIPELINED == FG_ROWMEAN_RELAY, "the relay's former name is an alias of its value");

int fastgemm_header_cxx11_check() { return fastgemm::Error(FG_STATUS_INVALID_VALUE, "").status(); }
