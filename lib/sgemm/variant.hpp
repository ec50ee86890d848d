// SPDX-License-Identifier: Apache-2.0
// SGEMM's algorithms follow the variant protocol (core/variant.hpp) over the canonical GemmProblem. Each is defined
// in its own file as `extern const SgemmVariant name = {...}` and listed in registry.cpp's table.
#pragma once

#include "core/problem.hpp"
#include "core/variant.hpp"
#include "fastgemm/fastgemm.h"

namespace fastgemm::detail {

using SgemmVariant = Variant<GemmProblem, fg_sgemm_algo_t>;

}  // namespace fastgemm::detail
