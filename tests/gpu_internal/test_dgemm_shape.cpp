// SPDX-License-Identifier: Apache-2.0
// libfastgemm_blas_dgemm's products on the GPU at FG_REPRODUCIBLE_SHAPE (the drop-in's default): right against a
// long double reference, and each element of C the same bits whatever the product's shape, transposes, layout or
// tiles it was computed in (the property LAPACK's eigenvalue drivers' tests compare exactly). Also the FP64 products
// at FG_REPRODUCIBLE_RUN, through cuBLAS, against the same reference.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "blas/dgemm/dgemm_host.h"

namespace {

struct Handle {
  fastgemm_blas_dgemm_t handle = nullptr;
  explicit Handle(fg_reproducibility_t level) {
    REQUIRE(fastgemm_blas_dgemm_create(&handle) == FG_STATUS_SUCCESS);
    REQUIRE(fastgemm_blas_dgemm_set_reproducibility(handle, level) == FG_STATUS_SUCCESS);
  }
  ~Handle() { fastgemm_blas_dgemm_destroy(handle); }
};

std::vector<double> random_values(size_t count, std::mt19937_64 &random) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> values(count);
  for (double &v : values) v = uniform(random) * std::ldexp(1.0, static_cast<int>(random() % 9) - 4);
  return values;
}

// Column-major op(X)(i, l) of a stored X.
double op_at(const std::vector<double> &x, int64_t ld, bool transposed, int64_t i, int64_t l) {
  return transposed ? x[static_cast<size_t>(l + i * ld)] : x[static_cast<size_t>(i + l * ld)];
}

// Every element of C (column-major, ldc) within 8 units of double rounding of the sum of its terms' magnitudes times
// the depth, against long double; C's old values (beta != 0) from `old`.
void check_product(int64_t m, int64_t n, int64_t k, double alpha, const std::vector<double> &a, int64_t lda, bool ta,
                   const std::vector<double> &b, int64_t ldb, bool tb, double beta, const std::vector<double> &old,
                   const std::vector<double> &c, int64_t ldc) {
  int64_t wrong = 0;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      long double sum = 0.0L, scale = 0.0L;
      for (int64_t l = 0; l < k; ++l) {
        const long double term = static_cast<long double>(op_at(a, lda, ta, i, l)) * op_at(b, ldb, tb, l, j);
        sum += term;
        scale += std::fabs(term);
      }
      const size_t at = static_cast<size_t>(i + j * ldc);
      long double want = alpha * sum;
      long double bound = std::fabs(alpha) * scale * (k + 2);
      if (beta != 0.0) {
        want += static_cast<long double>(beta) * old[at];
        bound += std::fabs(beta * old[at]) * 2;
      }
      const double got = c[at];
      if (!(std::fabs(got - want) <= bound * 8 * std::numeric_limits<double>::epsilon() + 1e-300)) ++wrong;
    }
  CHECK(wrong == 0);
}

// The call through the private library, column-major, checked.
void call(Handle &h, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t lda,
          const double *b, int64_t ldb, double beta, double *c, int64_t ldc) {
  const fg_status_t status =
      fastgemm_blas_dgemm_host(h.handle, FG_COL_MAJOR, ta ? FG_OP_T : FG_OP_N, tb ? FG_OP_T : FG_OP_N, m, n, k, alpha,
                               a, lda, b, ldb, beta, c, ldc);
  INFO(fastgemm_blas_dgemm_last_error_message());
  REQUIRE(status == FG_STATUS_SUCCESS);
}

}  // namespace

TEST_CASE("FP64 products at FG_REPRODUCIBLE_SHAPE: right, and each element's bits independent of the shape",
          "[dgemm_shape]") {
  std::mt19937_64 random(2027);
  Handle shape(FG_REPRODUCIBLE_SHAPE);
  // Sizes off the tiles' 64 x 64 x 16 and the mma's 4 of k; k from 1.
  for (const int64_t k : {int64_t{1}, int64_t{3}, int64_t{37}, int64_t{130}}) {
    const int64_t m = 150, n = 97, lda = m + 3, ldb = k + 5, ldc = m + 2;
    INFO("k " << k);
    const std::vector<double> a = random_values(static_cast<size_t>(lda * k), random);
    const std::vector<double> b = random_values(static_cast<size_t>(ldb * n), random);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    // beta == 0 over NaN: every element written, none read.
    std::vector<double> whole(static_cast<size_t>(ldc * n), nan);
    call(shape, false, false, m, n, k, 1.25, a.data(), lda, b.data(), ldb, 0.0, whole.data(), ldc);
    check_product(m, n, k, 1.25, a, lda, false, b, ldb, false, 0.0, whole, whole, ldc);

    // The same elements from products of other shapes: a block of rows at an odd offset, one column, one row, a
    // block of columns; and with A and B stored transposed. Bits equal.
    struct Part {
      int64_t row, rows, col, cols;
    };
    for (const Part part : {Part{37, 45, 0, n}, Part{0, m, 61, 1}, Part{101, 1, 0, n}, Part{5, 140, 13, 70}}) {
      INFO("rows " << part.row << "+" << part.rows << " cols " << part.col << "+" << part.cols);
      std::vector<double> c(static_cast<size_t>(part.rows * part.cols), nan);
      call(shape, false, false, part.rows, part.cols, k, 1.25, a.data() + part.row, lda, b.data() + part.col * ldb, ldb,
           0.0, c.data(), part.rows);
      // A^T and B^T stored: op(A) = (A^T)^T.
      std::vector<double> at(static_cast<size_t>(k * part.rows)), bt(static_cast<size_t>(part.cols * k));
      for (int64_t i = 0; i < part.rows; ++i)
        for (int64_t l = 0; l < k; ++l)
          at[static_cast<size_t>(l + i * k)] = a[static_cast<size_t>(part.row + i + l * lda)];
      for (int64_t l = 0; l < k; ++l)
        for (int64_t j = 0; j < part.cols; ++j)
          bt[static_cast<size_t>(j + l * part.cols)] = b[static_cast<size_t>(l + (part.col + j) * ldb)];
      std::vector<double> ct(static_cast<size_t>(part.rows * part.cols), nan);
      call(shape, true, true, part.rows, part.cols, k, 1.25, at.data(), k, bt.data(), part.cols, 0.0, ct.data(),
           part.rows);
      int64_t differing = 0;
      for (int64_t j = 0; j < part.cols; ++j)
        for (int64_t i = 0; i < part.rows; ++i) {
          const double want = whole[static_cast<size_t>(part.row + i + (part.col + j) * ldc)];
          const size_t at_part = static_cast<size_t>(i + j * part.rows);
          if (std::memcmp(&c[at_part], &want, sizeof want) != 0) ++differing;
          if (std::memcmp(&ct[at_part], &want, sizeof want) != 0) ++differing;
        }
      CHECK(differing == 0);
    }
  }
}

TEST_CASE("FP64 products at FG_REPRODUCIBLE_SHAPE: beta, tall and wide shapes, and many tiles of the engine",
          "[dgemm_shape]") {
  std::mt19937_64 random(4099);
  Handle shape(FG_REPRODUCIBLE_SHAPE);
  struct Shape {
    int64_t m, n, k;
    bool ta, tb;
  };
  for (const Shape s : {Shape{1, 1, 1, false, false}, Shape{2000, 3, 50, true, false}, Shape{3, 2000, 50, false, true},
                        Shape{300, 257, 1000, true, true}, Shape{64, 64, 16, false, false}}) {
    INFO("m " << s.m << " n " << s.n << " k " << s.k << " ta " << s.ta << " tb " << s.tb);
    const int64_t lda = (s.ta ? s.k : s.m) + 1, ldb = (s.tb ? s.n : s.k) + 1, ldc = s.m + 1;
    const std::vector<double> a = random_values(static_cast<size_t>(lda * (s.ta ? s.m : s.k)), random);
    const std::vector<double> b = random_values(static_cast<size_t>(ldb * (s.tb ? s.k : s.n)), random);
    const std::vector<double> old = random_values(static_cast<size_t>(ldc * s.n), random);
    std::vector<double> c = old;
    call(shape, s.ta, s.tb, s.m, s.n, s.k, -0.75, a.data(), lda, b.data(), ldb, 0.5, c.data(), ldc);
    check_product(s.m, s.n, s.k, -0.75, a, lda, s.ta, b, ldb, s.tb, 0.5, old, c, ldc);
    // The padding rows between ldc and m are C's caller's: untouched.
    int64_t touched = 0;
    for (int64_t j = 0; j < s.n; ++j)
      if (std::memcmp(&c[static_cast<size_t>(s.m + j * ldc)], &old[static_cast<size_t>(s.m + j * ldc)],
                      sizeof(double)) != 0)
        ++touched;
    CHECK(touched == 0);
  }
}

TEST_CASE("FP64 products at FG_REPRODUCIBLE_RUN (cuBLAS's tiles): right", "[dgemm_shape]") {
  std::mt19937_64 random(77);
  Handle run(FG_REPRODUCIBLE_RUN);
  const int64_t m = 333, n = 129, k = 211;
  const std::vector<double> a = random_values(static_cast<size_t>(m * k), random);
  const std::vector<double> b = random_values(static_cast<size_t>(k * n), random);
  std::vector<double> c(static_cast<size_t>(m * n), std::numeric_limits<double>::quiet_NaN());
  call(run, false, false, m, n, k, 2.0, a.data(), m, b.data(), k, 0.0, c.data(), m);
  check_product(m, n, k, 2.0, a, m, false, b, k, false, 0.0, c, c, m);
}

namespace {

// Residual of op(A) X = alpha B (side L) or X op(A) = alpha B (R) per element over the terms' magnitudes, A's stored
// triangle `uplo` (column-major, lda), a unit diagonal as one.
double trsm_residual(char side, char uplo, char transa, char diag, int64_t m, int64_t n, double alpha,
                     const std::vector<double> &a, int64_t lda, const std::vector<double> &x,
                     const std::vector<double> &b, int64_t ldb) {
  const auto op_a = [&](int64_t i, int64_t l) -> double {
    if (i == l && diag == 'U') return 1.0;
    const int64_t row = transa == 'N' ? i : l, col = transa == 'N' ? l : i;
    if (uplo == 'U' ? row > col : row < col) return 0.0;
    return a[static_cast<size_t>(row + col * lda)];
  };
  const int64_t order = side == 'L' ? m : n;
  double worst = 0.0;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      long double sum = 0.0L, size = 0.0L;
      for (int64_t l = 0; l < order; ++l) {
        const long double term = side == 'L'
                                     ? static_cast<long double>(op_a(i, l)) * x[static_cast<size_t>(l + j * ldb)]
                                     : static_cast<long double>(x[static_cast<size_t>(i + l * ldb)]) * op_a(l, j);
        sum += term;
        size += std::fabs(term);
      }
      const long double want = static_cast<long double>(alpha) * b[static_cast<size_t>(i + j * ldb)];
      const double error = static_cast<double>(std::fabs(sum - want) / (size + std::fabs(want) + 1e-300L));
      if (!(error <= worst)) worst = std::isnan(error) ? std::numeric_limits<double>::infinity() : error;
    }
  return worst;
}

}  // namespace

TEST_CASE("dtrsm on the device: every option, X by its residual, lines' bits independent of the others", "[dgemm]") {
  std::mt19937_64 random(41);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (const fg_reproducibility_t level : {FG_REPRODUCIBLE_SHAPE, FG_REPRODUCIBLE_RUN}) {
    Handle h(level);
    for (const auto &shape : {std::pair<int64_t, int64_t>{70, 4099}, {300, 6}, {1, 1}})
      for (char side : {'L', 'R'})
        for (char uplo : {'U', 'L'})
          for (char transa : {'N', 'T'})
            for (char diag : {'N', 'U'}) {
              const int64_t order = shape.first, lines = shape.second;
              const int64_t m = side == 'L' ? order : lines, n = side == 'L' ? lines : order;
              const int64_t lda = order + 2, ldb = m + 1;
              INFO("level " << level << " side " << side << " uplo " << uplo << " transa " << transa << " diag " << diag
                            << " m " << m << " n " << n);
              std::vector<double> a(static_cast<size_t>(lda * order), std::numeric_limits<double>::quiet_NaN());
              for (int64_t j = 0; j < order; ++j)
                for (int64_t i = 0; i < order; ++i)
                  if ((uplo == 'U' ? i <= j : i >= j) && !(i == j && diag == 'U'))
                    a[static_cast<size_t>(i + j * lda)] =
                        i == j ? 1.5 + uniform(random) / 2.0 : uniform(random) / static_cast<double>(order);
              std::vector<double> b(static_cast<size_t>(ldb * n));
              for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < ldb; ++i) b[static_cast<size_t>(i + j * ldb)] = i < m ? uniform(random) : 7.25;
              std::vector<double> x = b;
              int64_t done = -1;
              int partial = -1;
              REQUIRE(fastgemm_blas_dgemm_trsm_host(h.handle, side, uplo, transa, diag, m, n, -1.25, a.data(), lda,
                                                    x.data(), ldb, &done, &partial) == FG_STATUS_SUCCESS);
              CHECK(done == lines);
              CHECK(partial == 0);
              CHECK(trsm_residual(side, uplo, transa, diag, m, n, -1.25, a, lda, x, b, ldb) < 1e-13);
              int64_t pad_changed = 0;
              for (int64_t j = 0; j < n; ++j) pad_changed += x[static_cast<size_t>(m + j * ldb)] != 7.25;
              CHECK(pad_changed == 0);
              if (level != FG_REPRODUCIBLE_SHAPE || lines < 4) continue;
              // The first lines alone, across the panels' edge where there are two: the same bits.
              const int64_t part = lines - 2, pm = side == 'L' ? m : part, pn = side == 'L' ? part : n;
              std::vector<double> alone = b;
              REQUIRE(fastgemm_blas_dgemm_trsm_host(h.handle, side, uplo, transa, diag, pm, pn, -1.25, a.data(), lda,
                                                    alone.data(), ldb, &done, &partial) == FG_STATUS_SUCCESS);
              int64_t differ = 0;
              for (int64_t j = 0; j < pn; ++j)
                for (int64_t i = 0; i < pm; ++i)
                  differ += std::memcmp(&alone[static_cast<size_t>(i + j * ldb)], &x[static_cast<size_t>(i + j * ldb)],
                                        sizeof(double)) != 0;
              CHECK(differ == 0);
            }
  }
}

TEST_CASE("dtrsm on the device: bad arguments refused, B untouched", "[dgemm]") {
  Handle h(FG_REPRODUCIBLE_SHAPE);
  std::vector<double> a(16, 1.0), b(16, 3.0);
  int64_t done = -1;
  int partial = -1;
  const auto refused = [&](fastgemm_blas_dgemm_t handle, char side, char uplo, char transa, char diag, int64_t m,
                           int64_t n, double alpha, int64_t lda, int64_t ldb) {
    const fg_status_t status = fastgemm_blas_dgemm_trsm_host(handle, side, uplo, transa, diag, m, n, alpha, a.data(),
                                                             lda, b.data(), ldb, &done, &partial);
    CHECK(done == 0);
    CHECK(partial == 0);
    for (double v : b) CHECK(v == 3.0);
    return status;
  };
  CHECK(refused(nullptr, 'L', 'U', 'N', 'N', 4, 4, 1.0, 4, 4) == FG_STATUS_INVALID_HANDLE);
  CHECK(refused(h.handle, 'X', 'U', 'N', 'N', 4, 4, 1.0, 4, 4) == FG_STATUS_INVALID_VALUE);
  CHECK(refused(h.handle, 'L', 'u', 'N', 'N', 4, 4, 1.0, 4, 4) == FG_STATUS_INVALID_VALUE);
  CHECK(refused(h.handle, 'L', 'U', 'C', 'N', 4, 4, 1.0, 4, 4) == FG_STATUS_INVALID_VALUE);
  CHECK(refused(h.handle, 'L', 'U', 'N', 'X', 4, 4, 1.0, 4, 4) == FG_STATUS_INVALID_VALUE);
  CHECK(refused(h.handle, 'L', 'U', 'N', 'N', 0, 4, 1.0, 4, 4) == FG_STATUS_INVALID_VALUE);
  CHECK(refused(h.handle, 'L', 'U', 'N', 'N', 4, 4, 0.0, 4, 4) == FG_STATUS_INVALID_VALUE);
  CHECK(refused(h.handle, 'L', 'U', 'N', 'N', 4, 4, 1.0, 3, 4) == FG_STATUS_INVALID_VALUE);
  CHECK(refused(h.handle, 'R', 'U', 'N', 'N', 2, 4, 1.0, 3, 2) == FG_STATUS_INVALID_VALUE);
  CHECK(refused(h.handle, 'L', 'U', 'N', 'N', 4, 4, 1.0, 4, 3) == FG_STATUS_INVALID_VALUE);
  CHECK(fastgemm_blas_dgemm_trsm_host(h.handle, 'L', 'U', 'N', 'N', 4, 4, 1.0, a.data(), 4, b.data(), 4, nullptr,
                                      &partial) == FG_STATUS_INVALID_VALUE);
}

TEST_CASE("dsyrk and dsyr2k on the device: bad arguments refused, C untouched", "[dgemm]") {
  Handle h(FG_REPRODUCIBLE_SHAPE);
  std::vector<double> a(24, 1.0), b(24, 2.0), c(16, 3.0);
  int partial = -1;
  // syr2k where `two`; n x k (trans N) or k x n (T) operands of 24 elements at most.
  const auto refused = [&](bool two, fastgemm_blas_dgemm_t handle, char uplo, char trans, int64_t n, int64_t k,
                           double alpha, int64_t lda, int64_t ldb, int64_t ldc, const double *bp) {
    const fg_status_t status = two ? fastgemm_blas_dgemm_syr2k_host(handle, uplo, trans, n, k, alpha, a.data(), lda, bp,
                                                                    ldb, 0.5, c.data(), ldc, &partial)
                                   : fastgemm_blas_dgemm_syrk_host(handle, uplo, trans, n, k, alpha, a.data(), lda, 0.5,
                                                                   c.data(), ldc, &partial);
    CHECK(partial == 0);
    for (double v : c) CHECK(v == 3.0);
    return status;
  };
  for (bool two : {false, true}) {
    INFO("syr2k " << two);
    CHECK(refused(two, nullptr, 'U', 'N', 4, 6, 1.0, 4, 4, 4, b.data()) == FG_STATUS_INVALID_HANDLE);
    CHECK(refused(two, h.handle, 'X', 'N', 4, 6, 1.0, 4, 4, 4, b.data()) == FG_STATUS_INVALID_VALUE);
    CHECK(refused(two, h.handle, 'U', 'C', 4, 6, 1.0, 4, 4, 4, b.data()) == FG_STATUS_INVALID_VALUE);
    CHECK(refused(two, h.handle, 'U', 'N', 0, 6, 1.0, 4, 4, 4, b.data()) == FG_STATUS_INVALID_VALUE);
    CHECK(refused(two, h.handle, 'U', 'N', 4, 0, 1.0, 4, 4, 4, b.data()) == FG_STATUS_INVALID_VALUE);
    CHECK(refused(two, h.handle, 'U', 'N', 4, 6, 0.0, 4, 4, 4, b.data()) == FG_STATUS_INVALID_VALUE);
    CHECK(refused(two, h.handle, 'U', 'N', 4, 6, 1.0, 3, 4, 4, b.data()) == FG_STATUS_INVALID_VALUE);
    CHECK(refused(two, h.handle, 'L', 'T', 4, 6, 1.0, 5, 6, 4, b.data()) == FG_STATUS_INVALID_VALUE);  // lda < k
    CHECK(refused(two, h.handle, 'U', 'N', 4, 6, 1.0, 4, 4, 3, b.data()) == FG_STATUS_INVALID_VALUE);
  }
  CHECK(refused(true, h.handle, 'U', 'N', 4, 6, 1.0, 4, 3, 4, b.data()) == FG_STATUS_INVALID_VALUE);  // ldb < n
  CHECK(refused(true, h.handle, 'U', 'N', 4, 6, 1.0, 4, 4, 4, nullptr) == FG_STATUS_INVALID_VALUE);
  CHECK(fastgemm_blas_dgemm_syrk_host(h.handle, 'U', 'N', 4, 6, 1.0, a.data(), 4, 0.5, c.data(), 4, nullptr) ==
        FG_STATUS_INVALID_VALUE);
}

TEST_CASE("dtrmm and dsymm on the device: every option against long double, lines' bits independent of the others",
          "[dgemm]") {
  std::mt19937_64 random(43);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Handle h(FG_REPRODUCIBLE_SHAPE);
  for (const auto &shape : {std::pair<int64_t, int64_t>{70, 4099}, {300, 6}, {1, 1}})
    for (int symm = 0; symm < 2; ++symm)
      for (char side : {'L', 'R'})
        for (char uplo : {'U', 'L'})
          for (char transa : {'N', 'T'})
            for (char diag : {'N', 'U'}) {
              if (symm && (diag == 'U')) continue;  // symm: transa picks beta 0 ('N') or not
              const int64_t order = shape.first, lines = shape.second;
              const int64_t m = side == 'L' ? order : lines, n = side == 'L' ? lines : order;
              const int64_t lda = order + 2, ldb = m + 1, ldc = m + 3;
              const double alpha = 0.75, beta = symm && transa == 'T' ? -0.5 : 0.0;
              INFO("symm " << symm << " side " << side << " uplo " << uplo << " transa " << transa << " diag " << diag
                           << " m " << m << " n " << n);
              std::vector<double> a(static_cast<size_t>(lda * order), nan);
              for (int64_t j = 0; j < order; ++j)
                for (int64_t i = 0; i < order; ++i)
                  if ((uplo == 'U' ? i <= j : i >= j) && !(i == j && diag == 'U'))
                    a[static_cast<size_t>(i + j * lda)] = uniform(random);
              const auto element = [&](int64_t i, int64_t l) -> double {  // op(A) (trmm) or A (symm)
                if (symm) {
                  const bool stored = uplo == 'U' ? i <= l : i >= l;
                  return stored ? a[static_cast<size_t>(i + l * lda)] : a[static_cast<size_t>(l + i * lda)];
                }
                if (i == l && diag == 'U') return 1.0;
                const int64_t row = transa == 'N' ? i : l, col = transa == 'N' ? l : i;
                if (uplo == 'U' ? row > col : row < col) return 0.0;
                return a[static_cast<size_t>(row + col * lda)];
              };
              std::vector<double> b(static_cast<size_t>(ldb * n)), c(static_cast<size_t>(ldc * n));
              for (int64_t j = 0; j < n; ++j) {
                for (int64_t i = 0; i < ldb; ++i) b[static_cast<size_t>(i + j * ldb)] = i < m ? uniform(random) : 7.25;
                for (int64_t i = 0; i < ldc; ++i)
                  c[static_cast<size_t>(i + j * ldc)] = i >= m ? 7.25 : beta != 0.0 ? uniform(random) : nan;
              }
              const int64_t ldo = symm ? ldc : ldb;
              const auto run = [&](int64_t rows, int64_t cols, std::vector<double> &out) {
                int64_t done = -1;
                int partial = -1;
                const fg_status_t status =
                    symm ? fastgemm_blas_dgemm_symm_host(h.handle, side, uplo, rows, cols, alpha, a.data(), lda,
                                                         b.data(), ldb, beta, out.data(), ldc, &done, &partial)
                         : fastgemm_blas_dgemm_trmm_host(h.handle, side, uplo, transa, diag, rows, cols, alpha,
                                                         a.data(), lda, out.data(), ldb, &done, &partial);
                REQUIRE(status == FG_STATUS_SUCCESS);
                CHECK(done == (side == 'L' ? cols : rows));
                CHECK(partial == 0);
              };
              std::vector<double> out = symm ? c : b;
              run(m, n, out);
              int64_t wrong = 0, pad_changed = 0;
              for (int64_t j = 0; j < n; ++j) {
                pad_changed += out[static_cast<size_t>(m + j * ldo)] != 7.25;
                for (int64_t i = 0; i < m; ++i) {
                  long double sum = 0.0L, size = 0.0L;
                  for (int64_t l = 0; l < order; ++l) {
                    const long double term =
                        side == 'L' ? static_cast<long double>(element(i, l)) * b[static_cast<size_t>(l + j * ldb)]
                                    : static_cast<long double>(b[static_cast<size_t>(i + l * ldb)]) * element(l, j);
                    sum += term;
                    size += std::fabs(term);
                  }
                  long double want = alpha * sum, bound = alpha * size;
                  if (beta != 0.0) {
                    want += static_cast<long double>(beta) * c[static_cast<size_t>(i + j * ldc)];
                    bound += std::fabs(beta * c[static_cast<size_t>(i + j * ldc)]);
                  }
                  const double got = out[static_cast<size_t>(i + j * ldo)];
                  if (!(std::fabs(got - want) <= bound * 1e-14 + 1e-300)) ++wrong;
                }
              }
              CHECK(wrong == 0);
              CHECK(pad_changed == 0);
              if (lines < 4) continue;
              const int64_t part = lines - 2, pm = side == 'L' ? m : part, pn = side == 'L' ? part : n;
              std::vector<double> alone = symm ? c : b;
              run(pm, pn, alone);
              int64_t differ = 0;
              for (int64_t j = 0; j < pn; ++j)
                for (int64_t i = 0; i < pm; ++i)
                  differ += std::memcmp(&alone[static_cast<size_t>(i + j * ldo)],
                                        &out[static_cast<size_t>(i + j * ldo)], sizeof(double)) != 0;
              CHECK(differ == 0);
            }
}
