// SPDX-License-Identifier: Apache-2.0
#include "support/bad_inputs.hpp"

#include <functional>

namespace fgtest {

SgemmCall valid_sgemm_call(const float *A, const float *B, float *C) {
  return SgemmCall{FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 4, 5, 6, 1.0f, A, 6, 24, B, 5, 30, 0.5f, C, 5, 20, 2};
}

std::vector<BadSgemmCase> bad_sgemm_cases(const float *A, const float *B, float *C, float *host) {
  std::vector<BadSgemmCase> cases;
  const auto add = [&](std::string what, bool batched_only, std::string part,
                       const std::function<void(SgemmCall &)> &change) {
    SgemmCall call = valid_sgemm_call(A, B, C);
    change(call);
    cases.push_back({std::move(what), call, batched_only, std::move(part)});
  };
  add("bad layout", false, "layout = 0", [](SgemmCall &c) { c.layout = static_cast<fg_layout_t>(0); });
  add("layout off by one", false, "layout = 103", [](SgemmCall &c) { c.layout = static_cast<fg_layout_t>(103); });
  add("bad transa", false, "transa = 110", [](SgemmCall &c) { c.transa = static_cast<fg_op_t>(110); });
  add("bad transb", false, "transb = 114", [](SgemmCall &c) { c.transb = static_cast<fg_op_t>(114); });
  add("negative m", false, "m = -1 must be >= 0", [](SgemmCall &c) { c.m = -1; });
  add("negative n", false, "n = -1 must be >= 0", [](SgemmCall &c) { c.n = -1; });
  add("negative k", false, "k = -2 must be >= 0", [](SgemmCall &c) { c.k = -2; });
  add("short lda, row-major N", false, "lda = 5 must be >= max(1, k) = 6 for FG_ROW_MAJOR, FG_OP_N",
      [](SgemmCall &c) { c.lda = 5; });
  add("short lda, row-major T", false, "lda = 3 must be >= max(1, m) = 4 for FG_ROW_MAJOR, FG_OP_T",
      [](SgemmCall &c) { c.transa = FG_OP_T, c.lda = 3; });
  add("short lda, column-major N", false, "lda = 3 must be >= max(1, m) = 4 for FG_COL_MAJOR, FG_OP_N",
      [](SgemmCall &c) { c.layout = FG_COL_MAJOR, c.lda = 3, c.ldb = 6, c.ldc = 4; });
  add("short lda, column-major C", false, "lda = 5 must be >= max(1, k) = 6 for FG_COL_MAJOR, FG_OP_C",
      [](SgemmCall &c) { c.layout = FG_COL_MAJOR, c.transa = FG_OP_C, c.lda = 5, c.ldb = 6, c.ldc = 4; });
  add("short ldb", false, "ldb = 4 must be >= max(1, n) = 5", [](SgemmCall &c) { c.ldb = 4; });
  add("short ldb, transposed", false, "ldb = 5 must be >= max(1, k) = 6",
      [](SgemmCall &c) { c.transb = FG_OP_T, c.ldb = 5; });
  add("short ldc", false, "ldc = 4 must be >= max(1, n) = 5", [](SgemmCall &c) { c.ldc = 4; });
  add("ld of 0 with k 0", false, "lda = 0 must be >= max(1, k) = 1", [](SgemmCall &c) { c.k = 0, c.lda = 0; });
  add("negative stride_a", true, "stride_a = -1 must be >= 0", [](SgemmCall &c) { c.stride_a = -1; });
  add("negative stride_b", true, "stride_b = -1 must be >= 0", [](SgemmCall &c) { c.stride_b = -1; });
  add("negative stride_c", true, "stride_c = -1 must be >= 0", [](SgemmCall &c) { c.stride_c = -1; });
  add("negative batch_count", true, "batch_count = -1 must be >= 0", [](SgemmCall &c) { c.batch_count = -1; });
  add("NULL A", false, "A is NULL", [](SgemmCall &c) { c.A = nullptr; });
  add("NULL B", false, "B is NULL", [](SgemmCall &c) { c.B = nullptr; });
  add("NULL C", false, "C is NULL", [](SgemmCall &c) { c.C = nullptr; });
  add("NULL C with k 0", false, "C is NULL", [](SgemmCall &c) { c.k = 0, c.lda = 1, c.C = nullptr; });
  add("host A", false, "pageable host memory", [&](SgemmCall &c) { c.A = host; });
  add("host B", false, "pageable host memory", [&](SgemmCall &c) { c.B = host; });
  add("host C", false, "pageable host memory", [&](SgemmCall &c) { c.C = host; });
  add("lda overflows", false, "A's element offsets overflow int64", [](SgemmCall &c) { c.lda = INT64_MAX / 2; });
  add("m overflows C", false, "C's element offsets overflow int64", [](SgemmCall &c) { c.m = INT64_MAX, c.k = 0; });
  add("stride_b overflows", true, "B's element offsets overflow int64",
      [](SgemmCall &c) { c.stride_b = INT64_MAX / 2, c.batch_count = 3; });
  add("stride_c of 0", true, "stride_c = 0 makes the 2 products", [](SgemmCall &c) { c.stride_c = 0; });
  add("overlapping stride_c", true, "stride_c = 10 makes", [](SgemmCall &c) { c.stride_c = 10; });
  return cases;
}

RowmeanCall valid_rowmean_call(const void *input, const void *matrix, void *output) {
  return RowmeanCall{FG_F32, input, matrix, output, 4, 3, 2};
}

std::vector<BadRowmeanCase> bad_rowmean_cases(const void *input, const void *matrix, void *output, void *host) {
  std::vector<BadRowmeanCase> cases;
  const auto add = [&](std::string what, std::string part, const std::function<void(RowmeanCall &)> &change) {
    RowmeanCall call = valid_rowmean_call(input, matrix, output);
    change(call);
    cases.push_back({std::move(what), call, std::move(part)});
  };
  add("bad dtype", "dtype = 2", [](RowmeanCall &c) { c.dtype = static_cast<fg_dtype_t>(2); });
  add("negative L", "L = -1 must be >= 0", [](RowmeanCall &c) { c.L = -1; });
  add("M of 0", "M = 0 must be >= 1", [](RowmeanCall &c) { c.M = 0; });
  add("negative M", "M = -3 must be >= 1", [](RowmeanCall &c) { c.M = -3; });
  add("negative N", "N = -1 must be >= 0", [](RowmeanCall &c) { c.N = -1; });
  add("NULL input", "input is NULL", [](RowmeanCall &c) { c.input = nullptr; });
  add("NULL matrix", "matrix is NULL", [](RowmeanCall &c) { c.matrix = nullptr; });
  add("NULL output", "output is NULL", [](RowmeanCall &c) { c.output = nullptr; });
  add("host input", "pageable host memory", [&](RowmeanCall &c) { c.input = host; });
  add("host output", "pageable host memory", [&](RowmeanCall &c) { c.output = host; });
  add("input size overflows", "overflow int64",
      [](RowmeanCall &c) { c.L = int64_t(1) << 31, c.M = int64_t(1) << 31, c.N = 8; });
  add("matrix size overflows", "overflow int64", [](RowmeanCall &c) { c.L = int64_t(1) << 40, c.M = 1, c.N = 1; });
  add("output overlaps input", "output overlaps input",
      [&](RowmeanCall &c) { c.output = const_cast<void *>(c.input); });
  return cases;
}

}  // namespace fgtest
