// SPDX-License-Identifier: Apache-2.0
#include "capi/calls.hpp"

#include <string>

namespace fastgemm::capi {
namespace {

using detail::StatusCode;

// A size query answers for any pointer alignment, so it asks the algorithm about each alignment in turn:
// the answer is the most bytes among the alignments the algorithm runs, and a refusal only when it runs
// none of them.
class WorkspaceAnswer {
 public:
  // Takes one alignment's answer; an error other than a refusal ends the query.
  Status take(const Status &status, size_t needed) {
    asked_ = true;
    if (status.ok()) {
      runs_any_ = true;
      most_ = needed > most_ ? needed : most_;
      return Status::success();
    }
    if (status.code != StatusCode::not_supported) return status;
    if (refusal_.ok()) refusal_ = status;
    return Status::success();
  }
  // No alignment asked about means no work: nothing needed.
  Status give(size_t *bytes) const {
    if (asked_ && !runs_any_) return refusal_;
    *bytes = most_;
    return Status::success();
  }

 private:
  bool asked_ = false, runs_any_ = false;
  size_t most_ = 0;
  Status refusal_ = Status::success();
};

// Addresses for the problems the queries build, `offset` bytes past 256-byte alignment. The written array
// starts low and the arrays read start at 2^63 and past: whatever the sizes, the validator's offsets (under
// 2^63 bytes) keep the written one below the others, so that no query is refused for memory it made up.
enum class QueryArray { written, first_read, second_read };
template <typename T>
T *query_address(QueryArray array, uintptr_t offset) {
  const uintptr_t read_base = uintptr_t{1} << 63;
  const uintptr_t base = array == QueryArray::written      ? 0
                         : array == QueryArray::first_read ? read_base
                                                           : read_base + (uintptr_t{1} << 62);
  return reinterpret_cast<T *>(base + 256 + offset);
}

}  // namespace

Status any_pointer_is_device_memory(const void *, PointerInfo *info) {
  info->kind = PointerKind::device_accessible;
  return Status::success();
}

Status sgemm_call(const SgemmArgs &args, const PointerInspector &inspect, const SgemmSettings &settings,
                  SgemmPlan *plan) {
  detail::GemmProblem problem;
  GemmWork work = GemmWork::nothing;
  FG_RETURN_IF_ERROR(validate_sgemm(args, inspect, &problem, &work));
  problem.math = settings.math;
  problem.reproducibility = settings.reproducibility;
  plan->work = work;
  plan->problem = problem;
  plan->algo = settings.algo;
  return Status::success();
}

Status rowmean_call(const RowmeanArgs &args, const PointerInspector &inspect, fg_rowmean_algo_t algo,
                    RowmeanPlan *plan) {
  detail::RowmeanProblem problem;
  bool empty = true;
  FG_RETURN_IF_ERROR(validate_rowmean(args, inspect, &problem, &empty));
  plan->empty = empty;
  plan->problem = problem;
  plan->algo = algo;
  return Status::success();
}

Status set_workspace_call(void *workspace, size_t bytes, const PointerInspector &inspect, WorkspaceHolder &holder) {
  FG_RETURN_IF_ERROR(validate_workspace(workspace, bytes, inspect));
  return holder.set(workspace, bytes);
}

Status sgemm_workspace_query(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, int64_t batch_count,
                             const SgemmSettings &settings, WorkspaceSizer &sizer, size_t *bytes) {
  if (bytes == nullptr) return null_argument("bytes");
  const bool row = layout == FG_ROW_MAJOR, a_n = transa == FG_OP_N, b_n = transb == FG_OP_N;
  WorkspaceAnswer answer;
  for (int64_t round : {1, 4})
    for (uintptr_t offset : {0, 4}) {
      // A length that cannot be rounded up within int64 stays as it is: its offsets overflow anyway.
      const auto ld = [round](int64_t length) {
        const int64_t least = length > 1 ? length : 1;
        return least > INT64_MAX - (round - 1) ? least : (least + (round - 1)) / round * round;
      };
      const int64_t lda = ld(row == a_n ? k : m), ldb = ld(row == b_n ? n : k), ldc = ld(row ? n : m);
      const int64_t a_lines = row == a_n ? m : k, b_lines = row == b_n ? k : n, c_lines = row ? m : n;
      SgemmArgs args;
      args.layout = layout, args.transa = transa, args.transb = transb;
      args.m = m, args.n = n, args.k = k;
      args.alpha = 1.0f, args.beta = 0.0f;
      args.A = query_address<const float>(QueryArray::first_read, offset), args.lda = lda;
      args.B = query_address<const float>(QueryArray::second_read, offset), args.ldb = ldb;
      args.C = query_address<float>(QueryArray::written, offset), args.ldc = ldc;
      args.batch_count = batch_count;
      args.batched = true;
      // Dense batches; a size that overflows is the validator's to name.
      if (__builtin_mul_overflow(a_lines, lda, &args.stride_a) ||
          __builtin_mul_overflow(b_lines, ldb, &args.stride_b) || __builtin_mul_overflow(c_lines, ldc, &args.stride_c))
        args.stride_a = args.stride_b = args.stride_c = INT64_MAX;
      detail::GemmProblem problem;
      GemmWork work = GemmWork::nothing;
      // The dense leading dimensions are the caller's shape: their refusal is the answer. Rounded up past the
      // offsets int64 holds, they are no layout a caller can pass, and need nothing.
      const Status valid = validate_sgemm(args, any_pointer_is_device_memory, &problem, &work);
      if (!valid.ok()) {
        if (round == 1) return valid;
        continue;
      }
      if (work != GemmWork::product) continue;
      problem.math = settings.math;
      problem.reproducibility = settings.reproducibility;
      size_t needed = 0;
      const Status status = sizer.sgemm_bytes(problem, &needed);
      FG_RETURN_IF_ERROR(answer.take(status, needed));
    }
  return answer.give(bytes);
}

Status rowmean_workspace_query(int dtype, int64_t L, int64_t M, int64_t N, WorkspaceSizer &sizer, size_t *bytes) {
  if (bytes == nullptr) return null_argument("bytes");
  WorkspaceAnswer answer;
  const uintptr_t element = dtype == FG_F64 ? 8 : 4;
  for (uintptr_t offset : {uintptr_t{0}, element}) {
    detail::RowmeanProblem problem;
    bool empty = true;
    RowmeanArgs args;
    args.dtype = dtype;
    args.input = query_address<const void>(QueryArray::first_read, offset);
    args.matrix = query_address<const void>(QueryArray::second_read, offset);
    args.output = query_address<void>(QueryArray::written, offset);
    args.L = L, args.M = M, args.N = N;
    FG_RETURN_IF_ERROR(validate_rowmean(args, any_pointer_is_device_memory, &problem, &empty));
    if (empty) continue;
    size_t needed = 0;
    const Status status = sizer.rowmean_bytes(problem, &needed);
    FG_RETURN_IF_ERROR(answer.take(status, needed));
  }
  return answer.give(bytes);
}

}  // namespace fastgemm::capi
