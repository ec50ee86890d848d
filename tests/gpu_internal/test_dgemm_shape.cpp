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
