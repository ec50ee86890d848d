// libFuzzer target over the C ABI's argument checks (fg_sgemm and fg_sgemm_strided_batched, fg_rowmean_matvec,
// fg_set_workspace): random enumerators, sizes, leading dimensions, strides, pointers (one whose driver query
// fails among them) and scalars, extremes included. Every call must either pass, be refused as
// FG_STATUS_INVALID_VALUE with a message that starts with the argument it names, or pass on the failed query, and no
// input may trip AddressSanitizer or UndefinedBehaviorSanitizer. Every accepted problem's operands are recomputed in
// 128-bit arithmetic and must lie inside their simulated allocations; on small sizes, the elements of C
// are enumerated: an accepted batch writes none twice and shares none with A or B, and a refused
// stride_c really writes one twice.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "capi/validate.hpp"

using namespace fastgemm;

namespace {

alignas(256) float device_memory[3][256];
float host_memory[64];
float other_device_memory[64];

capi::PointerKind classify(const void *pointer) {
  const auto inside = [pointer](const float *begin, size_t count) {
    return pointer >= begin && pointer < begin + count;
  };
  if (inside(&device_memory[0][0], 3 * 256)) return capi::PointerKind::device_accessible;
  if (inside(host_memory, 64)) return capi::PointerKind::pageable_host;
  if (inside(other_device_memory, 64)) return capi::PointerKind::other_device;
  return capi::PointerKind::unknown;
}

// An address whose query fails, as every driver query does on a context lost to an earlier fault.
const float *const lost_context_address = reinterpret_cast<const float *>(uintptr_t{0x2000});
constexpr int kIllegalAddress = 700;  // cudaErrorIllegalAddress

// Each row of device_memory is one allocation, as the driver would report it.
capi::Status simulated(const void *pointer, capi::PointerInfo *info) {
  if (pointer == lost_context_address)
    return capi::Status::failure(detail::StatusCode::cuda_error,
                                 "cuPointerGetAttributes failed: an illegal memory access was encountered",
                                 kIllegalAddress);
  info->kind = classify(pointer);
  if (info->kind == capi::PointerKind::device_accessible) {
    const size_t row = static_cast<size_t>(static_cast<const float *>(pointer) - &device_memory[0][0]) / 256;
    info->range_begin = reinterpret_cast<uintptr_t>(&device_memory[row][0]);
    info->range_bytes = sizeof device_memory[row];
  }
  return capi::Status::success();
}

[[noreturn]] void fail(const char *what, const std::string &message) {
  std::fprintf(stderr, "fuzz_validate: %s: %s\n", what, message.c_str());
  std::abort();
}

int64_t pick_size(FuzzedDataProvider &data) {
  static const int64_t interesting[] = {0,
                                        1,
                                        2,
                                        3,
                                        4,
                                        5,
                                        7,
                                        8,
                                        16,
                                        17,
                                        127,
                                        128,
                                        129,
                                        1000,
                                        4096,
                                        1 << 20,
                                        int64_t(1) << 31,
                                        int64_t(1) << 32,
                                        int64_t(1) << 62,
                                        std::numeric_limits<int64_t>::max(),
                                        std::numeric_limits<int64_t>::max() / 2,
                                        std::numeric_limits<int64_t>::min(),
                                        -1,
                                        -2,
                                        -4096};
  if (data.ConsumeBool()) return data.PickValueInArray(interesting);
  return data.ConsumeIntegral<int64_t>();
}

const float *pick_pointer(FuzzedDataProvider &data) {
  switch (data.ConsumeIntegralInRange<int>(0, 8)) {
    case 0: return nullptr;
    case 6: return lost_context_address;
    case 1: return host_memory;
    case 2: return other_device_memory;
    case 3: return reinterpret_cast<const float *>(uintptr_t{0x1000});  // unknown to the driver
    case 4: return &device_memory[0][1];                                // misaligned device memory
    case 5: return &device_memory[data.ConsumeIntegralInRange<int>(0, 2)][data.ConsumeIntegralInRange<int>(0, 255)];
    default: return &device_memory[data.ConsumeIntegralInRange<int>(0, 2)][0];
  }
}

float pick_scalar(FuzzedDataProvider &data) {
  static const float interesting[] = {
      0.0f, -0.0f, 1.0f, -0.5f, 2.25f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()};
  return data.ConsumeBool() ? data.PickValueInArray(interesting) : data.ConsumeFloatingPoint<float>();
}

int pick_enum(FuzzedDataProvider &data, std::initializer_list<int> valid) {
  if (data.ConsumeBool()) return *(valid.begin() + data.ConsumeIntegralInRange<size_t>(0, valid.size() - 1));
  return data.ConsumeIntegral<int>();
}

// A refusal's message starts with the argument it names.
void check_refusal(const capi::Status &status, std::initializer_list<const char *> names) {
  if (status.code != detail::StatusCode::invalid_value)
    fail("a refusal is not FG_STATUS_INVALID_VALUE", status.message);
  for (const char *name : names) {
    const std::string prefix(name);
    if (status.message.compare(0, prefix.size(), prefix) == 0) {
      const char next = status.message.size() > prefix.size() ? status.message[prefix.size()] : '\0';
      if (next == ' ' || next == '\'') return;
    }
  }
  fail("a refusal names no argument", status.message);
}

// A failed pointer query reaches the caller as it was, and only for a pointer whose query fails.
bool passed_on_query_failure(const capi::Status &status, std::initializer_list<const void *> pointers) {
  if (status.code != detail::StatusCode::cuda_error) return false;
  if (status.cuda_error != kIllegalAddress || status.message.find("cuPointerGetAttributes failed") == std::string::npos)
    fail("a failed pointer query was not passed on as it was", status.message);
  for (const void *pointer : pointers)
    if (pointer == lost_context_address) return true;
  fail("a pointer query failed for no pointer whose query fails", status.message);
}

// A pointer's distance from device_memory's first float, in floats (any pointer, NULL included).
int64_t float_index(const void *pointer) {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(pointer) -
                              reinterpret_cast<uintptr_t>(&device_memory[0][0])) /
         static_cast<int64_t>(sizeof(float));
}

// One operand as the caller laid it out: `count` matrices of `lines` runs of `length` floats.
struct Operand {
  const float *data;
  int64_t lines, length, ld, stride, count;

  // One past the farthest element, exactly.
  __int128 extent() const { return (__int128)(lines - 1) * ld + length + (__int128)(count - 1) * stride; }
  // Its elements as indices into device_memory (the caller checked they lie inside it).
  std::vector<int64_t> elements() const {
    std::vector<int64_t> out;
    const int64_t base = float_index(data);
    for (int64_t b = 0; b < count; ++b)
      for (int64_t r = 0; r < lines; ++r)
        for (int64_t c = 0; c < length; ++c) out.push_back(base + b * stride + r * ld + c);
    return out;
  }
};

// Whether the operand lies inside the simulated allocation (one row of device_memory) its pointer is in.
bool inside_allocation(const Operand &x) {
  if (x.lines < 1 || x.length < 1 || x.ld < 1 || x.stride < 0 || x.count < 1) return false;
  const int64_t offset = float_index(x.data);
  if (offset < 0 || offset >= 3 * 256) return false;
  const int64_t row_end = (offset / 256 + 1) * 256;
  return (__int128)offset + x.extent() <= row_end;
}

bool small(const Operand &x) { return x.extent() <= 3 * 256 && (__int128)x.lines * x.length * x.count <= 4096; }

bool writes_twice(const Operand &c) {
  std::set<int64_t> seen;
  for (int64_t e : c.elements())
    if (!seen.insert(e).second) return true;
  return false;
}

bool share_elements(const Operand &x, const Operand &y) {
  const std::vector<int64_t> xs = x.elements();
  const std::set<int64_t> ys(xs.begin(), xs.end());
  for (int64_t e : y.elements())
    if (ys.count(e) != 0) return true;
  return false;
}

// The caller's A, B and C of an sgemm call, before the layout is resolved.
void operands_of(const capi::SgemmArgs &args, Operand *a, Operand *b, Operand *c) {
  const bool row = args.layout == FG_ROW_MAJOR, a_n = args.transa == FG_OP_N, b_n = args.transb == FG_OP_N;
  const int64_t count = args.batched ? args.batch_count : 1;
  *a = row == a_n ? Operand{args.A, args.m, args.k, args.lda, args.stride_a, count}
                  : Operand{args.A, args.k, args.m, args.lda, args.stride_a, count};
  *b = row == b_n ? Operand{args.B, args.k, args.n, args.ldb, args.stride_b, count}
                  : Operand{args.B, args.n, args.k, args.ldb, args.stride_b, count};
  *c = row ? Operand{args.C, args.m, args.n, args.ldc, args.stride_c, count}
           : Operand{args.C, args.n, args.m, args.ldc, args.stride_c, count};
}

void fuzz_sgemm(FuzzedDataProvider &data) {
  capi::SgemmArgs args{};
  args.layout = pick_enum(data, {FG_ROW_MAJOR, FG_COL_MAJOR});
  args.transa = pick_enum(data, {FG_OP_N, FG_OP_T, FG_OP_C});
  args.transb = pick_enum(data, {FG_OP_N, FG_OP_T, FG_OP_C});
  args.m = pick_size(data), args.n = pick_size(data), args.k = pick_size(data);
  args.alpha = pick_scalar(data), args.beta = pick_scalar(data);
  args.A = pick_pointer(data), args.B = pick_pointer(data), args.C = const_cast<float *>(pick_pointer(data));
  args.lda = pick_size(data), args.ldb = pick_size(data), args.ldc = pick_size(data);
  args.batched = data.ConsumeBool();
  args.stride_a = args.batched ? pick_size(data) : 0;
  args.stride_b = args.batched ? pick_size(data) : 0;
  args.stride_c = args.batched ? pick_size(data) : 0;
  args.batch_count = args.batched ? pick_size(data) : 1;

  detail::GemmProblem problem;
  capi::GemmWork work = capi::GemmWork::nothing;
  const capi::Status status = capi::validate_sgemm(args, simulated, &problem, &work);
  const bool negative =
      args.m < 0 || args.n < 0 || args.k < 0 || args.lda < 1 || args.ldb < 1 || args.ldc < 1 ||
      (args.batched && (args.stride_a < 0 || args.stride_b < 0 || args.stride_c < 0 || args.batch_count < 0));
  Operand a, b, c;
  operands_of(args, &a, &b, &c);
  if (!status.ok()) {
    if (passed_on_query_failure(status, {args.A, args.B, args.C})) return;
    check_refusal(status, {"layout", "transa", "transb", "m", "n", "k", "lda", "ldb", "ldc", "stride_a", "stride_b",
                           "stride_c", "batch_count", "A", "B", "C"});
    if (status.message.find("write the same elements of C") != std::string::npos && inside_allocation(c) && small(c) &&
        !writes_twice(c))
      fail("a batch that writes no element of C twice was refused", status.message);
    return;
  }
  if (negative) fail("a negative size or a leading dimension below 1 passed", "");
  if (work == capi::GemmWork::nothing) return;
  // Whatever is left to run reads and writes only device memory, over sizes that fit.
  if (problem.m < 1 || problem.n < 1 || problem.batch < 1 || problem.c == nullptr ||
      classify(problem.c) != capi::PointerKind::device_accessible)
    fail("a problem with no valid C passed", "");
  if (work == capi::GemmWork::product &&
      (problem.k < 1 || problem.alpha == 0.0f || classify(problem.a.data) != capi::PointerKind::device_accessible ||
       classify(problem.b.data) != capi::PointerKind::device_accessible))
    fail("a product with unreadable operands passed", "");
  if (!inside_allocation(c)) fail("an accepted C runs past its allocation", "");
  if (work == capi::GemmWork::product && (!inside_allocation(a) || !inside_allocation(b)))
    fail("an accepted A or B runs past its allocation", "");
  if (small(c) && writes_twice(c)) fail("an accepted batch writes an element of C twice", "");
  if (work == capi::GemmWork::product && small(c) && small(a) && small(b) &&
      (share_elements(c, a) || share_elements(c, b)))
    fail("an accepted C shares elements with A or B", "");
}

void fuzz_rowmean(FuzzedDataProvider &data) {
  capi::RowmeanArgs args{};
  args.dtype = pick_enum(data, {FG_F32, FG_F64});
  args.input = pick_pointer(data), args.matrix = pick_pointer(data);
  args.output = const_cast<float *>(pick_pointer(data));
  args.L = pick_size(data), args.M = pick_size(data), args.N = pick_size(data);
  detail::RowmeanProblem problem;
  bool empty = false;
  const capi::Status status = capi::validate_rowmean(args, simulated, &problem, &empty);
  if (!status.ok()) {
    if (passed_on_query_failure(status, {args.input, args.matrix, args.output})) return;
    check_refusal(status, {"dtype", "L", "M", "N", "input", "matrix", "output", "the input's", "the matrix's"});
    return;
  }
  if (args.L < 0 || args.N < 0 || args.M < 1) fail("a bad size passed", "");
  if (empty) return;
  if (classify(problem.input) != capi::PointerKind::device_accessible ||
      classify(problem.matrix) != capi::PointerKind::device_accessible ||
      classify(problem.output) != capi::PointerKind::device_accessible)
    fail("a call with unusable memory passed", "");
  // Every array inside its allocation and aligned to its element, recomputed exactly.
  const int element = args.dtype == FG_F64 ? 2 : 1;  // in floats
  const __int128 counts[3] = {(__int128)args.N * args.L * args.M * element, (__int128)args.L * args.L * element,
                              (__int128)args.L * args.N * element};
  const void *arrays[3] = {problem.input, problem.matrix, problem.output};
  for (int i = 0; i < 3; ++i) {
    const int64_t offset = float_index(arrays[i]);
    if (offset + counts[i] > (offset / 256 + 1) * 256) fail("an accepted rowmean array runs past its allocation", "");
    if (reinterpret_cast<uintptr_t>(arrays[i]) % (4 * element) != 0)
      fail("an accepted rowmean array is misaligned", "");
  }
}

// fg_set_workspace's checks: an accepted workspace is device memory, 256-byte aligned, inside its allocation.
void fuzz_workspace(FuzzedDataProvider &data) {
  const float *workspace = pick_pointer(data);
  const size_t bytes =
      data.ConsumeBool() ? data.ConsumeIntegralInRange<size_t>(0, 2048) : data.ConsumeIntegral<size_t>();
  const capi::Status status = capi::validate_workspace(workspace, bytes, simulated);
  if (!status.ok()) {
    if (passed_on_query_failure(status, {workspace})) return;
    check_refusal(status, {"workspace", "bytes"});
    return;
  }
  if (workspace == nullptr && bytes != 0) fail("a NULL workspace of some bytes passed", "");
  if (workspace == nullptr || bytes == 0) return;
  if (classify(workspace) != capi::PointerKind::device_accessible)
    fail("a workspace that is no device memory passed", "");
  if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0) fail("a workspace off 256 bytes passed", "");
  const int64_t offset = float_index(workspace);
  if ((__int128)offset * 4 + bytes > (__int128)(offset / 256 + 1) * 256 * 4)
    fail("a workspace running past its allocation passed", "");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
  FuzzedDataProvider data(bytes, size);
  switch (data.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: fuzz_sgemm(data); break;
    case 1: fuzz_rowmean(data); break;
    default: fuzz_workspace(data); break;
  }
  return 0;
}
