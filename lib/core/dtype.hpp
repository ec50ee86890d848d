// SPDX-License-Identifier: Apache-2.0
// The one place where a problem's runtime element type becomes a template type.
#pragma once

#include "fastgemm/fastgemm.h"

namespace fastgemm::detail {

// Calls function(T{}) with T the C++ type of `dtype` (double for FG_F64, float for FG_F32) and returns its result:
//   dispatch_dtype(p.dtype, [&](auto zero) { return run_typed<decltype(zero)>(p, context); })
template <typename Function>
decltype(auto) dispatch_dtype(fg_dtype_t dtype, Function &&function) {
  if (dtype == FG_F64) return function(double{});
  return function(float{});
}

}  // namespace fastgemm::detail
