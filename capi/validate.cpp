#include "capi/validate.hpp"

#include <cinttypes>
#include <cstdio>
#include <string>

namespace fastgemm::capi {
namespace {

using detail::StatusCode;

Status invalid(std::string message) { return Status::failure(StatusCode::invalid_value, std::move(message)); }

std::string int_text(int64_t value) { return std::to_string(value); }

const char *layout_name(int layout) { return layout == FG_ROW_MAJOR ? "FG_ROW_MAJOR" : "FG_COL_MAJOR"; }
const char *op_name(int op) { return op == FG_OP_N ? "FG_OP_N" : (op == FG_OP_T ? "FG_OP_T" : "FG_OP_C"); }
bool valid_op(int op) { return op == FG_OP_N || op == FG_OP_T || op == FG_OP_C; }

// A matrix in memory: `lines` runs of `length` contiguous elements, `ld` apart; `count` of them `stride` apart.
struct Footprint {
  int64_t lines, length;
  const char *length_name;  // the size `length` stands for, for messages: "m", "n" or "k"
};

// One past the farthest element offset the matrices reach, or -1 when it overflows int64 (or its byte
// offset does, for elements of `element_bytes`).
int64_t extent(const Footprint &shape, int64_t ld, int64_t stride, int64_t count, int64_t element_bytes) {
  int64_t one = 0, batches = 0, total = 0, bytes = 0;
  if (__builtin_mul_overflow(shape.lines - 1, ld, &one) || __builtin_add_overflow(one, shape.length, &one) ||
      __builtin_mul_overflow(count - 1, stride, &batches) || __builtin_add_overflow(one, batches, &total) ||
      __builtin_mul_overflow(total, element_bytes, &bytes))
    return -1;
  return total;
}

std::string pointer_text(const void *pointer) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", pointer);
  return text;
}

// The rule every pointer that is read or written follows.
Status check_pointer(const char *name, const void *pointer, const char *why, const PointerInspector &inspect) {
  if (pointer == nullptr) return invalid(std::string(name) + " is NULL but is " + why);
  PointerKind kind = PointerKind::unknown;
  FG_RETURN_IF_ERROR(inspect(pointer, &kind));
  switch (kind) {
    case PointerKind::device_accessible:
      return Status::success();
    case PointerKind::pageable_host:
      return invalid(std::string(name) + " = " + pointer_text(pointer) +
                     " is pageable host memory, which the device cannot read; pass device, managed or pinned memory");
    case PointerKind::other_device:
      return invalid(std::string(name) + " = " + pointer_text(pointer) +
                     " is memory of another device than the handle's");
    case PointerKind::unknown:
      break;
  }
  return invalid(std::string(name) + " = " + pointer_text(pointer) + " is not memory the CUDA driver knows");
}

Status check_size(const char *name, int64_t value) {
  if (value < 0) return invalid(std::string(name) + " = " + int_text(value) + " must be >= 0");
  return Status::success();
}

Status check_ld(const char *name, int64_t ld, const Footprint &shape, const SgemmArgs &args, int op) {
  const int64_t minimum = shape.length > 1 ? shape.length : 1;
  if (ld >= minimum) return Status::success();
  return invalid(std::string(name) + " = " + int_text(ld) + " must be >= max(1, " + shape.length_name +
                 ") = " + int_text(minimum) + " for " + layout_name(args.layout) + ", " + op_name(op));
}

Status check_extent(const char *name, const char *ld_name, const Footprint &shape, int64_t ld, int64_t stride,
                    int64_t count, int64_t *out) {
  const int64_t total = extent(shape, ld, stride, count, sizeof(float));
  if (total < 0)
    return invalid(std::string(name) + "'s element offsets overflow int64 (" + ld_name + " = " + int_text(ld) +
                   ", stride = " + int_text(stride) + ", batch_count = " + int_text(count) + ")");
  *out = total;
  return Status::success();
}

// Two products of a batch must never write one element of C. Accepted: stacked matrices (stride_c at least
// one matrix's extent) or matrices side by side within each line (stride_c at least the line length, and
// all of them fitting within ldc).
Status check_c_stride(const SgemmArgs &args, const Footprint &c_shape) {
  if (args.batch_count <= 1) return Status::success();
  const int64_t one_extent = extent(c_shape, args.ldc, 0, 1, 1);
  if (args.stride_c >= one_extent) return Status::success();
  int64_t side_by_side = 0;
  if (args.stride_c >= c_shape.length && !__builtin_mul_overflow(args.batch_count - 1, args.stride_c, &side_by_side) &&
      side_by_side <= args.ldc - c_shape.length)
    return Status::success();
  return invalid("stride_c = " + int_text(args.stride_c) + " makes the " + int_text(args.batch_count) +
                 " products of the batch write the same elements of C: it must be >= " + int_text(one_extent) +
                 " (one C matrix), or >= " + int_text(c_shape.length) +
                 " with all products side by side within ldc = " + int_text(args.ldc));
}

}  // namespace

Status validate_sgemm(const SgemmArgs &args, const PointerInspector &inspect, detail::GemmProblem *problem,
                      GemmWork *work) {
  if (args.layout != FG_ROW_MAJOR && args.layout != FG_COL_MAJOR)
    return invalid("layout = " + int_text(args.layout) + " must be FG_ROW_MAJOR (101) or FG_COL_MAJOR (102)");
  if (!valid_op(args.transa))
    return invalid("transa = " + int_text(args.transa) + " must be FG_OP_N (111), FG_OP_T (112) or FG_OP_C (113)");
  if (!valid_op(args.transb))
    return invalid("transb = " + int_text(args.transb) + " must be FG_OP_N (111), FG_OP_T (112) or FG_OP_C (113)");
  FG_RETURN_IF_ERROR(check_size("m", args.m));
  FG_RETURN_IF_ERROR(check_size("n", args.n));
  FG_RETURN_IF_ERROR(check_size("k", args.k));

  const bool row_major = args.layout == FG_ROW_MAJOR;
  const bool a_n = args.transa == FG_OP_N, b_n = args.transb == FG_OP_N;
  // In memory, a row-major matrix is lines of its rows, a column-major one lines of its columns: A is
  // m lines of k unless exactly one of column-major and transposed holds.
  const Footprint a_shape = row_major == a_n ? Footprint{args.m, args.k, "k"} : Footprint{args.k, args.m, "m"};
  const Footprint b_shape = row_major == b_n ? Footprint{args.k, args.n, "n"} : Footprint{args.n, args.k, "k"};
  const Footprint c_shape = row_major ? Footprint{args.m, args.n, "n"} : Footprint{args.n, args.m, "m"};
  FG_RETURN_IF_ERROR(check_ld("lda", args.lda, a_shape, args, args.transa));
  FG_RETURN_IF_ERROR(check_ld("ldb", args.ldb, b_shape, args, args.transb));
  FG_RETURN_IF_ERROR(check_ld("ldc", args.ldc, c_shape, args, FG_OP_N));
  if (args.batched) {
    FG_RETURN_IF_ERROR(check_size("stride_a", args.stride_a));
    FG_RETURN_IF_ERROR(check_size("stride_b", args.stride_b));
    FG_RETURN_IF_ERROR(check_size("stride_c", args.stride_c));
    FG_RETURN_IF_ERROR(check_size("batch_count", args.batch_count));
  }
  const int64_t batch = args.batched ? args.batch_count : 1;

  *work = GemmWork::nothing;
  if (args.m == 0 || args.n == 0 || batch == 0) return Status::success();
  const bool reads_ab = args.k > 0 && args.alpha != 0.0f;
  if (!reads_ab && args.beta == 1.0f) return Status::success();

  int64_t unused = 0;
  if (reads_ab) {
    FG_RETURN_IF_ERROR(check_extent("A", "lda", a_shape, args.lda, args.stride_a, batch, &unused));
    FG_RETURN_IF_ERROR(check_extent("B", "ldb", b_shape, args.ldb, args.stride_b, batch, &unused));
  }
  FG_RETURN_IF_ERROR(check_extent("C", "ldc", c_shape, args.ldc, args.stride_c, batch, &unused));
  if (args.batched) FG_RETURN_IF_ERROR(check_c_stride(args, c_shape));
  if (reads_ab) {
    FG_RETURN_IF_ERROR(check_pointer("A", args.A, "read (m, n, k > 0 and alpha != 0)", inspect));
    FG_RETURN_IF_ERROR(check_pointer("B", args.B, "read (m, n, k > 0 and alpha != 0)", inspect));
  }
  FG_RETURN_IF_ERROR(check_pointer("C", args.C, "written (m, n > 0)", inspect));

  // Column-major C = op(A) op(B) is row-major C^T = op(B)^T op(A)^T: swap the operands and m with n.
  const detail::GemmOperand a{args.A, args.lda, args.stride_a, !a_n};
  const detail::GemmOperand b{args.B, args.ldb, args.stride_b, !b_n};
  detail::GemmProblem p;
  p.m = row_major ? args.m : args.n;
  p.n = row_major ? args.n : args.m;
  p.k = args.k;
  p.batch = batch;
  p.alpha = args.alpha;
  p.beta = args.beta;
  p.a = row_major ? a : b;
  p.b = row_major ? b : a;
  p.c = args.C;
  p.ldc = args.ldc;
  p.stride_c = args.stride_c;
  *problem = p;
  *work = reads_ab ? GemmWork::product : GemmWork::scale_c;
  return Status::success();
}

Status validate_rowmean(const RowmeanArgs &args, const PointerInspector &inspect, detail::RowmeanProblem *problem,
                        bool *empty) {
  if (args.dtype != FG_F32 && args.dtype != FG_F64)
    return invalid("dtype = " + int_text(args.dtype) + " must be FG_F32 (0) or FG_F64 (1)");
  FG_RETURN_IF_ERROR(check_size("L", args.L));
  if (args.M < 1)
    return invalid("M = " + int_text(args.M) + " must be >= 1: a row mean needs at least one value");
  FG_RETURN_IF_ERROR(check_size("N", args.N));
  *empty = args.L == 0 || args.N == 0;
  if (*empty) return Status::success();

  const fg_dtype_t dtype = static_cast<fg_dtype_t>(args.dtype);
  const int64_t element = detail::element_size(dtype);
  int64_t input_count = 0, input_bytes = 0, matrix_bytes = 0, output_bytes = 0;
  if (__builtin_mul_overflow(args.N, args.L, &input_count) ||
      __builtin_mul_overflow(input_count, args.M, &input_count) ||
      __builtin_mul_overflow(input_count, element, &input_bytes))
    return invalid("the input's N * L * M = " + int_text(args.N) + " * " + int_text(args.L) + " * " +
                   int_text(args.M) + " elements overflow int64");
  if (__builtin_mul_overflow(args.L, args.L, &matrix_bytes) ||
      __builtin_mul_overflow(matrix_bytes, element, &matrix_bytes))
    return invalid("the matrix's L * L = " + int_text(args.L) + " * " + int_text(args.L) + " elements overflow int64");
  output_bytes = args.L * args.N * element;  // bounded by the input's size, which fits

  FG_RETURN_IF_ERROR(check_pointer("input", args.input, "read (L, N > 0)", inspect));
  FG_RETURN_IF_ERROR(check_pointer("matrix", args.matrix, "read (L, N > 0)", inspect));
  FG_RETURN_IF_ERROR(check_pointer("output", args.output, "written (L, N > 0)", inspect));
  const auto overlaps = [&](const void *other, int64_t other_bytes) {
    const auto out = reinterpret_cast<uintptr_t>(args.output), in = reinterpret_cast<uintptr_t>(other);
    return out < in + static_cast<uintptr_t>(other_bytes) && in < out + static_cast<uintptr_t>(output_bytes);
  };
  if (overlaps(args.input, input_bytes)) return invalid("output overlaps input");
  if (overlaps(args.matrix, matrix_bytes)) return invalid("output overlaps matrix");

  *problem = detail::RowmeanProblem{dtype, args.input, args.matrix, args.output, args.L, args.M, args.N};
  return Status::success();
}

}  // namespace fastgemm::capi
