// SPDX-License-Identifier: Apache-2.0
// libFuzzer target over what the C ABI's entry points do once the handle's device is current (capi/calls.hpp):
// fg_sgemm and fg_sgemm_strided_batched, fg_rowmean_matvec, fg_set_workspace and the two workspace size queries,
// over a simulated device: three "allocations" of device memory, one of pageable host memory, one of another
// device, and an address whose driver query fails. Random enumerators, sizes, leading dimensions, strides,
// pointers and scalars, extremes included; the memory is poisoned with random values (NaN and Inf among them)
// before each input. The runners the calls hand their problems to compute the canonical problem on the CPU over
// the simulated memory (double accumulation, rounded to float as a kernel stores it). For every input:
// - nothing may trip AddressSanitizer or UndefinedBehaviorSanitizer;
// - a refused call is FG_STATUS_INVALID_VALUE with a message that starts with the argument it names (or a
//   failed pointer query passed on as it was, or the runner's own failure), runs nothing and changes no byte;
// - an accepted call runs exactly the work its raw arguments call for (nothing, C := beta * C, or the
//   product), hands the runner a canonical problem inside its simulated allocations (recomputed in 128-bit
//   arithmetic), and leaves the memory as an independent CBLAS reference computed from the raw arguments
//   does: C within a relative tolerance (NaN where the reference has NaN; beta == 0 never reads C), every other
//   byte as it was. rowmean the same against its header formula, in FG_F32 and FG_F64;
// - on small sizes, the elements of C are enumerated: an accepted batch writes none twice and shares none with
//   A or B, and a refused stride_c really writes one twice;
// - fg_set_workspace hands exactly the accepted pair on; a size query answers the most bytes its runner asks
//   for over the problems it builds, which are canonical products of the caller's shape.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "capi/calls.hpp"
#include "simulated.hpp"

using namespace fastgemm;
using namespace fuzzsim;

namespace {

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

// A runner over the simulated memory, for the plan sgemm_call gives: checks that what it is handed is a problem
// lib/ may run, then computes it on the CPU from the canonical (row-major) problem alone.
class SimulatedSgemm final {
 public:
  static constexpr fg_sgemm_algo_t kRan = FG_SGEMM_CUBLAS;

  SimulatedSgemm(fg_math_mode_t math, bool fails) : math_(math), fails_(fails) {}

  // Runs the plan as the entry points dispatch it; *ran: the product's algorithm, FG_SGEMM_AUTO when none ran.
  capi::Status run(const capi::SgemmPlan &plan, fg_sgemm_algo_t *ran) {
    *ran = FG_SGEMM_AUTO;
    if (plan.algo != kSelected) fail("the plan does not carry the handle's selected algorithm", "");
    if (plan.work == capi::GemmWork::scale_c) return scale_c(plan.problem);
    if (plan.work == capi::GemmWork::product) return product(plan.problem, ran);
    return capi::Status::success();
  }

  static constexpr fg_sgemm_algo_t kSelected = FG_SGEMM_SMEM;

  capi::Status scale_c(const detail::GemmProblem &p) {
    ++scale_calls;
    check(p);
    if (!(p.k == 0 || p.alpha == 0.0f) || p.beta == 1.0f) fail("scale_c was handed a problem with more to do", "");
    if (fails_) return runner_failure();
    compute(p, false);
    return capi::Status::success();
  }
  capi::Status product(const detail::GemmProblem &p, fg_sgemm_algo_t *ran) {
    ++product_calls;
    check(p);
    if (p.k < 1 || p.alpha == 0.0f) fail("a product was handed k < 1 or alpha == 0", "");
    if (classify(p.a.data) != capi::PointerKind::device_accessible ||
        classify(p.b.data) != capi::PointerKind::device_accessible)
      fail("a product was handed unreadable operands", "");
    if (fails_) return runner_failure();
    compute(p, true);
    *ran = kRan;
    return capi::Status::success();
  }

  int scale_calls = 0, product_calls = 0;
  bool skipped = false;  // too much work to compute

 private:
  void check(const detail::GemmProblem &p) const {
    if (p.m < 1 || p.n < 1 || p.batch < 1 || classify(p.c) != capi::PointerKind::device_accessible)
      fail("a runner was handed a problem with no valid C", "");
    if (p.ldc < p.n || p.math != math_) fail("a runner was handed a bad ldc or another math mode", "");
  }

  void compute(const detail::GemmProblem &p, bool product) {
    if ((__int128)p.m * p.n * (p.k > 0 ? p.k : 1) * p.batch > kMostWork) {
      skipped = true;
      return;
    }
    const auto operand = [](const detail::GemmOperand &x, int64_t batch, int64_t row, int64_t col) {
      const int64_t index = batch * x.stride + (x.transposed ? col * x.ld + row : row * x.ld + col);
      return static_cast<double>(load<float>(element<float>(x.data, index)));
    };
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
          unsigned char *c = element<float>(p.c, b * p.stride_c + i * p.ldc + j);
          const double old = p.beta == 0.0f ? 0.0 : static_cast<double>(p.beta) * load<float>(c);
          double sum = 0.0;
          if (product)
            for (int64_t q = 0; q < p.k; ++q) sum += operand(p.a, b, i, q) * operand(p.b, b, q, j);
          store(c, static_cast<float>(product ? static_cast<double>(p.alpha) * sum + old : old));
        }
  }

  fg_math_mode_t math_;
  bool fails_;
};

// C after the call, by the reference BLAS's definition over the caller's own arguments: layout, op(A),
// op(B), leading dimensions and strides as given, beta == 0 not reading C, k == 0 or alpha == 0 giving
// beta * C, and beta == 1 then leaving C as it is. Read from `before`, the memory the call started with.
std::vector<Expected> reference_sgemm(const capi::SgemmArgs &args, const SimulatedMemory &before) {
  std::vector<Expected> out;
  const int64_t batch = args.batched ? args.batch_count : 1;
  const int64_t stride_a = args.batched ? args.stride_a : 0, stride_b = args.batched ? args.stride_b : 0;
  const int64_t stride_c = args.batched ? args.stride_c : 0;
  const bool row = args.layout == FG_ROW_MAJOR, a_n = args.transa == FG_OP_N, b_n = args.transb == FG_OP_N;
  const bool reads_ab = args.k > 0 && args.alpha != 0.0f;
  if (!reads_ab && args.beta == 1.0f) return out;
  const auto a_at = [&](int64_t b, int64_t i, int64_t q) {  // op(A)(i, q)
    const int64_t index =
        row ? (a_n ? i * args.lda + q : q * args.lda + i) : (a_n ? q * args.lda + i : i * args.lda + q);
    return static_cast<double>(load<float>(in_copy(before, element<float>(args.A, b * stride_a + index))));
  };
  const auto b_at = [&](int64_t b, int64_t q, int64_t j) {  // op(B)(q, j)
    const int64_t index =
        row ? (b_n ? q * args.ldb + j : j * args.ldb + q) : (b_n ? j * args.ldb + q : q * args.ldb + j);
    return static_cast<double>(load<float>(in_copy(before, element<float>(args.B, b * stride_b + index))));
  };
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < args.m; ++i)
      for (int64_t j = 0; j < args.n; ++j) {
        const unsigned char *c = element<float>(args.C, b * stride_c + (row ? i * args.ldc + j : j * args.ldc + i));
        const double beta_c =
            args.beta == 0.0f ? 0.0 : static_cast<double>(args.beta) * load<float>(in_copy(before, c));
        double sum = 0.0, magnitude = 0.0;
        if (reads_ab)
          for (int64_t q = 0; q < args.k; ++q) {
            const double term = a_at(b, i, q) * b_at(b, q, j);
            sum += term;
            magnitude += std::fabs(term);
          }
        const double alpha = reads_ab ? args.alpha : 0.0;
        out.push_back(Expected{c, alpha * sum + beta_c, std::fabs(alpha) * magnitude + std::fabs(beta_c)});
      }
  return out;
}

// Fills every element of C with NaN, so that a beta == 0 call that reads C shows it.
void fill_c_with_nan(const Operand &c) {
  for (int64_t index : c.elements())
    store(element<float>(memory.device, index), std::numeric_limits<float>::quiet_NaN());
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
  const fg_math_mode_t math = pick_math(data);
  const bool runner_fails = data.ConsumeIntegralInRange<int>(0, 15) == 0;
  const bool nan_in_c = data.ConsumeBool();

  Operand a, b, c;
  operands_of(args, &a, &b, &c);
  poison<float>(data);
  if (nan_in_c && inside_allocation(c) && small(c)) fill_c_with_nan(c);
  const SimulatedMemory before = memory;

  SimulatedSgemm runner(math, runner_fails);
  fg_sgemm_algo_t ran = FG_SGEMM_NAIVE;  // anything but what the call stores
  capi::SgemmSettings settings;
  settings.math = math;
  settings.algo = SimulatedSgemm::kSelected;
  capi::SgemmPlan plan;
  capi::Status status = capi::sgemm_call(args, simulated, settings, &plan);
  if (status.ok()) status = runner.run(plan, &ran);
  const int runs = runner.scale_calls + runner.product_calls;
  if (runs > 1) fail("a call ran its runner more than once", status.message);
  if (!status.ok()) {
    if (runs == 1) {
      if (!runner_fails || !is_runner_failure(status)) fail("a runner's failure was not passed on", status.message);
      check_unchanged(before, "a failed runner");
      return;
    }
    check_unchanged(before, "a refused sgemm call");
    if (passed_on_query_failure(status, {args.A, args.B, args.C})) return;
    check_refusal(status, {"layout", "transa", "transb", "m", "n", "k", "lda", "ldb", "ldc", "stride_a", "stride_b",
                           "stride_c", "batch_count", "A", "B", "C"});
    if (status.message.find("write the same elements of C") != std::string::npos && inside_allocation(c) && small(c) &&
        !writes_twice(c))
      fail("a batch that writes no element of C twice was refused", status.message);
    return;
  }
  const bool negative =
      args.m < 0 || args.n < 0 || args.k < 0 || args.lda < 1 || args.ldb < 1 || args.ldc < 1 ||
      (args.batched && (args.stride_a < 0 || args.stride_b < 0 || args.stride_c < 0 || args.batch_count < 0));
  if (negative) fail("a negative size or a leading dimension below 1 passed", "");

  // The work the raw arguments call for, and what the call ran.
  const bool empty = args.m == 0 || args.n == 0 || (args.batched && args.batch_count == 0);
  const bool reads_ab = args.k > 0 && args.alpha != 0.0f;
  const bool wants_product = !empty && reads_ab, wants_scale = !empty && !reads_ab && args.beta != 1.0f;
  if (runner.product_calls != (wants_product ? 1 : 0) || runner.scale_calls != (wants_scale ? 1 : 0))
    fail("an accepted call ran other work than its arguments call for", "");
  if (ran != (wants_product ? SimulatedSgemm::kRan : FG_SGEMM_AUTO))
    fail("the algorithm the call reports is not the one that ran", "");
  if (!wants_product && !wants_scale) {
    check_unchanged(before, "a call with nothing to do");
    return;
  }
  // Whatever ran read and wrote only its allocations, exactly, and C's elements are apart.
  if (!inside_allocation(c)) fail("an accepted C runs past its allocation", "");
  if (wants_product && (!inside_allocation(a) || !inside_allocation(b)))
    fail("an accepted A or B runs past its allocation", "");
  if (small(c) && writes_twice(c)) fail("an accepted batch writes an element of C twice", "");
  if (wants_product && small(c) && small(a) && small(b) && (share_elements(c, a) || share_elements(c, b)))
    fail("an accepted C shares elements with A or B", "");
  if (runner.skipped) return;
  check_result<float>(before, reference_sgemm(args, before), 1e-5, "C differs from the reference");
}

// rowmean's runner: the product over the means, from the problem alone, in double; FG_F32 rounded at the end.
class SimulatedRowmean final {
 public:
  static constexpr fg_rowmean_algo_t kRan = FG_ROWMEAN_CUBLAS;
  static constexpr fg_rowmean_algo_t kSelected = FG_ROWMEAN_COALESCED;

  explicit SimulatedRowmean(bool fails) : fails_(fails) {}

  // Runs the plan as fg_rowmean_matvec dispatches it; *ran: the algorithm, FG_ROWMEAN_AUTO when none ran.
  capi::Status run(const capi::RowmeanPlan &plan, fg_rowmean_algo_t *ran) {
    *ran = FG_ROWMEAN_AUTO;
    if (plan.algo != kSelected) fail("the plan does not carry the handle's selected algorithm", "");
    if (plan.empty) return capi::Status::success();
    return run(plan.problem, ran);
  }

  capi::Status run(const detail::RowmeanProblem &p, fg_rowmean_algo_t *ran) {
    ++calls;
    if (p.L < 1 || p.M < 1 || p.N < 1) fail("the rowmean runner was handed an empty problem", "");
    if (classify(p.input) != capi::PointerKind::device_accessible ||
        classify(p.matrix) != capi::PointerKind::device_accessible ||
        classify(p.output) != capi::PointerKind::device_accessible)
      fail("the rowmean runner was handed unusable memory", "");
    if (fails_) return runner_failure();
    *ran = kRan;
    if ((__int128)p.L * p.N * (p.L + p.M) > kMostWork) {
      skipped = true;
      return capi::Status::success();
    }
    if (p.dtype == FG_F64)
      compute<double>(p);
    else
      compute<float>(p);
    return capi::Status::success();
  }

  int calls = 0;
  bool skipped = false;

 private:
  template <typename T>
  void compute(const detail::RowmeanProblem &p) {
    std::vector<double> means(static_cast<size_t>(p.N * p.L));  // means[k * L + j]
    for (int64_t k = 0; k < p.N; ++k)
      for (int64_t j = 0; j < p.L; ++j) {
        double sum = 0.0;
        for (int64_t v = 0; v < p.M; ++v) sum += load<T>(element<T>(p.input, (k * p.L + j) * p.M + v));
        means[static_cast<size_t>(k * p.L + j)] = sum / static_cast<double>(p.M);
      }
    for (int64_t i = 0; i < p.L; ++i)
      for (int64_t k = 0; k < p.N; ++k) {
        double sum = 0.0;
        for (int64_t j = 0; j < p.L; ++j)
          sum += load<T>(element<T>(p.matrix, i * p.L + j)) * means[static_cast<size_t>(k * p.L + j)];
        store(element<T>(p.output, i * p.N + k), static_cast<T>(sum));
      }
  }

  bool fails_;
};

// The header's formula over the caller's arguments: output[i*N + k] = sum_j matrix[i*L + j] * (1/M) *
// sum_m input[(k*L + j)*M + m], each mean taken first (as it decides where Inf - Inf makes NaN).
template <typename T>
std::vector<Expected> reference_rowmean(const capi::RowmeanArgs &args, const SimulatedMemory &before) {
  std::vector<Expected> out;
  const auto at = [&before](const void *base, int64_t index) {
    return static_cast<double>(load<T>(in_copy(before, element<T>(base, index))));
  };
  for (int64_t i = 0; i < args.L; ++i)
    for (int64_t k = 0; k < args.N; ++k) {
      double value = 0.0, scale = 0.0;
      for (int64_t j = 0; j < args.L; ++j) {
        double sum = 0.0, magnitude = 0.0;
        for (int64_t v = 0; v < args.M; ++v) {
          const double x = at(args.input, (k * args.L + j) * args.M + v);
          sum += x;
          magnitude += std::fabs(x);
        }
        const double weight = at(args.matrix, i * args.L + j), count = static_cast<double>(args.M);
        value += weight * (sum / count);
        scale += std::fabs(weight) * (magnitude / count);
      }
      out.push_back(Expected{element<T>(args.output, i * args.N + k), value, scale});
    }
  return out;
}

// Where the input says, a pointer is moved 2 bytes: off any element boundary.
const void *maybe_off_boundary(FuzzedDataProvider &data, const float *pointer) {
  if (data.ConsumeIntegralInRange<int>(0, 7) != 0) return pointer;
  return reinterpret_cast<const void *>(reinterpret_cast<uintptr_t>(pointer) + 2);
}

void fuzz_rowmean(FuzzedDataProvider &data) {
  capi::RowmeanArgs args{};
  args.dtype = pick_enum(data, {FG_F32, FG_F64});
  args.input = maybe_off_boundary(data, pick_pointer(data));
  args.matrix = maybe_off_boundary(data, pick_pointer(data));
  args.output = const_cast<void *>(maybe_off_boundary(data, pick_pointer(data)));
  args.L = pick_size(data), args.M = pick_size(data), args.N = pick_size(data);
  const bool runner_fails = data.ConsumeIntegralInRange<int>(0, 15) == 0;
  if (args.dtype == FG_F64)
    poison<double>(data);
  else
    poison<float>(data);
  const SimulatedMemory before = memory;

  SimulatedRowmean runner(runner_fails);
  fg_rowmean_algo_t ran = FG_ROWMEAN_SINGLE_BLOCK;  // anything but what the call stores
  capi::RowmeanPlan plan;
  capi::Status status = capi::rowmean_call(args, simulated, SimulatedRowmean::kSelected, &plan);
  if (status.ok()) status = runner.run(plan, &ran);
  if (runner.calls > 1) fail("a rowmean call ran its runner more than once", status.message);
  if (!status.ok()) {
    if (runner.calls == 1) {
      if (!runner_fails || !is_runner_failure(status)) fail("a runner's failure was not passed on", status.message);
      check_unchanged(before, "a failed rowmean runner");
      return;
    }
    check_unchanged(before, "a refused rowmean call");
    if (passed_on_query_failure(status, {args.input, args.matrix, args.output})) return;
    check_refusal(status, {"dtype", "L", "M", "N", "input", "matrix", "output", "the input's", "the matrix's"});
    return;
  }
  if (args.L < 0 || args.N < 0 || args.M < 1) fail("a bad size passed", "");
  const bool empty = args.L == 0 || args.N == 0;
  if (runner.calls != (empty ? 0 : 1)) fail("an accepted rowmean call ran other work than it calls for", "");
  if (ran != (empty ? FG_ROWMEAN_AUTO : SimulatedRowmean::kRan))
    fail("the rowmean algorithm the call reports is not the one that ran", "");
  if (empty) {
    check_unchanged(before, "an empty rowmean call");
    return;
  }
  // Every array inside its allocation and aligned to its element, recomputed exactly.
  const int64_t element_bytes = args.dtype == FG_F64 ? 8 : 4;
  const __int128 bytes[3] = {(__int128)args.N * args.L * args.M * element_bytes,
                             (__int128)args.L * args.L * element_bytes, (__int128)args.L * args.N * element_bytes};
  const void *arrays[3] = {args.input, args.matrix, args.output};
  for (int i = 0; i < 3; ++i) {
    const int64_t offset =
        static_cast<int64_t>(reinterpret_cast<uintptr_t>(arrays[i]) - reinterpret_cast<uintptr_t>(device_begin()));
    if (offset + bytes[i] > (offset / kAllocationBytes + 1) * kAllocationBytes)
      fail("an accepted rowmean array runs past its allocation", "");
    if (reinterpret_cast<uintptr_t>(arrays[i]) % static_cast<uintptr_t>(element_bytes) != 0)
      fail("an accepted rowmean array is misaligned", "");
  }
  if (runner.skipped) return;
  if (args.dtype == FG_F64)
    check_result<double>(before, reference_rowmean<double>(args, before), 1e-12, "rowmean f64");
  else
    check_result<float>(before, reference_rowmean<float>(args, before), 1e-5, "rowmean f32");
}

class SimulatedWorkspace final : public capi::WorkspaceHolder {
 public:
  explicit SimulatedWorkspace(bool fails) : fails_(fails) {}
  capi::Status set(void *workspace, size_t bytes) override {
    ++calls;
    given = workspace, given_bytes = bytes;
    return fails_ ? runner_failure() : capi::Status::success();
  }
  int calls = 0;
  void *given = nullptr;
  size_t given_bytes = 0;

 private:
  bool fails_;
};

// fg_set_workspace: an accepted workspace is NULL with 0 bytes, or device memory aligned to 256 bytes inside
// its allocation, handed on as it was; a refused one is handed nowhere. Nothing is written either way.
void fuzz_workspace(FuzzedDataProvider &data) {
  void *workspace = const_cast<float *>(pick_pointer(data));
  const size_t bytes =
      data.ConsumeBool() ? data.ConsumeIntegralInRange<size_t>(0, 2048) : data.ConsumeIntegral<size_t>();
  const bool holder_fails = data.ConsumeIntegralInRange<int>(0, 15) == 0;
  poison<float>(data);
  const SimulatedMemory before = memory;
  SimulatedWorkspace holder(holder_fails);
  const capi::Status status = capi::set_workspace_call(workspace, bytes, simulated, holder);
  check_unchanged(before, "fg_set_workspace");
  if (holder.calls > 1) fail("a workspace was handed on twice", "");
  if (holder.calls == 1 && (holder.given != workspace || holder.given_bytes != bytes))
    fail("a workspace was handed on other than the caller gave it", "");
  if (!status.ok()) {
    if (holder.calls == 1) {
      if (!holder_fails || !is_runner_failure(status)) fail("the holder's failure was not passed on", status.message);
    } else {
      if (passed_on_query_failure(status, {workspace})) return;
      check_refusal(status, {"workspace", "bytes"});
    }
  } else if (holder.calls != 1) {
    fail("an accepted workspace was not handed on", "");
  }
  if (holder.calls == 0) return;
  if (workspace == nullptr && bytes != 0) fail("a NULL workspace of some bytes passed", "");
  if (workspace == nullptr || bytes == 0) return;
  if (classify(workspace) != capi::PointerKind::device_accessible)
    fail("a workspace that is no device memory passed", "");
  if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0) fail("a workspace off 256 bytes passed", "");
  const int64_t offset = float_index(workspace) * 4;
  if ((__int128)offset + bytes > (__int128)(offset / kAllocationBytes + 1) * kAllocationBytes)
    fail("a workspace running past its allocation passed", "");
}

// A size query's runner: each problem answered by the input's policy, every answer kept in order.
class SimulatedSizer final : public capi::WorkspaceSizer {
 public:
  enum class Policy { bytes, refuse_some, refuse_all, error };

  explicit SimulatedSizer(Policy policy) : policy_(policy) {}

  capi::Status sgemm_bytes(const detail::GemmProblem &p, size_t *bytes) override {
    sgemm_problems.push_back(p);
    // Depends on what the query varies: leading dimensions and alignment.
    const uint64_t key = static_cast<uint64_t>(p.a.ld) * 7 + static_cast<uint64_t>(p.b.ld) * 3 +
                         static_cast<uint64_t>(p.ldc) + (reinterpret_cast<uintptr_t>(p.a.data) & 255) * 11;
    return answer(key, bytes);
  }
  capi::Status rowmean_bytes(const detail::RowmeanProblem &p, size_t *bytes) override {
    rowmean_problems.push_back(p);
    return answer(reinterpret_cast<uintptr_t>(p.input) & 255, bytes);
  }

  std::vector<detail::GemmProblem> sgemm_problems;
  std::vector<detail::RowmeanProblem> rowmean_problems;
  std::vector<capi::Status> answers;
  std::vector<size_t> sizes;

 private:
  capi::Status answer(uint64_t key, size_t *bytes) {
    capi::Status status = capi::Status::success();
    if (policy_ == Policy::error) status = runner_failure();
    if (policy_ == Policy::refuse_all || (policy_ == Policy::refuse_some && key % 2 == 1))
      status =
          capi::Status::failure(detail::StatusCode::not_supported, "simulated: not for key " + std::to_string(key));
    if (status.ok()) *bytes = static_cast<size_t>(key) * 64 + 256;
    answers.push_back(status);
    sizes.push_back(status.ok() ? *bytes : 0);
    return status;
  }

  Policy policy_;
};

// What a query must give from its runner's answers: the first error other than a refusal; else the first
// refusal when every answer refused; else the most bytes (0 when nothing was asked).
void check_query_answer(const capi::Status &status, size_t bytes, const SimulatedSizer &sizer) {
  size_t most = 0;
  bool runs_any = false;
  const capi::Status *first_refusal = nullptr;
  for (size_t i = 0; i < sizer.answers.size(); ++i) {
    const capi::Status &answer = sizer.answers[i];
    if (!answer.ok() && answer.code != detail::StatusCode::not_supported) {
      if (i + 1 != sizer.answers.size()) fail("a query asked on after an error", "");
      if (status.code != answer.code || status.message != answer.message)
        fail("a query did not pass its runner's error on", status.message);
      return;
    }
    if (answer.ok())
      runs_any = true, most = sizer.sizes[i] > most ? sizer.sizes[i] : most;
    else if (first_refusal == nullptr)
      first_refusal = &answer;
  }
  if (!sizer.answers.empty() && !runs_any) {
    if (status.code != detail::StatusCode::not_supported || status.message != first_refusal->message)
      fail("a query that no problem runs did not pass the first refusal on", status.message);
    return;
  }
  if (!status.ok()) fail("a query failed with no failure of its runner", status.message);
  if (bytes != most) fail("a query did not answer the most bytes asked for", std::to_string(bytes));
}

void fuzz_queries(FuzzedDataProvider &data) {
  const auto policy = static_cast<SimulatedSizer::Policy>(data.ConsumeIntegralInRange<int>(0, 3));
  SimulatedSizer sizer(policy);
  constexpr size_t kUntouched = 0x5a5a5a5a;
  size_t bytes = kUntouched;
  size_t *const out = data.ConsumeIntegralInRange<int>(0, 15) == 0 ? nullptr : &bytes;
  capi::Status status;
  if (data.ConsumeBool()) {
    const int layout = pick_enum(data, {FG_ROW_MAJOR, FG_COL_MAJOR});
    const int transa = pick_enum(data, {FG_OP_N, FG_OP_T, FG_OP_C});
    const int transb = pick_enum(data, {FG_OP_N, FG_OP_T, FG_OP_C});
    const int64_t m = pick_size(data), n = pick_size(data), k = pick_size(data), batch = pick_size(data);
    const fg_math_mode_t math = pick_math(data);
    capi::SgemmSettings settings;
    settings.math = math;
    status = capi::sgemm_workspace_query(layout, transa, transb, m, n, k, batch, settings, sizer, out);
    if (sizer.sgemm_problems.size() > 4) fail("an sgemm query asked about more than its four layouts", "");
    const bool row = layout == FG_ROW_MAJOR;
    for (const detail::GemmProblem &p : sizer.sgemm_problems)
      if (p.m != (row ? m : n) || p.n != (row ? n : m) || p.k != k || p.batch != batch || p.alpha != 1.0f ||
          p.beta != 0.0f || p.math != math || p.a.ld < 1 || p.b.ld < 1 || p.ldc < p.n)
        fail("an sgemm query asked about a problem other than the caller's shape", "");
    if (!status.ok() && status.code == detail::StatusCode::invalid_value) {
      if (!sizer.sgemm_problems.empty()) fail("a refused sgemm query asked its runner", status.message);
      check_refusal(status, {"layout", "transa", "transb", "m", "n", "k", "lda", "ldb", "ldc", "stride_a", "stride_b",
                             "stride_c", "batch_count", "A", "B", "C", "bytes"});
    } else {
      check_query_answer(status, bytes, sizer);
      // Both alignments of the dense layout, and of the rounded one where its offsets fit int64.
      const size_t asked = sizer.sgemm_problems.size();
      if (status.ok() && m > 0 && n > 0 && k > 0 && batch > 0 && asked != 4 && asked != 2)
        fail("an sgemm query did not ask about both alignments of its layouts", std::to_string(asked));
    }
  } else {
    const int dtype = pick_enum(data, {FG_F32, FG_F64});
    const int64_t L = pick_size(data), M = pick_size(data), N = pick_size(data);
    status = capi::rowmean_workspace_query(dtype, L, M, N, sizer, out);
    if (sizer.rowmean_problems.size() > 2) fail("a rowmean query asked about more than its two alignments", "");
    for (const detail::RowmeanProblem &p : sizer.rowmean_problems)
      if (p.dtype != dtype || p.L != L || p.M != M || p.N != N)
        fail("a rowmean query asked about a problem other than the caller's", "");
    if (!status.ok() && status.code == detail::StatusCode::invalid_value) {
      if (!sizer.rowmean_problems.empty()) fail("a refused rowmean query asked its runner", status.message);
      check_refusal(status,
                    {"dtype", "L", "M", "N", "input", "matrix", "output", "the input's", "the matrix's", "bytes"});
    } else {
      check_query_answer(status, bytes, sizer);
      if (status.ok() && L > 0 && N > 0 && sizer.rowmean_problems.size() != 2)
        fail("a rowmean query did not ask about both alignments", "");
    }
  }
  if (out == nullptr && (status.message != "bytes is NULL" || !sizer.answers.empty()))
    fail("a query with a NULL bytes was not refused before anything else", status.message);
  if (!status.ok() && bytes != kUntouched) fail("a failed query wrote *bytes", status.message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
  FuzzedDataProvider data(bytes, size);
  switch (data.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: fuzz_sgemm(data); break;
    case 1: fuzz_rowmean(data); break;
    case 2: fuzz_workspace(data); break;
    default: fuzz_queries(data); break;
  }
  return 0;
}
