// SPDX-License-Identifier: Apache-2.0
// Both headers compile as C++11 on their own.
#include "fastgemm/fastgemm.hpp"

int fastgemm_header_cxx11_check() { return fastgemm::Error(FG_STATUS_INVALID_VALUE, "").status(); }
