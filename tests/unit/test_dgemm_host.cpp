// SPDX-License-Identifier: Apache-2.0
// The parts of libfastgemm_blas_dgemm that need no device: its calls checked and turned into the host engine's
// canonical row-major problem (a product computed from that problem on the CPU must be the caller's, in either layout,
// for every transpose), and the host engine's pieces for double elements (the copy pool's byte copies, the grid's and
// the short way's sizes in bytes).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "blas/dgemm/dgemm_problem.hpp"
#include "blas/plain.hpp"
#include "host/copy_pool.hpp"
#include "host/host_gemm.hpp"
#include "host/small_product.hpp"

using fastgemm::blas_dgemm::dgemm_problem;
using fastgemm::blas_dgemm::DgemmCall;
using fastgemm::blas_dgemm::DgemmWork;
using fastgemm::detail::BasicGemmProblem;
using fastgemm::detail::StatusCode;

namespace {

// The engine's problem computed on the CPU: row-major C (m x n, ldc) := alpha op(A) op(B) + beta C, beta == 0 never
// reading C.
void canonical_product(const BasicGemmProblem<double> &p) {
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      double sum = 0.0;
      for (int64_t l = 0; l < p.k; ++l) {
        const double a = p.a.transposed ? p.a.data[l * p.a.ld + i] : p.a.data[i * p.a.ld + l];
        const double b = p.b.transposed ? p.b.data[j * p.b.ld + l] : p.b.data[l * p.b.ld + j];
        sum += a * b;
      }
      double &c = p.c[i * p.ldc + j];
      c = p.alpha * sum + (p.beta == 0.0 ? 0.0 : p.beta * c);
    }
}

// Column-major storage of a row-major matrix is its transpose: the reference for a row-major call is the column-major
// one of the transposed problem (C^T = op(B)^T op(A)^T).
void reference(const DgemmCall &call, double *C) {
  const char ta = call.transa == FG_OP_N ? 'N' : 'T', tb = call.transb == FG_OP_N ? 'N' : 'T';
  if (call.layout == FG_COL_MAJOR)
    fastgemm_blas::plain_gemm<double>(ta, tb, call.m, call.n, call.k, call.alpha, call.A, call.lda, call.B, call.ldb,
                                      call.beta, C, call.ldc);
  else
    fastgemm_blas::plain_gemm<double>(tb, ta, call.n, call.m, call.k, call.alpha, call.B, call.ldb, call.A, call.lda,
                                      call.beta, C, call.ldc);
}

}  // namespace

TEST_CASE("FP64 host products: the canonical problem is the caller's, in both layouts and every transpose",
          "[dgemm_host]") {
  std::mt19937_64 random(23);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (fg_layout_t layout : {FG_ROW_MAJOR, FG_COL_MAJOR})
    for (fg_op_t transa : {FG_OP_N, FG_OP_T, FG_OP_C})
      for (fg_op_t transb : {FG_OP_N, FG_OP_T})
        for (double beta : {0.0, 0.5}) {
          INFO("layout " << layout << " transa " << transa << " transb " << transb << " beta " << beta);
          DgemmCall call;
          call.layout = layout, call.transa = transa, call.transb = transb;
          call.m = 7, call.n = 5, call.k = 4, call.alpha = -1.25, call.beta = beta;
          const bool row = layout == FG_ROW_MAJOR;
          // Each operand's lines as stored, and one element of padding after each line.
          const int64_t a_lines = (row == (transa == FG_OP_N)) ? call.m : call.k;
          const int64_t b_lines = (row == (transb == FG_OP_N)) ? call.k : call.n;
          call.lda = (a_lines == call.m ? call.k : call.m) + 1;
          call.ldb = (b_lines == call.k ? call.n : call.k) + 2;
          call.ldc = (row ? call.n : call.m) + 3;
          std::vector<double> a(static_cast<size_t>(a_lines * call.lda)), b(static_cast<size_t>(b_lines * call.ldb));
          std::vector<double> c(static_cast<size_t>((row ? call.m : call.n) * call.ldc));
          for (std::vector<double> *x : {&a, &b, &c})
            for (double &v : *x) v = uniform(random);
          call.A = a.data(), call.B = b.data();
          std::vector<double> want = c, got = c;
          call.C = want.data();
          reference(call, want.data());
          call.C = got.data();
          BasicGemmProblem<double> problem;
          DgemmWork work = DgemmWork::nothing;
          REQUIRE(dgemm_problem(call, &problem, &work).ok());
          REQUIRE(work == DgemmWork::product);
          canonical_product(problem);
          for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-14));
        }
}

TEST_CASE("FP64 host products: bad arguments are named, empty and scaling calls told apart", "[dgemm_host]") {
  std::vector<double> x(64, 1.0);
  DgemmCall call;
  call.layout = FG_ROW_MAJOR, call.m = 4, call.n = 3, call.k = 2;
  call.A = x.data(), call.B = x.data(), call.C = x.data();
  call.lda = 2, call.ldb = 3, call.ldc = 3;
  BasicGemmProblem<double> problem;
  DgemmWork work = DgemmWork::nothing;
  REQUIRE(dgemm_problem(call, &problem, &work).ok());
  CHECK(work == DgemmWork::product);
  CHECK(problem.m == 4);
  CHECK(problem.n == 3);

  const auto refused = [&](DgemmCall bad, const std::string &named) {
    const fastgemm::detail::Status status = dgemm_problem(bad, &problem, &work);
    CHECK(status.code == StatusCode::invalid_value);
    CHECK(status.message.find(named) != std::string::npos);
  };
  DgemmCall bad = call;
  bad.lda = 1;
  refused(bad, "lda = 1 must be >= max(1, k) = 2 for FG_ROW_MAJOR, FG_OP_N");
  bad = call, bad.layout = FG_COL_MAJOR;
  refused(bad, "lda = 2 must be >= max(1, m) = 4 for FG_COL_MAJOR, FG_OP_N");
  bad = call, bad.transb = FG_OP_T, bad.ldb = 1;
  refused(bad, "ldb = 1 must be >= max(1, k) = 2 for FG_ROW_MAJOR, FG_OP_T");
  bad = call, bad.ldc = 2;
  refused(bad, "ldc = 2 must be >= max(1, n) = 3");
  bad = call, bad.k = -1;
  refused(bad, "k = -1 must be >= 0");
  bad = call, bad.transa = static_cast<fg_op_t>(7);
  refused(bad, "transa = 7 is no fg_op_t");
  bad = call, bad.B = nullptr;
  refused(bad, "B is NULL");
  bad = call, bad.lda = int64_t(1) << 40, bad.m = int64_t(1) << 30;
  refused(bad, "A spans");

  DgemmCall empty = call;
  empty.n = 0, empty.C = nullptr;
  REQUIRE(dgemm_problem(empty, &problem, &work).ok());
  CHECK(work == DgemmWork::nothing);
  DgemmCall unchanged = call;
  unchanged.alpha = 0.0, unchanged.beta = 1.0, unchanged.A = nullptr;
  REQUIRE(dgemm_problem(unchanged, &problem, &work).ok());
  CHECK(work == DgemmWork::nothing);
  DgemmCall scaled = call;
  scaled.k = 0, scaled.beta = 2.0, scaled.A = scaled.B = nullptr;
  REQUIRE(dgemm_problem(scaled, &problem, &work).ok());
  CHECK(work == DgemmWork::scale_c);
}

TEST_CASE("host engine for doubles: the copy pool copies every byte of the lines, wherever they start",
          "[dgemm_host]") {
  std::mt19937_64 random(29);
  fastgemm::detail::CopyPool pool(3);
  for (int64_t lines : {1, 7, 300})
    for (int64_t length : {1, 3, 200, 5000})
      for (int64_t offset : {0, 1}) {
        INFO("lines " << lines << " length " << length << " offset " << offset);
        const int64_t src_ld = length + 5, dst_ld = length + offset;
        std::vector<double> src(static_cast<size_t>(lines * src_ld + offset));
        for (double &v : src) v = static_cast<double>(random()) / 7.0;
        std::vector<double> dst(static_cast<size_t>(lines * dst_ld + offset + 1), -1.0);
        pool.copy(dst.data() + offset, dst_ld, src.data() + offset, src_ld, lines, length);
        int64_t wrong = 0;
        for (int64_t line = 0; line < lines; ++line)
          for (int64_t i = 0; i < dst_ld; ++i) {
            const double got = dst[static_cast<size_t>(offset + line * dst_ld + i)];
            const double want = i < length ? src[static_cast<size_t>(offset + line * src_ld + i)] : -1.0;
            wrong += std::memcmp(&got, &want, sizeof got) != 0;
          }
        CHECK(wrong == 0);
        CHECK(dst.back() == -1.0);
      }
}

TEST_CASE("host engine for doubles: the staging budget and the short way count 8-byte elements", "[dgemm_host]") {
  using fastgemm::detail::choose_host_tiling;
  constexpr size_t kGiB = size_t(1) << 30;
  // A quarter of a 2 GiB device holds chunks of 4096 of floats, of 2048 of doubles, with tiles of 4096.
  const auto singles = choose_host_tiling(16384, 16384, 1 << 20, 2 * kGiB, 0, false, false, sizeof(float));
  const auto doubles = choose_host_tiling(16384, 16384, 1 << 20, 2 * kGiB, 0, false, false, sizeof(double));
  CHECK(singles.tile_m == 4096);
  CHECK(doubles.tile_m == 4096);
  CHECK(singles.tile_k == 4096);
  CHECK(doubles.tile_k == 2048);
  const size_t double_bytes = static_cast<size_t>(2 * (doubles.tile_m + doubles.tile_n) * doubles.tile_k +
                                                  2 * doubles.tile_m * doubles.tile_n) *
                              sizeof(double);
  CHECK(double_bytes <= kGiB / 2);
  // With k whole, the tile edges shrink instead.
  const auto whole = choose_host_tiling(16384, 16384, 1 << 20, 2 * kGiB, 0, true, false, sizeof(double));
  CHECK(whole.tile_k == 1 << 20);
  CHECK(whole.tile_m < doubles.tile_m);

  using fastgemm::detail::small_product_layout;
  const size_t capacity = fastgemm::detail::small_product_bytes;
  const auto single_layout = small_product_layout(256, 256, 256, true, capacity, sizeof(float));
  const auto double_layout = small_product_layout(256, 256, 256, true, capacity, sizeof(double));
  CHECK(single_layout.fits);
  CHECK(double_layout.fits);
  CHECK(double_layout.c_bytes == 256u * 256u * sizeof(double));
  CHECK(double_layout.total == 2 * single_layout.total);
  // 360^2 * 3 elements: 1.5 MB in floats, 3.1 MB in doubles, both within 4 MiB; 420^2 * 3 fits only in floats.
  CHECK(small_product_layout(360, 360, 360, true, capacity, sizeof(double)).fits);
  CHECK(small_product_layout(420, 420, 420, true, capacity, sizeof(float)).fits);
  CHECK_FALSE(small_product_layout(420, 420, 420, true, capacity, sizeof(double)).fits);
}
