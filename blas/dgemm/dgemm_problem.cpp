// SPDX-License-Identifier: Apache-2.0
#include "blas/dgemm/dgemm_problem.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace fastgemm::blas_dgemm {
namespace {

using detail::Status;
using detail::StatusCode;

Status invalid(const std::string &message) { return Status::failure(StatusCode::invalid_value, message); }

bool valid_op(fg_op_t op) { return op == FG_OP_N || op == FG_OP_T || op == FG_OP_C; }

const char *op_name(fg_op_t op) { return op == FG_OP_N ? "FG_OP_N" : "FG_OP_T"; }

// `name` = ld must be at least max(1, length) (`length` named `what`), a line of its operand in the call's layout.
Status check_ld(const char *name, int64_t ld, int64_t length, const char *what, const DgemmCall &call, fg_op_t op) {
  const int64_t least = std::max<int64_t>(1, length);
  if (ld >= least) return Status::success();
  return invalid(std::string(name) + " = " + std::to_string(ld) + " must be >= max(1, " + what +
                 ") = " + std::to_string(least) + " for " +
                 (call.layout == FG_ROW_MAJOR ? "FG_ROW_MAJOR, " : "FG_COL_MAJOR, ") + op_name(op));
}

// The operand's lines, `ld` apart, must lie within byte offsets that int64_t counts (only a call that no memory holds
// goes beyond).
Status check_extent(const char *name, int64_t lines, int64_t ld) {
  const double bytes = static_cast<double>(lines) * static_cast<double>(ld) * sizeof(double);
  if (bytes < 0x1p62) return Status::success();
  return invalid(std::string(name) + " spans " + std::to_string(lines) + " lines of " + std::to_string(ld) +
                 " elements, more bytes than int64_t counts");
}

}  // namespace

Status dgemm_problem(const DgemmCall &call, detail::BasicGemmProblem<double> *problem, DgemmWork *work) {
  if (call.layout != FG_ROW_MAJOR && call.layout != FG_COL_MAJOR)
    return invalid("layout = " + std::to_string(static_cast<int>(call.layout)) + " is no fg_layout_t");
  if (!valid_op(call.transa))
    return invalid("transa = " + std::to_string(static_cast<int>(call.transa)) + " is no fg_op_t");
  if (!valid_op(call.transb))
    return invalid("transb = " + std::to_string(static_cast<int>(call.transb)) + " is no fg_op_t");
  for (const auto &[name, value] : {std::pair<const char *, int64_t>{"m", call.m}, {"n", call.n}, {"k", call.k}})
    if (value < 0) return invalid(std::string(name) + " = " + std::to_string(value) + " must be >= 0");
  const bool row = call.layout == FG_ROW_MAJOR;
  const bool a_trans = call.transa != FG_OP_N, b_trans = call.transb != FG_OP_N;
  // Each leading dimension holds at least a line of its operand as stored: a row in row-major, a column in
  // column-major (lda >= k for row-major op N, >= m for column-major op N).
  const bool a_rows_k = row != a_trans, b_rows_n = row != b_trans;
  FG_RETURN_IF_ERROR(check_ld("lda", call.lda, a_rows_k ? call.k : call.m, a_rows_k ? "k" : "m", call, call.transa));
  FG_RETURN_IF_ERROR(check_ld("ldb", call.ldb, b_rows_n ? call.n : call.k, b_rows_n ? "n" : "k", call, call.transb));
  FG_RETURN_IF_ERROR(check_ld("ldc", call.ldc, row ? call.n : call.m, row ? "n" : "m", call, FG_OP_N));
  *work = DgemmWork::product;
  if (call.m == 0 || call.n == 0 || ((call.k == 0 || call.alpha == 0.0) && call.beta == 1.0)) {
    *work = DgemmWork::nothing;
    return Status::success();
  }
  if (call.k == 0 || call.alpha == 0.0) *work = DgemmWork::scale_c;
  if (call.C == nullptr) return invalid("C is NULL");
  if (*work == DgemmWork::product && call.A == nullptr) return invalid("A is NULL");
  if (*work == DgemmWork::product && call.B == nullptr) return invalid("B is NULL");
  FG_RETURN_IF_ERROR(check_extent("C", row ? call.m : call.n, call.ldc));
  if (*work == DgemmWork::product) {
    FG_RETURN_IF_ERROR(check_extent("A", a_rows_k ? call.m : call.k, call.lda));
    FG_RETURN_IF_ERROR(check_extent("B", b_rows_n ? call.k : call.n, call.ldb));
  }

  detail::BasicGemmProblem<double> p;
  p.m = row ? call.m : call.n;
  p.n = row ? call.n : call.m;
  p.k = call.k;
  p.alpha = call.alpha;
  p.beta = call.beta;
  const detail::BasicGemmOperand<double> a{call.A, call.lda, 0, a_trans}, b{call.B, call.ldb, 0, b_trans};
  p.a = row ? a : b;
  p.b = row ? b : a;
  p.c = call.C;
  p.ldc = call.ldc;
  *problem = p;
  return Status::success();
}

}  // namespace fastgemm::blas_dgemm
