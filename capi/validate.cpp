// SPDX-License-Identifier: Apache-2.0
#include "capi/validate.hpp"

#include <cinttypes>
#include <cstdio>
#include <string>
#include <utility>

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

// The rule every pointer that is read or written follows: device-accessible memory of the handle's device,
// holding all `bytes` the call reaches from it.
Status check_pointer(const char *name, const void *pointer, int64_t bytes, const char *why,
                     const PointerInspector &inspect) {
  if (pointer == nullptr) return invalid(std::string(name) + " is NULL but is " + why);
  PointerInfo info;
  FG_RETURN_IF_ERROR(inspect(pointer, &info));
  switch (info.kind) {
    case PointerKind::device_accessible:
    case PointerKind::pinned_host: break;
    case PointerKind::pageable_host:
      return invalid(std::string(name) + " = " + pointer_text(pointer) +
                     " is pageable host memory, which the device cannot read; pass device, managed or pinned memory");
    case PointerKind::other_device:
      return invalid(std::string(name) + " = " + pointer_text(pointer) +
                     " is memory of another device than the handle's");
    case PointerKind::unknown:
      return invalid(std::string(name) + " = " + pointer_text(pointer) + " is not memory the CUDA driver knows");
  }
  const uintptr_t begin = reinterpret_cast<uintptr_t>(pointer);
  // A range that does not hold the pointer is another address space's (registered host memory seen
  // through its device address, say): nothing can be concluded from it.
  if (info.range_bytes == 0 || begin < info.range_begin || begin - info.range_begin >= info.range_bytes)
    return Status::success();
  const uint64_t room = info.range_bytes - (begin - info.range_begin);
  if (static_cast<uint64_t>(bytes) <= room) return Status::success();
  return invalid(std::string(name) + " = " + pointer_text(pointer) +
                 " runs past the end of its allocation: the call reaches " + int_text(bytes) +
                 " bytes from it, the allocation holds " + std::to_string(room));
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

// Two products of a batch must never write one element of C.
Status check_c_stride(const SgemmArgs &args, const Footprint &c_shape) {
  if (args.batch_count <= 1) return Status::success();
  if (!batches_overlap(c_shape.lines, c_shape.length, args.ldc, args.stride_c, args.batch_count))
    return Status::success();
  return invalid("stride_c = " + int_text(args.stride_c) + " makes the " + int_text(args.batch_count) +
                 " products of the batch write the same elements of C (ldc = " + int_text(args.ldc) +
                 "); it must keep every product's elements apart, e.g. stride_c >= " +
                 int_text(extent(c_shape, args.ldc, 0, 1, 1)) + " (one C matrix)");
}

// An operand's memory: `count` matrices of `shape`, ld and stride apart, from `data`.
struct Span {
  const void *data;
  Footprint shape;
  int64_t ld, stride, count, elements;  // elements: one past the farthest element offset
};

// Whether two sets of lines meet: blocks of `first_lines` consecutive lines, `first_count` of them
// `first_stride` lines apart from line 0, and blocks of `second_lines`, `second_count` of them `second_stride`
// apart from line `second_begin` (all sizes >= 1, strides >= 0). Exact; gives up (answers true) only when
// both sides have more than 2^20 blocks.
bool line_blocks_meet(int64_t first_lines, int64_t first_stride, int64_t first_count, int64_t second_begin,
                      int64_t second_lines, int64_t second_stride, int64_t second_count) {
  if (first_stride == 0) first_count = 1;
  if (second_stride == 0) second_count = 1;
  constexpr int64_t kMostSteps = int64_t{1} << 20;
  if (first_count > kMostSteps && second_count > kMostSteps) return true;
  // Walk the side with fewer blocks; for each of its blocks, the first block of the other side that ends past
  // its start is the only one that can meet it first.
  const bool walk_first = first_count <= second_count;
  const int64_t walk_begin = walk_first ? 0 : second_begin, other_begin = walk_first ? second_begin : 0;
  const int64_t walk_lines = walk_first ? first_lines : second_lines;
  const int64_t other_lines = walk_first ? second_lines : first_lines;
  const int64_t walk_stride = walk_first ? first_stride : second_stride;
  const int64_t other_stride = walk_first ? second_stride : first_stride;
  const int64_t walk_count = walk_first ? first_count : second_count;
  const int64_t other_count = walk_first ? second_count : first_count;
  for (int64_t i = 0; i < walk_count; ++i) {
    const int64_t begin = walk_begin + i * walk_stride, end = begin + walk_lines;
    int64_t j = 0;
    if (other_stride > 0) {
      // The least j with other_begin + j * other_stride + other_lines > begin.
      const int64_t reach = begin - other_begin - other_lines;  // j * other_stride > reach
      j = reach < 0 ? 0 : reach / other_stride + 1;
    }
    if (j >= other_count) continue;
    const int64_t other = other_begin + j * other_stride;
    if (other < end && other + other_lines > begin) return true;
  }
  return false;
}

// Whether C may share an element with an operand it is computed from. Exact where the two spans of
// addresses are apart, or where they are blocks of one matrix: the same leading dimension and strides of
// whole lines, which is how LAPACK-style callers pass blocks of one array (side by side within its lines, in
// lines of their own, or batches of either interleaved). Anything else that shares addresses is refused.
bool may_share_elements(const Span &c, const Span &x) {
  const uintptr_t c_begin = reinterpret_cast<uintptr_t>(c.data), x_begin = reinterpret_cast<uintptr_t>(x.data);
  const uintptr_t c_end = c_begin + static_cast<uintptr_t>(c.elements) * sizeof(float);
  const uintptr_t x_end = x_begin + static_cast<uintptr_t>(x.elements) * sizeof(float);
  if (c_end <= x_begin || x_end <= c_begin) return false;
  const bool whole_lines = (c.count == 1 || c.stride % c.ld == 0) && (x.count == 1 || x.stride % x.ld == 0);
  if (c.ld != x.ld || !whole_lines || (c_begin - x_begin) % sizeof(float) != 0) return true;
  // The later span starts `offset` elements into line `line` of the earlier one's (counting from its first).
  const bool c_later = c_begin >= x_begin;
  const Span &early = c_later ? x : c, &late = c_later ? c : x;
  const uint64_t distance = (c_later ? c_begin - x_begin : x_begin - c_begin) / sizeof(float);
  const int64_t ld = c.ld;
  const int64_t line = static_cast<int64_t>(distance / static_cast<uint64_t>(ld));
  const int64_t offset = static_cast<int64_t>(distance % static_cast<uint64_t>(ld));
  const auto stride_lines = [ld](const Span &s) { return s.count == 1 ? 0 : s.stride / ld; };
  const auto meet_from = [&](int64_t first_line) {
    return line_blocks_meet(early.shape.lines, stride_lines(early), early.count, first_line, late.shape.lines,
                            stride_lines(late), late.count);
  };
  // Within a line, the earlier span holds [0, early length) and the later one [offset, offset + late length),
  // which runs on into the next line where it passes ld.
  if (offset < early.shape.length && meet_from(line)) return true;
  return offset + late.shape.length > ld && meet_from(line + 1);
}

}  // namespace

Status null_argument(const char *name) { return invalid(std::string(name) + " is NULL"); }

Status validate_workspace(const void *workspace, size_t bytes, const PointerInspector &inspect) {
  if (workspace == nullptr) {
    if (bytes == 0) return Status::success();
    return invalid("workspace is NULL but bytes = " + std::to_string(bytes) +
                   "; NULL with 0 bytes returns to a handle-owned workspace");
  }
  if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0)
    return invalid("workspace = " + pointer_text(workspace) +
                   " must be aligned to 256 bytes, as cudaMalloc's memory is");
  if (bytes > static_cast<size_t>(INT64_MAX))
    return invalid("bytes = " + std::to_string(bytes) + " is more than any allocation holds");
  PointerInfo info;
  FG_RETURN_IF_ERROR(inspect(workspace, &info));
  if (info.kind == PointerKind::pinned_host || info.kind == PointerKind::pageable_host)
    return invalid("workspace = " + pointer_text(workspace) + " is " +
                   (info.kind == PointerKind::pinned_host ? "pinned" : "pageable") +
                   " host memory; a workspace is device memory of the handle's device");
  return check_pointer("workspace", workspace, static_cast<int64_t>(bytes), "used", inspect);
}

bool batches_overlap(int64_t lines, int64_t length, int64_t ld, int64_t stride, int64_t count) {
  if (count <= 1) return false;
  if (stride == 0) return true;
  // Product j is product 0 moved by d = j * stride = q lines and t elements (0 <= t < ld). Its first
  // line meets a line of product 0 when q < lines and t < length; its elements carried past the end of a
  // line meet the next one when q + 1 < lines and t + length > ld. From d >= one matrix's extent on,
  // nothing meets.
  const int64_t one_extent = (lines - 1) * ld + length;
  const int64_t steps = (one_extent - 1) / stride;  // products j >= 1 with j * stride < one_extent
  const int64_t last = steps < count - 1 ? steps : count - 1;
  if (last > (int64_t{1} << 20)) return true;
  for (int64_t j = 1; j <= last; ++j) {
    const int64_t d = j * stride, q = d / ld, t = d % ld;
    if ((q < lines && t < length) || (q + 1 < lines && t + length > ld)) return true;
  }
  return false;
}

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

  int64_t a_elements = 0, b_elements = 0, c_elements = 0;
  if (reads_ab) {
    FG_RETURN_IF_ERROR(check_extent("A", "lda", a_shape, args.lda, args.stride_a, batch, &a_elements));
    FG_RETURN_IF_ERROR(check_extent("B", "ldb", b_shape, args.ldb, args.stride_b, batch, &b_elements));
  }
  FG_RETURN_IF_ERROR(check_extent("C", "ldc", c_shape, args.ldc, args.stride_c, batch, &c_elements));
  if (args.batched) FG_RETURN_IF_ERROR(check_c_stride(args, c_shape));
  const int64_t element = sizeof(float);
  if (reads_ab) {
    FG_RETURN_IF_ERROR(check_pointer("A", args.A, a_elements * element, "read (m, n, k > 0 and alpha != 0)", inspect));
    FG_RETURN_IF_ERROR(check_pointer("B", args.B, b_elements * element, "read (m, n, k > 0 and alpha != 0)", inspect));
  }
  FG_RETURN_IF_ERROR(check_pointer("C", args.C, c_elements * element, "written (m, n > 0)", inspect));
  if (reads_ab) {
    const Span c{args.C, c_shape, args.ldc, args.stride_c, batch, c_elements};
    if (may_share_elements(c, Span{args.A, a_shape, args.lda, args.stride_a, batch, a_elements}))
      return invalid("C = " + pointer_text(args.C) + " shares memory with A = " + pointer_text(args.A) +
                     ": C must not overlap the operands it is computed from");
    if (may_share_elements(c, Span{args.B, b_shape, args.ldb, args.stride_b, batch, b_elements}))
      return invalid("C = " + pointer_text(args.C) + " shares memory with B = " + pointer_text(args.B) +
                     ": C must not overlap the operands it is computed from");
  }

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
  if (args.M < 1) return invalid("M = " + int_text(args.M) + " must be >= 1: a row mean needs at least one value");
  FG_RETURN_IF_ERROR(check_size("N", args.N));
  *empty = args.L == 0 || args.N == 0;
  if (*empty) return Status::success();

  const fg_dtype_t dtype = static_cast<fg_dtype_t>(args.dtype);
  const int64_t element = detail::element_size(dtype);
  int64_t input_count = 0, input_bytes = 0, matrix_bytes = 0, output_bytes = 0;
  if (__builtin_mul_overflow(args.N, args.L, &input_count) ||
      __builtin_mul_overflow(input_count, args.M, &input_count) ||
      __builtin_mul_overflow(input_count, element, &input_bytes))
    return invalid("the input's N * L * M = " + int_text(args.N) + " * " + int_text(args.L) + " * " + int_text(args.M) +
                   " elements overflow int64");
  if (__builtin_mul_overflow(args.L, args.L, &matrix_bytes) ||
      __builtin_mul_overflow(matrix_bytes, element, &matrix_bytes))
    return invalid("the matrix's L * L = " + int_text(args.L) + " * " + int_text(args.L) + " elements overflow int64");
  output_bytes = args.L * args.N * element;  // bounded by the input's size, which fits

  FG_RETURN_IF_ERROR(check_pointer("input", args.input, input_bytes, "read (L, N > 0)", inspect));
  FG_RETURN_IF_ERROR(check_pointer("matrix", args.matrix, matrix_bytes, "read (L, N > 0)", inspect));
  FG_RETURN_IF_ERROR(check_pointer("output", args.output, output_bytes, "written (L, N > 0)", inspect));
  const char *dtype_name = dtype == FG_F64 ? "FG_F64" : "FG_F32";
  for (const auto &[name, pointer] :
       {std::pair<const char *, const void *>{"input", args.input}, {"matrix", args.matrix}, {"output", args.output}}) {
    if (reinterpret_cast<uintptr_t>(pointer) % static_cast<uintptr_t>(element) != 0)
      return invalid(std::string(name) + " = " + pointer_text(pointer) + " is not aligned to its " + int_text(element) +
                     "-byte " + dtype_name + " elements");
  }
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
