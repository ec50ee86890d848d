// SPDX-License-Identifier: Apache-2.0
// The fixed problems of `fastgemm-bench sgemm --suite`, which fastgemm-tune times as well.
#pragma once

#include <fastgemm/fastgemm.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

struct GemmShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;
  fg_layout_t layout = FG_ROW_MAJOR;
  fg_op_t transa = FG_OP_N;
  fg_op_t transb = FG_OP_N;
  std::string memory = "device";  // or "pageable", "pinned": host operands, through fg_sgemm_host
};

// The squares 128 ... 16384 of the classic sweep.
const std::vector<int64_t> &classic_sizes();

// The classic squares, odd squares, rectangles, every transpose and the column-major layout at 4096^3, and batches.
std::vector<GemmShape> sgemm_suite();

}  // namespace bench
