// SPDX-License-Identifier: Apache-2.0
// The argument validator and AUTO's choices as pure functions, over a simulated device: no GPU needed.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "auto_choice.hpp"
#include "capi/validate.hpp"
#include "rowmean/registry.hpp"
#include "sgemm/registry.hpp"
#include "support/bad_inputs.hpp"

using namespace fastgemm;
using fgtest::SgemmCall;

namespace {

// Simulated memory: three "device" allocations, one of another device and one of pageable host memory.
constexpr int64_t kRegion = 1024;
alignas(256) float device_a[kRegion], device_b[kRegion], device_c[kRegion], host_memory[kRegion], other_device[kRegion];

capi::PointerKind classify(const void *pointer) {
  const auto inside = [pointer](const float *region) { return pointer >= region && pointer < region + kRegion; };
  if (inside(host_memory)) return capi::PointerKind::pageable_host;
  if (inside(other_device)) return capi::PointerKind::other_device;
  if (inside(device_a) || inside(device_b) || inside(device_c)) return capi::PointerKind::device_accessible;
  return capi::PointerKind::unknown;
}

// Each region is one allocation, as the driver would report it.
capi::Status simulated(const void *pointer, capi::PointerInfo *info) {
  info->kind = classify(pointer);
  for (const float *region : {device_a, device_b, device_c, host_memory, other_device})
    if (pointer >= region && pointer < region + kRegion) {
      info->range_begin = reinterpret_cast<uintptr_t>(region);
      info->range_bytes = sizeof(float) * kRegion;
    }
  return capi::Status::success();
}

capi::SgemmArgs args_of(const SgemmCall &c, bool batched) {
  capi::SgemmArgs args;
  args.layout = c.layout, args.transa = c.transa, args.transb = c.transb;
  args.m = c.m, args.n = c.n, args.k = c.k;
  args.alpha = c.alpha, args.beta = c.beta;
  args.A = c.A, args.lda = c.lda, args.stride_a = c.stride_a;
  args.B = c.B, args.ldb = c.ldb, args.stride_b = c.stride_b;
  args.C = c.C, args.ldc = c.ldc, args.stride_c = c.stride_c;
  args.batch_count = c.batch_count;
  args.batched = batched;
  return args;
}

capi::Status validate(const capi::SgemmArgs &args, detail::GemmProblem *problem, capi::GemmWork *work) {
  return capi::validate_sgemm(args, simulated, problem, work);
}

}  // namespace

TEST_CASE("validator: every bad sgemm argument class is invalid and named", "[validate]") {
  const auto cases = fgtest::bad_sgemm_cases(device_a, device_b, device_c, host_memory);
  REQUIRE(cases.size() >= 25);
  for (const auto &bad : cases)
    for (bool batched : {false, true}) {
      if (bad.batched_only && !batched) continue;
      INFO(bad.what << (batched ? ", batched" : ""));
      detail::GemmProblem problem;
      capi::GemmWork work;
      const capi::Status status = validate(args_of(bad.call, batched), &problem, &work);
      INFO(status.message);
      CHECK(status.code == detail::StatusCode::invalid_value);
      CHECK(status.message.find(bad.message_part) != std::string::npos);
    }
  const SgemmCall valid = fgtest::valid_sgemm_call(device_a, device_b, device_c);
  detail::GemmProblem problem;
  capi::GemmWork work;
  for (bool batched : {false, true}) CHECK(validate(args_of(valid, batched), &problem, &work).ok());
  SgemmCall elsewhere = valid;
  elsewhere.B = other_device;
  CHECK(validate(args_of(elsewhere, false), &problem, &work).message.find("another device") != std::string::npos);
}

TEST_CASE("validator: leading-dimension minimum for every layout and transpose", "[validate]") {
  // The reference BLAS's rule, written out independently of the validator.
  const int64_t m = 7, n = 11, k = 13;
  for (fg_layout_t layout : {FG_ROW_MAJOR, FG_COL_MAJOR})
    for (fg_op_t transa : {FG_OP_N, FG_OP_T, FG_OP_C})
      for (fg_op_t transb : {FG_OP_N, FG_OP_T, FG_OP_C}) {
        const bool row = layout == FG_ROW_MAJOR, a_n = transa == FG_OP_N, b_n = transb == FG_OP_N;
        const int64_t lda_min = row ? (a_n ? k : m) : (a_n ? m : k);
        const int64_t ldb_min = row ? (b_n ? n : k) : (b_n ? k : n);
        const int64_t ldc_min = row ? n : m;
        SgemmCall call{layout, transa,   transb,  m, n,    k,        1.0f,    device_a, lda_min,
                       0,      device_b, ldb_min, 0, 0.0f, device_c, ldc_min, 0,        1};
        INFO("layout " << layout << " transa " << transa << " transb " << transb);
        detail::GemmProblem problem;
        capi::GemmWork work;
        CHECK(validate(args_of(call, false), &problem, &work).ok());
        for (int which = 0; which < 3; ++which) {
          SgemmCall short_call = call;
          int64_t &ld = which == 0 ? short_call.lda : (which == 1 ? short_call.ldb : short_call.ldc);
          ld -= 1;
          const capi::Status status = validate(args_of(short_call, false), &problem, &work);
          INFO(status.message);
          CHECK(status.code == detail::StatusCode::invalid_value);
          CHECK(status.message.find(std::string(which == 0 ? "lda" : (which == 1 ? "ldb" : "ldc")) + " = " +
                                    std::to_string(ld)) == 0);
        }
      }
}

TEST_CASE("validator: trivial cases need no pointers", "[validate]") {
  detail::GemmProblem problem;
  capi::GemmWork work = capi::GemmWork::product;
  SgemmCall call{FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 0, 5, 5, 1.0f, nullptr, 5, 0, nullptr, 5, 0, 0.0f, nullptr, 5, 0, 1};
  REQUIRE(validate(args_of(call, false), &problem, &work).ok());
  CHECK(work == capi::GemmWork::nothing);
  call.m = 4, call.batch_count = 0;
  REQUIRE(validate(args_of(call, true), &problem, &work).ok());
  CHECK(work == capi::GemmWork::nothing);
  call.batch_count = 1, call.k = 0, call.C = device_c, call.beta = 2.0f;  // C := beta C, A and B unread
  REQUIRE(validate(args_of(call, false), &problem, &work).ok());
  CHECK(work == capi::GemmWork::scale_c);
  call.k = 5, call.alpha = 0.0f;
  REQUIRE(validate(args_of(call, false), &problem, &work).ok());
  CHECK(work == capi::GemmWork::scale_c);
  call.beta = 1.0f, call.C = nullptr;  // C := 1 * C: nothing to do, nothing touched
  REQUIRE(validate(args_of(call, false), &problem, &work).ok());
  CHECK(work == capi::GemmWork::nothing);
}

TEST_CASE("validator: column-major becomes the row-major product with A and B swapped", "[validate]") {
  SgemmCall call{FG_COL_MAJOR, FG_OP_T,  FG_OP_N, 3,  4,    5,        2.0f, device_a, 6,
                 30,           device_b, 7,       35, 0.5f, device_c, 8,    32,       2};
  detail::GemmProblem p;
  capi::GemmWork work;
  REQUIRE(validate(args_of(call, true), &p, &work).ok());
  CHECK(work == capi::GemmWork::product);
  CHECK(p.m == 4);
  CHECK(p.n == 3);
  CHECK(p.k == 5);
  CHECK(p.batch == 2);
  CHECK(p.a.data == device_b);
  CHECK(p.a.ld == 7);
  CHECK(p.a.stride == 35);
  CHECK(!p.a.transposed);
  CHECK(p.b.data == device_a);
  CHECK(p.b.ld == 6);
  CHECK(p.b.transposed);
  CHECK(p.c == device_c);
  CHECK(p.ldc == 8);
  CHECK(p.stride_c == 32);
  CHECK(p.alpha == 2.0f);
  CHECK(p.beta == 0.5f);
  call.layout = FG_ROW_MAJOR, call.lda = 3, call.ldb = 4, call.ldc = 4;
  REQUIRE(validate(args_of(call, false), &p, &work).ok());
  CHECK(p.m == 3);
  CHECK(p.a.data == device_a);
  CHECK(p.a.transposed);
  CHECK(p.batch == 1);
}

TEST_CASE("validator: C's stride must keep the products apart", "[validate]") {
  detail::GemmProblem p;
  capi::GemmWork work;
  // 4 x 5 row-major products, ldc = 5: stacked needs stride_c >= 20.
  SgemmCall call{FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 4,    5,        6, 1.0f, device_a, 6, 0,
                 device_b,     5,       0,       0.0f, device_c, 5, 20,   3};
  CHECK(validate(args_of(call, true), &p, &work).ok());
  call.stride_c = 19;
  CHECK(!validate(args_of(call, true), &p, &work).ok());
  // Side by side within rows: ldc = 15 holds three products of width 5.
  call.ldc = 15, call.stride_c = 5;
  CHECK(validate(args_of(call, true), &p, &work).ok());
  call.stride_c = 4;
  CHECK(!validate(args_of(call, true), &p, &work).ok());
  call.ldc = 14, call.stride_c = 5;  // the third product would run past ldc into the next row
  CHECK(!validate(args_of(call, true), &p, &work).ok());
  call.batch_count = 1, call.stride_c = 0;  // one product: any stride
  CHECK(validate(args_of(call, true), &p, &work).ok());
}

TEST_CASE("validator: every bad rowmean argument class is invalid and named", "[validate]") {
  for (const auto &bad : fgtest::bad_rowmean_cases(device_a, device_b, device_c, host_memory)) {
    INFO(bad.what);
    detail::RowmeanProblem problem;
    bool empty = false;
    const auto &c = bad.call;
    const capi::Status status =
        capi::validate_rowmean({c.dtype, c.input, c.matrix, c.output, c.L, c.M, c.N}, simulated, &problem, &empty);
    INFO(status.message);
    CHECK(status.code == detail::StatusCode::invalid_value);
    CHECK(status.message.find(bad.message_part) != std::string::npos);
  }
  detail::RowmeanProblem problem;
  bool empty = true;
  REQUIRE(capi::validate_rowmean({FG_F64, device_a, device_b, device_c, 4, 3, 2}, simulated, &problem, &empty).ok());
  CHECK(!empty);
  CHECK(problem.dtype == FG_F64);
  CHECK(problem.L == 4);
  REQUIRE(capi::validate_rowmean({FG_F32, nullptr, nullptr, nullptr, 0, 3, 2}, simulated, &problem, &empty).ok());
  CHECK(empty);
  REQUIRE(capi::validate_rowmean({FG_F32, nullptr, nullptr, nullptr, 4, 3, 0}, simulated, &problem, &empty).ok());
  CHECK(empty);
}

TEST_CASE("AUTO's SGEMM table: the project's kernels where they were measured faster, cuBLAS elsewhere", "[auto]") {
  detail::DeviceInfo hopper;
  hopper.cc_major = 9, hopper.sm_count = 132, hopper.smem_per_block_optin = 227 * 1024, hopper.l2_bytes = 50 << 20;
  detail::DeviceInfo ampere = hopper;
  ampere.cc_major = 8, ampere.sm_count = 108;
  const auto choice = [&](int64_t m, int64_t n, int64_t k, int64_t batch, const detail::DeviceInfo &device) {
    detail::GemmProblem p;
    p.m = m, p.n = n, p.k = k, p.batch = batch;
    p.a = {device_a, k, m * k, false};
    p.b = {device_b, n, k * n, false};
    p.c = device_c;
    p.ldc = n;
    p.stride_c = m * n;
    return fgtest::auto_sgemm_choice(p, device);
  };
  for (int64_t size : {20, 24, 32, 64, 128, 256, 384})
    CHECK(choice(size, size, size, 1, hopper) == FG_SGEMM_SMALL_TILE);
  CHECK(choice(100, 1000, 1024, 1, hopper) == FG_SGEMM_SMALL_TILE);
  CHECK(choice(64, 64, 64, 16, hopper) == FG_SGEMM_SMALL_TILE);  // batches whose outputs all together are few
  CHECK(choice(64, 64, 64, 36, hopper) == FG_SGEMM_SMALL_TILE);  // 384 x 384 outputs exactly
  CHECK(choice(64, 64, 64, 37, hopper) == FG_SGEMM_CUBLAS);      // one batch more
  CHECK(choice(64, 64, 64, 1024, hopper) == FG_SGEMM_CUBLAS);    // many batches: cuBLAS measured faster
  CHECK(choice(256, 256, 256, 64, hopper) == FG_SGEMM_CUBLAS);
  for (int64_t size : {1, 8, 16, 19}) CHECK(choice(size, size, size, 1, hopper) == FG_SGEMM_CUBLAS);  // too little work
  CHECK(choice(32, 32, 32, 64, hopper) == FG_SGEMM_SMALL_TILE);  // batched: from 32^3 a product
  CHECK(choice(24, 24, 24, 16, hopper) == FG_SGEMM_CUBLAS);
  CHECK(choice(16, 16, 16, 16, hopper) == FG_SGEMM_CUBLAS);
  CHECK(choice(1, 8192, 1024, 1, hopper) == FG_SGEMM_CUBLAS);  // matrix-vector shapes
  CHECK(choice(8192, 15, 16, 1, hopper) == FG_SGEMM_CUBLAS);
  CHECK(choice(384, 385, 384, 1, hopper) == FG_SGEMM_CUBLAS);   // more outputs than measured faster
  CHECK(choice(256, 256, 1025, 1, hopper) == FG_SGEMM_CUBLAS);  // deeper than measured faster
  CHECK(choice(4096, 4096, 256, 1, hopper) == FG_SGEMM_DOUBLE_BUFFER);
  CHECK(choice(8192, 4096, 128, 1, hopper) == FG_SGEMM_DOUBLE_BUFFER);
  CHECK(choice(4096, 4096, 257, 1, hopper) == FG_SGEMM_CUBLAS);
  CHECK(choice(4095, 4096, 256, 1, hopper) == FG_SGEMM_CUBLAS);
  CHECK(choice(4096, 4096, 256, 2, hopper) == FG_SGEMM_CUBLAS);
  for (int64_t size : {512, 1000, 4096, 16384}) CHECK(choice(size, size, size, 1, hopper) == FG_SGEMM_CUBLAS);
  CHECK(choice(256, 256, 256, 1, ampere) == FG_SGEMM_CUBLAS);  // nothing measured there
}

TEST_CASE("AUTO's choice is an algorithm that can run the problem", "[auto]") {
  detail::DeviceInfo hopper;
  hopper.cc_major = 9, hopper.sm_count = 132, hopper.smem_per_block_optin = 227 * 1024, hopper.l2_bytes = 50 << 20;
  detail::DeviceInfo turing;
  turing.cc_major = 7, turing.cc_minor = 5, turing.sm_count = 40, turing.smem_per_block_optin = 64 * 1024;
  for (const detail::DeviceInfo &device : {hopper, turing})
    for (int64_t size : {1, 7, 128, 129, 1000, 4096})
      for (int64_t misalign : {0, 1}) {
        detail::GemmProblem p;
        p.m = p.n = p.k = size;
        p.a = {device_a + misalign, size, 0, misalign == 1};
        p.b = {device_b, size + misalign, 0, false};
        p.c = device_c + misalign;
        p.ldc = size;
        INFO("size " << size << " misaligned " << misalign << " arch " << device.arch());
        const fg_sgemm_algo_t choice = fgtest::auto_sgemm_choice(p, device);
        CHECK(choice != FG_SGEMM_AUTO);
        const detail::SgemmVariant *variant = detail::find_sgemm_variant(choice);
        REQUIRE(variant != nullptr);
        CHECK(variant->can_implement(p, device).ok());
      }
  // The measured table behind the rowmean rule (see lib/rowmean/registry.cpp), on the H100's figures.
  const auto rowmean_choice = [&](fg_dtype_t dtype, int64_t L, int64_t M, int64_t N) {
    return fgtest::auto_rowmean_choice(detail::RowmeanProblem{dtype, device_a, device_b, device_c, L, M, N}, hopper);
  };
  CHECK(rowmean_choice(FG_F32, 1024, 64, 8192) == FG_ROWMEAN_RELAY);
  CHECK(rowmean_choice(FG_F32, 1024, 64, 2048) == FG_ROWMEAN_RELAY);
  CHECK(rowmean_choice(FG_F32, 2048, 32, 4096) == FG_ROWMEAN_RELAY);
  CHECK(rowmean_choice(FG_F32, 512, 128, 8192) == FG_ROWMEAN_FUSED);
  CHECK(rowmean_choice(FG_F32, 512, 512, 1024) == FG_ROWMEAN_FUSED);
  // Short rows put fused first, but a tile's means at L = 4096 do not fit in shared memory: staged runs.
  CHECK(rowmean_choice(FG_F32, 4096, 8, 16384) == FG_ROWMEAN_STAGED);
  CHECK(rowmean_choice(FG_F32, 8192, 2048, 16) == FG_ROWMEAN_STAGED);
  CHECK(rowmean_choice(FG_F64, 64, 1, 1000000) == FG_ROWMEAN_FUSED);
  CHECK(rowmean_choice(FG_F64, 512, 512, 1024) == FG_ROWMEAN_STAGED);
  CHECK(rowmean_choice(FG_F64, 128, 4096, 2048) == FG_ROWMEAN_STAGED);
  CHECK(rowmean_choice(FG_F32, 1024, 64, 512) == FG_ROWMEAN_STAGED);
  CHECK(rowmean_choice(FG_F32, 3, 100000, 100) == FG_ROWMEAN_STAGED);
  for (int64_t L : {1, 100, 1025, 16384}) {
    const detail::RowmeanProblem p{FG_F32, device_a, device_b, device_c, L, 64, 8};
    const fg_rowmean_algo_t choice = fgtest::auto_rowmean_choice(p, hopper);
    const detail::RowmeanVariant *variant = detail::find_rowmean_variant(choice);
    REQUIRE(variant != nullptr);
    CHECK(variant->can_implement(p, hopper).ok());
  }
}

namespace {

// Brute force: whether any element of C is written by two products of the batch.
bool overlap_by_enumeration(int64_t lines, int64_t length, int64_t ld, int64_t stride, int64_t count) {
  std::set<int64_t> written;
  for (int64_t b = 0; b < count; ++b)
    for (int64_t r = 0; r < lines; ++r)
      for (int64_t c = 0; c < length; ++c)
        if (!written.insert(b * stride + r * ld + c).second) return true;
  return false;
}

detail::DeviceInfo simulated_hopper() {
  detail::DeviceInfo hopper;
  hopper.cc_major = 9, hopper.sm_count = 132, hopper.smem_per_block_optin = 227 * 1024, hopper.l2_bytes = 50 << 20;
  return hopper;
}

std::vector<fg_rowmean_algo_t> ids(const detail::Preference<fg_rowmean_algo_t> &preference) {
  return std::vector<fg_rowmean_algo_t>(preference.begin(), preference.end());
}

// The message of a refusal, or "" when the variant accepts the problem.
std::string refusal(fg_rowmean_algo_t id, const detail::RowmeanProblem &p, const detail::DeviceInfo &device) {
  const detail::RowmeanVariant *variant = detail::find_rowmean_variant(id);
  REQUIRE(variant != nullptr);
  const detail::Status status = variant->can_implement(p, device);
  if (status.ok()) return "";
  CHECK(status.code == detail::StatusCode::not_supported);
  CHECK_FALSE(status.message.empty());
  return status.message;
}

}  // namespace

TEST_CASE("validator: the C-stride rule matches enumeration on every small layout", "[validate]") {
  for (int64_t lines = 1; lines <= 4; ++lines)
    for (int64_t length = 1; length <= 4; ++length)
      for (int64_t ld = length; ld <= 7; ++ld)
        for (int64_t stride = 0; stride <= 30; ++stride)
          for (int64_t count = 1; count <= 5; ++count) {
            INFO("lines " << lines << " length " << length << " ld " << ld << " stride " << stride << " count "
                          << count);
            CHECK(capi::batches_overlap(lines, length, ld, stride, count) ==
                  overlap_by_enumeration(lines, length, ld, stride, count));
          }
}

TEST_CASE("validator: disjoint interleaved batches of C are accepted, with the issue's layout", "[validate]") {
  detail::GemmProblem p;
  capi::GemmWork work;
  // Row-major m = 2, n = 1, ldc = 3, stride_c = 2, batch 3: C elements {0, 3}, {2, 5}, {4, 7}.
  SgemmCall call{FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 2,    1,        4, 1.0f, device_a, 4, 8,
                 device_b,     1,       4,       0.0f, device_c, 3, 2,    3};
  const capi::Status accepted = validate(args_of(call, true), &p, &work);
  INFO(accepted.message);
  CHECK(accepted.ok());
  call.stride_c = 3;  // {0, 3}, {3, 6}: element 3 twice
  const capi::Status refused = validate(args_of(call, true), &p, &work);
  CHECK(refused.code == detail::StatusCode::invalid_value);
  CHECK(refused.message.find("stride_c = 3") == 0);
}

TEST_CASE("validator: C sharing memory with A or B is refused; blocks of one array are not", "[validate]") {
  detail::GemmProblem p;
  capi::GemmWork work;
  // Column-major 4 x 4 blocks of one 12 x 12 array (ld 12): C = X(4:8, 4:8), A = X(4:8, 0:4), B = X(0:4, 4:8),
  // the trailing update of a blocked factorization.
  float *x = device_a;
  SgemmCall call{FG_COL_MAJOR, FG_OP_N,        FG_OP_N, 4, 4, 4, -1.0f, x + 4, 12, 0, x + 4 * 12, 12, 0,
                 1.0f,         x + 4 * 12 + 4, 12,      0, 1};
  const capi::Status blocks = validate(args_of(call, false), &p, &work);
  INFO(blocks.message);
  CHECK(blocks.ok());
  SgemmCall aliased = call;
  aliased.C = x + 4;  // C is A
  capi::Status status = validate(args_of(aliased, false), &p, &work);
  CHECK(status.code == detail::StatusCode::invalid_value);
  CHECK(status.message.find("C = ") == 0);
  CHECK(status.message.find("shares memory with A") != std::string::npos);
  aliased = call;
  aliased.C = x + 4 * 12 + 2;  // rows 2..5 of B's columns
  status = validate(args_of(aliased, false), &p, &work);
  CHECK(status.message.find("shares memory with B") != std::string::npos);
  aliased = call;
  aliased.ldc = 13;  // another leading dimension over the same addresses: not provably apart
  aliased.C = x + 4 * 12 + 4;
  status = validate(args_of(aliased, false), &p, &work);
  CHECK(status.code == detail::StatusCode::invalid_value);
  // alpha == 0 reads neither A nor B: C may be anywhere.
  aliased = call;
  aliased.C = x + 4, aliased.alpha = 0.0f;
  CHECK(validate(args_of(aliased, false), &p, &work).ok());
}

TEST_CASE("validator: blocks of one array with one leading dimension, batched, match enumeration", "[validate]") {
  // Row-major A (m x k) and C (m x n) in one array with lda == ldc and strides of whole lines, C anywhere
  // around A: refused exactly when an element of C is one of A's (or C's products share one), else accepted.
  detail::GemmProblem p;
  capi::GemmWork work;
  float *const base = device_a + 64;
  const auto elements = [](int64_t lines, int64_t length, int64_t ld, int64_t stride, int64_t count, int64_t from) {
    std::vector<int64_t> all;
    for (int64_t b = 0; b < count; ++b)
      for (int64_t r = 0; r < lines; ++r)
        for (int64_t e = 0; e < length; ++e) all.push_back(from + b * stride + r * ld + e);
    return all;
  };
  int64_t accepted = 0;
  for (int64_t ld = 2; ld <= 4; ++ld)
    for (int64_t m = 1; m <= 3; ++m)
      for (int64_t k = 1; k <= ld; ++k)
        for (int64_t n = 1; n <= ld; ++n)
          for (int64_t a_lines : {0, 1, 2, 3, 5})
            for (int64_t c_lines : {1, 2, 3, 5})
              for (int64_t batch = 1; batch <= 3; ++batch)
                for (int64_t shift = -20; shift <= 20; ++shift) {
                  const int64_t stride_a = a_lines * ld, stride_c = c_lines * ld;
                  const std::vector<int64_t> a = elements(m, k, ld, stride_a, batch, 0);
                  const std::vector<int64_t> c = elements(m, n, ld, stride_c, batch, shift);
                  std::set<int64_t> c_set(c.begin(), c.end());
                  const bool c_twice = c_set.size() != c.size();
                  const bool shared = std::any_of(a.begin(), a.end(), [&](int64_t e) { return c_set.count(e) != 0; });
                  const SgemmCall call{FG_ROW_MAJOR, FG_OP_N, FG_OP_N,  m,        n, k, 1.0f,
                                       base,         ld,      stride_a, device_b, n, 0, 0.0f,
                                       base + shift, ld,      stride_c, batch};
                  const capi::Status status = validate(args_of(call, true), &p, &work);
                  INFO("ld " << ld << " m " << m << " k " << k << " n " << n << " stride_a " << stride_a << " stride_c "
                             << stride_c << " batch " << batch << " C - A " << shift << ": " << status.message);
                  if (c_twice) {
                    CHECK(status.message.find("stride_c = ") == 0);
                  } else if (shared) {
                    CHECK(status.message.find("shares memory with A") != std::string::npos);
                  } else {
                    CHECK(status.ok());
                    ++accepted;
                  }
                }
  CHECK(accepted > 0);
  // Column-major batches of lines of their own, interleaved: A_i = columns 8i..8i+3, C_i = columns
  // 8i+4..8i+7 of one 6-row array.
  const SgemmCall interleaved{FG_COL_MAJOR, FG_OP_N,  FG_OP_N, 6,  4,    4,         1.0f, base, 6,
                              48,           device_b, 4,       16, 0.0f, base + 24, 6,    48,   3};
  const capi::Status status = validate(args_of(interleaved, true), &p, &work);
  INFO(status.message);
  CHECK(status.ok());
}

TEST_CASE("validator: operands past the end of their allocation are named", "[validate]") {
  detail::GemmProblem p;
  capi::GemmWork work;
  // A is 4 x 6 from 30 floats before the end of device_a's allocation: its last 24 fit, then 6 more do not.
  SgemmCall call{FG_ROW_MAJOR, FG_OP_N,  FG_OP_N, 4, 5, 6, 1.0f, device_a + kRegion - 24, 6, 0, device_b, 5, 0,
                 0.0f,         device_c, 5,       0, 1};
  CHECK(validate(args_of(call, false), &p, &work).ok());
  call.A = device_a + kRegion - 23;
  capi::Status status = validate(args_of(call, false), &p, &work);
  CHECK(status.code == detail::StatusCode::invalid_value);
  CHECK(status.message.find("A = ") == 0);
  CHECK(status.message.find("runs past the end of its allocation") != std::string::npos);
  call.A = device_a, call.C = device_c + kRegion - 19;
  status = validate(args_of(call, false), &p, &work);
  CHECK(status.message.find("C = ") == 0);
  detail::RowmeanProblem problem;
  bool empty = false;
  status = capi::validate_rowmean({FG_F32, device_a + kRegion - 23, device_b, device_c, 4, 3, 2}, simulated, &problem,
                                  &empty);
  CHECK(status.message.find("input = ") == 0);
}

TEST_CASE("validator: rowmean pointers off their element boundary are named", "[validate]") {
  detail::RowmeanProblem problem;
  bool empty = false;
  const auto off = [](const float *p, int bytes) { return reinterpret_cast<const char *>(p) + bytes; };
  REQUIRE(capi::validate_rowmean({FG_F64, device_a, device_b, device_c, 4, 3, 2}, simulated, &problem, &empty).ok());
  capi::Status status =
      capi::validate_rowmean({FG_F64, off(device_a, 4), device_b, device_c, 4, 3, 2}, simulated, &problem, &empty);
  CHECK(status.code == detail::StatusCode::invalid_value);
  CHECK(status.message.find("input = ") == 0);
  CHECK(status.message.find("not aligned to its 8-byte FG_F64 elements") != std::string::npos);
  status = capi::validate_rowmean({FG_F64, device_a, off(device_b, 4), device_c, 4, 3, 2}, simulated, &problem, &empty);
  CHECK(status.message.find("matrix = ") == 0);
  status = capi::validate_rowmean({FG_F64, device_a, device_b, const_cast<char *>(off(device_c, 4)), 4, 3, 2},
                                  simulated, &problem, &empty);
  CHECK(status.message.find("output = ") == 0);
  status = capi::validate_rowmean({FG_F32, off(device_a, 2), device_b, device_c, 4, 3, 2}, simulated, &problem, &empty);
  CHECK(status.message.find("not aligned to its 4-byte FG_F32 elements") != std::string::npos);
  CHECK(capi::validate_rowmean({FG_F32, device_a + 1, device_b, device_c + 1, 4, 3, 2}, simulated, &problem, &empty)
            .ok());
}

TEST_CASE("validator: fg_set_workspace's arguments", "[validate]") {
  CHECK(capi::validate_workspace(nullptr, 0, simulated).ok());
  CHECK(capi::validate_workspace(nullptr, 16, simulated).message.find("workspace is NULL") == 0);
  CHECK(capi::validate_workspace(device_a, sizeof device_a, simulated).ok());
  CHECK(capi::validate_workspace(device_a + 1, 256, simulated).message.find("aligned to 256 bytes") !=
        std::string::npos);
  CHECK(capi::validate_workspace(device_a, sizeof device_a + 4, simulated).message.find("runs past the end") !=
        std::string::npos);
  CHECK(capi::validate_workspace(host_memory, 256, simulated).message.find("pageable host memory") !=
        std::string::npos);
  CHECK(capi::validate_workspace(other_device, 256, simulated).message.find("another device") != std::string::npos);
}

TEST_CASE("validator: a workspace is device memory of the handle's device, whatever its bytes", "[validate]") {
  // Pinned host memory is device-accessible, and an operand may live there, but it is not the device's memory.
  alignas(256) static float pinned[kRegion];
  const capi::PointerInspector inspect = [](const void *pointer, capi::PointerInfo *info) {
    if (pointer >= pinned && pointer < pinned + kRegion) {
      info->kind = capi::PointerKind::pinned_host;
      info->range_begin = reinterpret_cast<uintptr_t>(pinned);
      info->range_bytes = sizeof pinned;
      return capi::Status::success();
    }
    return simulated(pointer, info);
  };
  for (size_t bytes : {size_t{0}, size_t{256}}) {
    INFO("bytes " << bytes);
    CHECK(capi::validate_workspace(pinned, bytes, inspect).message.find("pinned host memory") != std::string::npos);
    CHECK(capi::validate_workspace(host_memory, bytes, inspect).message.find("pageable host memory") !=
          std::string::npos);
    CHECK(capi::validate_workspace(other_device, bytes, inspect).message.find("another device") != std::string::npos);
    CHECK(capi::validate_workspace(device_a, bytes, inspect).ok());
  }
  // Operands may be pinned host memory.
  detail::GemmProblem p;
  capi::GemmWork work;
  const SgemmCall call{FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 4,    4,        4, 1.0f, pinned, 4, 0,
                       device_b,     4,       0,       0.0f, device_c, 4, 0,    1};
  CHECK(capi::validate_sgemm(args_of(call, false), inspect, &p, &work).ok());
}

TEST_CASE("AUTO's rowmean preference lists the fallbacks that the algorithms no longer run themselves", "[auto]") {
  const detail::DeviceInfo hopper = simulated_hopper();
  const auto preference = [&](fg_dtype_t dtype, int64_t L, int64_t M, int64_t N) {
    return ids(
        detail::rowmean_auto_preference(detail::RowmeanProblem{dtype, device_a, device_b, device_c, L, M, N}, hopper));
  };
  using V = std::vector<fg_rowmean_algo_t>;
  // After staged, the workspace-free algorithms for a caller's workspace too small for it (tests/unit/
  // test_registry.cpp).
  CHECK(preference(FG_F32, 1024, 64, 8192) ==
        V{FG_ROWMEAN_RELAY, FG_ROWMEAN_FUSED, FG_ROWMEAN_STAGED, FG_ROWMEAN_COALESCED});
  CHECK(preference(FG_F32, 512, 128, 8192) == V{FG_ROWMEAN_FUSED, FG_ROWMEAN_STAGED, FG_ROWMEAN_COALESCED});
  CHECK(preference(FG_F32, 4096, 8, 16384) == V{FG_ROWMEAN_FUSED, FG_ROWMEAN_STAGED, FG_ROWMEAN_COALESCED});
  CHECK(preference(FG_F64, 512, 512, 1024) == V{FG_ROWMEAN_STAGED, FG_ROWMEAN_FUSED, FG_ROWMEAN_COALESCED});
  CHECK(preference(FG_F32, 512, 1024, 64) == V{FG_ROWMEAN_STAGED, FG_ROWMEAN_COALESCED, FG_ROWMEAN_FUSED});
  detail::DeviceInfo slow_fp64 = hopper;
  slow_fp64.cc_minor = 9, slow_fp64.cc_major = 8;
  CHECK(ids(detail::rowmean_auto_preference(
            detail::RowmeanProblem{FG_F64, device_a, device_b, device_c, 512, 512, 1024}, slow_fp64)) ==
        V{FG_ROWMEAN_CUBLAS, FG_ROWMEAN_STAGED, FG_ROWMEAN_FUSED, FG_ROWMEAN_COALESCED});

  // Where the relay cannot run (a matrix off its 16-byte boundary), AUTO runs the next of its preference: the same
  // algorithm the relay used to hand such problems to.
  const detail::RowmeanProblem misaligned{FG_F32, device_a, device_b + 1, device_c, 1024, 64, 8192};
  CHECK(fgtest::auto_rowmean_choice(misaligned, hopper) == FG_ROWMEAN_FUSED);
  // Every preference holds an algorithm that runs every problem, and only workspace-free ones after it.
  for (int64_t L : {1, 1000, 4096, 20000})
    for (fg_dtype_t dtype : {FG_F32, FG_F64}) {
      const auto list = preference(dtype, L, 64, 4096);
      const auto staged = std::find(list.begin(), list.end(), FG_ROWMEAN_STAGED);
      REQUIRE(staged != list.end());
      for (auto after = staged + 1; after != list.end(); ++after)
        CHECK(detail::find_rowmean_variant(*after)->workspace_bytes(
                  detail::RowmeanProblem{dtype, device_a, device_b, device_c, L, 64, 4096}, hopper) == 0);
    }
}

TEST_CASE("rowmean algorithms refuse what they cannot run, naming the condition", "[auto]") {
  const detail::DeviceInfo hopper = simulated_hopper();
  detail::DeviceInfo turing = hopper;
  turing.cc_major = 7, turing.cc_minor = 5, turing.smem_per_block_optin = 64 * 1024;
  const auto problem = [](fg_dtype_t dtype, int64_t L, const float *matrix = device_b) {
    return detail::RowmeanProblem{dtype, device_a, matrix, device_c, L, 64, 4096};
  };
  // The seed algorithms: a block holds a batch's rows.
  for (fg_rowmean_algo_t id : {FG_ROWMEAN_SINGLE_BLOCK, FG_ROWMEAN_BLOCK_PER_BATCH}) {
    CHECK(refusal(id, problem(FG_F32, 1024), hopper).empty());
    CHECK(refusal(id, problem(FG_F32, 1025), hopper).find("L = 1025 must be <= 1024") != std::string::npos);
  }
  // coalesced: a batch's means, 8 bytes a row, in shared memory.
  CHECK(refusal(FG_ROWMEAN_COALESCED, problem(FG_F64, 29056), hopper).empty());
  CHECK(refusal(FG_ROWMEAN_COALESCED, problem(FG_F32, 8192), turing).empty());
  CHECK(refusal(FG_ROWMEAN_COALESCED, problem(FG_F32, 8193), turing).find("65544 bytes of shared memory") !=
        std::string::npos);
  CHECK(refusal(FG_ROWMEAN_COALESCED, problem(FG_F32, 29057), hopper).find("bytes of shared memory") !=
        std::string::npos);
  // fused: two tiles of means must fit in shared memory.
  CHECK(refusal(FG_ROWMEAN_FUSED, problem(FG_F32, 3072), hopper).empty());
  CHECK(refusal(FG_ROWMEAN_FUSED, problem(FG_F64, 1024), hopper).empty());
  const std::string fused = refusal(FG_ROWMEAN_FUSED, problem(FG_F32, 4096), hopper);
  CHECK(fused.find("bytes of shared memory") != std::string::npos);
  CHECK(fused.find(std::to_string(227 * 1024)) != std::string::npos);
  CHECK_FALSE(refusal(FG_ROWMEAN_FUSED, problem(FG_F64, 2048), hopper).empty());
  // The relay: cp.async and FP64 tensor cores, 16-byte matrix rows.
  CHECK(refusal(FG_ROWMEAN_RELAY, problem(FG_F32, 1024), hopper).empty());
  CHECK(refusal(FG_ROWMEAN_RELAY, problem(FG_F32, 8192), hopper).empty());
  CHECK(refusal(FG_ROWMEAN_RELAY, problem(FG_F32, 1024), turing).find("compute capability 8.0") != std::string::npos);
  CHECK(refusal(FG_ROWMEAN_RELAY, problem(FG_F32, 1026), hopper).find("L = 1026 must be a multiple of 4") !=
        std::string::npos);
  CHECK(refusal(FG_ROWMEAN_RELAY, problem(FG_F64, 1025), hopper).find("multiple of 2") != std::string::npos);
  CHECK(refusal(FG_ROWMEAN_RELAY, problem(FG_F64, 1026), hopper).empty());
  CHECK(refusal(FG_ROWMEAN_RELAY, problem(FG_F32, 1024, device_b + 1), hopper).find("16-byte aligned") !=
        std::string::npos);
  // The general algorithms run everything.
  for (fg_rowmean_algo_t id : {FG_ROWMEAN_TWO_PASS, FG_ROWMEAN_STAGED, FG_ROWMEAN_CUBLAS})
    for (int64_t L : {1, 1025, 20000}) CHECK(refusal(id, problem(FG_F64, L), turing).empty());
}

TEST_CASE("workspace_bytes says what each algorithm asks the handle for", "[auto]") {
  const detail::DeviceInfo hopper = simulated_hopper();
  const detail::RowmeanProblem p{FG_F64, device_a, device_b, device_c, 1000, 64, 300};
  const auto bytes = [&](fg_rowmean_algo_t id) { return detail::find_rowmean_variant(id)->workspace_bytes(p, hopper); };
  for (fg_rowmean_algo_t id :
       {FG_ROWMEAN_SINGLE_BLOCK, FG_ROWMEAN_BLOCK_PER_BATCH, FG_ROWMEAN_COALESCED, FG_ROWMEAN_FUSED})
    CHECK(bytes(id) == 0);
  CHECK(bytes(FG_ROWMEAN_TWO_PASS) == 1000u * 300u * 8u);
  // cuBLAS's gemv: the means (rounded up to 256 bytes), then a vector of M ones.
  CHECK(bytes(FG_ROWMEAN_CUBLAS) == 2400000u + 64u * 8u);
  // staged and the relay keep at least the means (in double for staged, in the problem's type for the relay).
  CHECK(bytes(FG_ROWMEAN_STAGED) >= 1000u * 300u * 8u);
  CHECK(bytes(FG_ROWMEAN_RELAY) >= 1000u * 300u * 8u);
  size_t through_registry = 0;
  REQUIRE(detail::rowmean_workspace_bytes(p, hopper, FG_ROWMEAN_AUTO, &through_registry).ok());
  CHECK(through_registry == bytes(fgtest::auto_rowmean_choice(p, hopper)));
  CHECK(detail::rowmean_workspace_bytes(detail::RowmeanProblem{FG_F64, device_a, device_b, device_c, 2000, 64, 300},
                                        hopper, FG_ROWMEAN_SINGLE_BLOCK, &through_registry)
            .code == detail::StatusCode::not_supported);

  // SGEMM: split-K's slices of partial products; the others need none.
  detail::GemmProblem g;
  g.m = g.n = 256, g.k = 16384;
  g.a = {device_a, g.k, 0, false};
  g.b = {device_b, g.n, 0, false};
  g.c = device_c;
  g.ldc = g.n;
  size_t sgemm_bytes = 1;
  REQUIRE(detail::sgemm_workspace_bytes(g, hopper, FG_SGEMM_CUBLAS, &sgemm_bytes).ok());
  CHECK(sgemm_bytes == 0);
  REQUIRE(detail::sgemm_workspace_bytes(g, hopper, FG_SGEMM_SPLIT_K, &sgemm_bytes).ok());
  CHECK(sgemm_bytes > 0);
  CHECK(sgemm_bytes % (sizeof(float) * 256 * 256) == 0);
  g.k = 64;  // too shallow to split
  REQUIRE(detail::sgemm_workspace_bytes(g, hopper, FG_SGEMM_SPLIT_K, &sgemm_bytes).ok());
  CHECK(sgemm_bytes == 0);
}
