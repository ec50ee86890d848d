// SPDX-License-Identifier: Apache-2.0
// rowmean_matvec's algorithms follow the variant protocol (core/variant.hpp) over the canonical RowmeanProblem. Each
// is defined in its own file as `extern const RowmeanVariant name = {...}` and listed in registry.cpp's table.
#pragma once

#include "core/problem.hpp"
#include "core/variant.hpp"
#include "fastgemm/fastgemm.h"

namespace fastgemm::detail {

using RowmeanVariant = Variant<RowmeanProblem, fg_rowmean_algo_t>;

}  // namespace fastgemm::detail
