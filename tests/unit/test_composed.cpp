// SPDX-License-Identifier: Apache-2.0
// libfastgemm_blas's symm, syrk, syr2k and trmm as general products (blas/composed.hpp), over a CPU engine, against
// the reference's semantics (blas/plain.hpp): the same C, the other triangle and an unused or unit diagonal never
// read (NaN there changes nothing), what the routine must not write left as it was, and nothing written where the
// engine declines.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "blas/composed.hpp"
#include "blas/plain.hpp"

using namespace fastgemm_blas;

namespace {

// The engine: the plain loops, counting its calls; with `declines`, it refuses the call numbered so (from 1).
struct Engine {
  int calls = 0;
  int declines = 0;
  int64_t written = 0;  // the elements of C of the products made
  Product<double> product() {
    return [this](char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha, const double *A, int64_t lda,
                  const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
      if (++calls == declines) return false;
      written += m * n;
      plain_gemm<double>(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
      return true;
    };
  }
};

std::vector<double> random_matrix(int64_t rows, int64_t ld, int64_t cols, std::mt19937_64 &random) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> x(static_cast<size_t>(ld * cols));
  for (double &v : x) v = uniform(random);
  (void)rows;
  return x;
}

// NaN outside the `uplo` triangle of an order-n matrix, and on its diagonal where `unit_diagonal`.
void poison_outside(std::vector<double> &a, int64_t n, int64_t lda, char uplo, bool unit_diagonal) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i)
      if ((uplo == 'U' ? i > j : i < j) || (unit_diagonal && i == j)) a[i + j * lda] = nan;
}

// Equal within a few units of double rounding of the terms' scale (the engine sums in another order), or both NaN
// at the same places (the poison that must stay).
void check_same(const std::vector<double> &got, const std::vector<double> &want, int64_t terms) {
  REQUIRE(got.size() == want.size());
  int64_t wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]) || std::isnan(got[i])) {
      wrong += std::isnan(want[i]) != std::isnan(got[i]);
      continue;
    }
    wrong += std::fabs(got[i] - want[i]) > 1e-13 * static_cast<double>(terms + 2);
  }
  CHECK(wrong == 0);
}

const double kAlpha = 0.75;

// Each routine composed over the CPU engine and computed by the reference, from the same operands: the same output.
using Matrix = std::vector<double>;

void same_symm(char side, char uplo, int64_t m, int64_t n, double alpha, const Matrix &a, int64_t lda, const Matrix &b,
               int64_t ldb, double beta, const Matrix &c, int64_t ldc) {
  Matrix want = c, got = c;
  plain_symm<double>(side, uplo, m, n, alpha, a.data(), lda, b.data(), ldb, beta, want.data(), ldc);
  Engine engine;
  REQUIRE(composed_symm<double>(engine.product(), side, uplo, m, n, alpha, a.data(), lda, b.data(), ldb, beta,
                                got.data(), ldc));
  check_same(got, want, side == 'L' ? m : n);
}

// syrk and syr2k by halves with diagonal blocks of `block` lines: 2 ceil(n / block) - 1 products for syrk (one per
// diagonal block, one per block between halves), twice that for syr2k.
int64_t halving_products(int64_t n, int64_t block) { return 2 * ((n + block - 1) / block) - 1; }

void same_syrk(char uplo, char trans, int64_t n, int64_t k, double alpha, const Matrix &a, int64_t lda, double beta,
               const Matrix &c, int64_t ldc, int64_t block = 1 << 20) {
  Matrix want = c, got = c;
  plain_syrk<double>(uplo, trans, n, k, alpha, a.data(), lda, beta, want.data(), ldc);
  Engine engine, fallback;
  REQUIRE(composed_syrk<double>(engine.product(), fallback.product(), block, uplo, trans, n, k, alpha, a.data(), lda,
                                beta, got.data(), ldc));
  CHECK(engine.calls == halving_products(n, block));
  CHECK(fallback.calls == 0);
  check_same(got, want, k);
}

void same_syr2k(char uplo, char trans, int64_t n, int64_t k, double alpha, const Matrix &a, int64_t lda,
                const Matrix &b, int64_t ldb, double beta, const Matrix &c, int64_t ldc, int64_t block = 1 << 20) {
  Matrix want = c, got = c;
  plain_syr2k<double>(uplo, trans, n, k, alpha, a.data(), lda, b.data(), ldb, beta, want.data(), ldc);
  Engine engine, fallback;
  REQUIRE(composed_syr2k<double>(engine.product(), fallback.product(), block, uplo, trans, n, k, alpha, a.data(), lda,
                                 b.data(), ldb, beta, got.data(), ldc));
  CHECK(engine.calls == 2 * halving_products(n, block));
  CHECK(fallback.calls == 0);
  check_same(got, want, 2 * k);
}

void same_trmm(char side, char uplo, char transa, char diag, int64_t m, int64_t n, double alpha, const Matrix &a,
               int64_t lda, const Matrix &b, int64_t ldb) {
  Matrix want = b, got = b;
  plain_trmm<double>(side, uplo, transa, diag, m, n, alpha, a.data(), lda, want.data(), ldb);
  Engine engine;
  REQUIRE(
      composed_trmm<double>(engine.product(), side, uplo, transa, diag, m, n, alpha, a.data(), lda, got.data(), ldb));
  check_same(got, want, side == 'L' ? m : n);
}

}  // namespace

TEST_CASE("composed symm: C as the reference's, the other triangle of A unread", "[composed]") {
  std::mt19937_64 random(7);
  for (char side : {'L', 'R'})
    for (char uplo : {'U', 'L'})
      for (double beta : {0.0, -1.5}) {
        INFO("side " << side << " uplo " << uplo << " beta " << beta);
        const int64_t m = 13, n = 9, order = side == 'L' ? m : n, lda = order + 2, ldb = m + 1, ldc = m + 3;
        std::vector<double> a = random_matrix(order, lda, order, random);
        poison_outside(a, order, lda, uplo, false);
        const std::vector<double> b = random_matrix(m, ldb, n, random);
        std::vector<double> c = random_matrix(m, ldc, n, random);
        if (beta == 0.0) c.assign(c.size(), std::numeric_limits<double>::quiet_NaN());
        // The reference leaves C's padding rows alone; so does the engine (ldc > m).
        same_symm(side, uplo, m, n, kAlpha, a, lda, b, ldb, beta, c, ldc);
      }
}

TEST_CASE("composed syrk and syr2k: the triangle as the reference's, the other triangle of C untouched", "[composed]") {
  std::mt19937_64 random(11);
  for (char uplo : {'U', 'L'})
    for (char trans : {'N', 'T'})
      for (double beta : {0.0, 0.5}) {
        INFO("uplo " << uplo << " trans " << trans << " beta " << beta);
        const int64_t n = 11, k = 7, rows = trans == 'N' ? n : k, cols = trans == 'N' ? k : n;
        const int64_t lda = rows + 1, ldb = rows + 2, ldc = n + 1;
        const std::vector<double> a = random_matrix(rows, lda, cols, random);
        const std::vector<double> b = random_matrix(rows, ldb, cols, random);
        std::vector<double> c = random_matrix(n, ldc, n, random);
        // The other triangle holds NaN, which neither routine may read or write.
        poison_outside(c, n, ldc, uplo, false);
        same_syrk(uplo, trans, n, k, kAlpha, a, lda, beta, c, ldc);
        same_syr2k(uplo, trans, n, k, kAlpha, a, lda, b, ldb, beta, c, ldc);
      }
}

TEST_CASE("composed syrk and syr2k: the diagonal blocks grow with k until halving saves more of C than it reads",
          "[composed]") {
  // Small k beside the order (LAPACK's updates): the blocks stay at the given size.
  CHECK(symmetric_update_block(1024, 16384, 64, 1) == 1024);
  CHECK(symmetric_update_block(1024, 16384, 1023, 1) == 1024);
  // The smallest block * 2^p above terms * k.
  CHECK(symmetric_update_block(1024, 16384, 1024, 1) == 2048);
  CHECK(symmetric_update_block(1024, 16384, 2048, 1) == 4096);
  CHECK(symmetric_update_block(1024, 16384, 2048, 2) == 8192);
  // k as deep as the order: one block of the whole triangle, no halving.
  CHECK(symmetric_update_block(1024, 16384, 16384, 1) == 16384);
  CHECK(symmetric_update_block(1024, 12000, 12000, 1) == 16384);
  // Never past 16384 lines (or the given block, where it is larger).
  CHECK(symmetric_update_block(1024, 100000, 100000, 2) == 16384);
  CHECK(symmetric_update_block(32768, 100000, 100000, 1) == 32768);
  CHECK(symmetric_update_block(64, 35, 35, 1) == 64);
}

TEST_CASE("composed trmm: B as the reference's, the other triangle and a unit diagonal unread", "[composed]") {
  std::mt19937_64 random(13);
  for (char side : {'L', 'R'})
    for (char uplo : {'U', 'L'})
      for (char transa : {'N', 'T'})
        for (char diag : {'N', 'U'}) {
          INFO("side " << side << " uplo " << uplo << " transa " << transa << " diag " << diag);
          const int64_t m = 10, n = 14, order = side == 'L' ? m : n, lda = order + 1, ldb = m + 2;
          std::vector<double> a = random_matrix(order, lda, order, random);
          poison_outside(a, order, lda, uplo, diag == 'U');
          const std::vector<double> b = random_matrix(m, ldb, n, random);
          same_trmm(side, uplo, transa, diag, m, n, kAlpha, a, lda, b, ldb);
        }
}

TEST_CASE("composed routines: an engine that declines leaves the output untouched", "[composed]") {
  std::mt19937_64 random(17);
  const int64_t n = 8, k = 5;
  const std::vector<double> a = random_matrix(n, n, k, random), b = random_matrix(n, n, k, random);
  const std::vector<double> c = random_matrix(n, n, n, random);
  std::vector<double> out = c;
  Engine unused;
  for (int64_t block : {n, int64_t{2}}) {
    Engine engine;
    engine.declines = 1;
    CHECK_FALSE(composed_syr2k<double>(engine.product(), unused.product(), block, 'U', 'N', n, k, kAlpha, a.data(), n,
                                       b.data(), n, 0.5, out.data(), n));
    CHECK(out == c);
  }
  Engine for_syrk, for_trmm, for_symm;
  for_syrk.declines = for_trmm.declines = for_symm.declines = 1;
  CHECK_FALSE(composed_syrk<double>(for_syrk.product(), unused.product(), 2, 'L', 'N', n, k, kAlpha, a.data(), n, 0.5,
                                    out.data(), n));
  CHECK(unused.calls == 0);
  CHECK_FALSE(composed_trmm<double>(for_trmm.product(), 'L', 'U', 'N', 'N', n, n, kAlpha, c.data(), n, out.data(), n));
  CHECK_FALSE(
      composed_symm<double>(for_symm.product(), 'R', 'L', n, n, kAlpha, c.data(), n, c.data(), n, 0.5, out.data(), n));
  CHECK(out == c);
}

TEST_CASE("composed syrk and syr2k: a product declined after others wrote C is made by the fallback, C right",
          "[composed]") {
  std::mt19937_64 random(29);
  const int64_t n = 23, k = 7, block = 4, ldc = n + 2;
  const Matrix a = random_matrix(n, n, k, random), b = random_matrix(n, n, k, random);
  for (char uplo : {'L', 'U'})
    for (char trans : {'N', 'T'})
      for (int declines : {2, 5, 11}) {
        INFO("uplo " << uplo << " trans " << trans << " declines " << declines);
        const int64_t lda = trans == 'N' ? n : k;
        Matrix c = random_matrix(n, ldc, n, random);
        poison_outside(c, n, ldc, uplo, false);
        Matrix want = c, got = c;
        plain_syrk<double>(uplo, trans, n, k, kAlpha, a.data(), lda, 0.5, want.data(), ldc);
        Engine engine, fallback;
        engine.declines = declines;
        REQUIRE(composed_syrk<double>(engine.product(), fallback.product(), block, uplo, trans, n, k, kAlpha, a.data(),
                                      lda, 0.5, got.data(), ldc));
        check_same(got, want, k);
        // After the decline the engine is not asked again: 11 products in all (6 diagonal blocks, 5 between halves).
        CHECK(engine.calls == declines);
        CHECK(engine.calls - 1 + fallback.calls == 11);
        Matrix want2 = c, got2 = c;
        plain_syr2k<double>(uplo, trans, n, k, kAlpha, a.data(), lda, b.data(), lda, 0.5, want2.data(), ldc);
        Engine engine2, fallback2;
        engine2.declines = declines;
        REQUIRE(composed_syr2k<double>(engine2.product(), fallback2.product(), block, uplo, trans, n, k, kAlpha,
                                       a.data(), lda, b.data(), lda, 0.5, got2.data(), ldc));
        check_same(got2, want2, 2 * k);
        CHECK(engine2.calls - 1 + fallback2.calls == 22);
      }
}

TEST_CASE("composed trsm: by blocks, B as the reference's, whatever the engine declines", "[composed]") {
  std::mt19937_64 random(19);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const BlockSolve<double> solve = [](char side, char uplo, char transa, char diag, int64_t m, int64_t n, double alpha,
                                      const double *A, int64_t lda, double *B, int64_t ldb) {
    plain_trsm<double>(side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
  };
  for (char side : {'L', 'R'})
    for (char uplo : {'U', 'L'})
      for (char transa : {'N', 'T'})
        for (char diag : {'N', 'U'})
          for (int declines : {0, 1, 3}) {
            INFO("side " << side << " uplo " << uplo << " transa " << transa << " diag " << diag << " declines "
                         << declines);
            const int64_t m = 13, n = 11, order = side == 'L' ? m : n, lda = order + 1, ldb = m + 2;
            // Well conditioned: a dominant diagonal, small elsewhere.
            std::vector<double> a(static_cast<size_t>(lda * order));
            for (int64_t j = 0; j < order; ++j)
              for (int64_t i = 0; i < lda; ++i)
                a[i + j * lda] = i == j ? 3.0 + uniform(random) : uniform(random) / static_cast<double>(order);
            poison_outside(a, order, lda, uplo, diag == 'U');
            const std::vector<double> b = random_matrix(m, ldb, n, random);
            std::vector<double> want = b, got = b;
            plain_trsm<double>(side, uplo, transa, diag, m, n, kAlpha, a.data(), lda, want.data(), ldb);
            Engine engine, fallback;
            engine.declines = declines;
            composed_trsm<double>(engine.product(), fallback.product(), solve, 4, side, uplo, transa, diag, m, n,
                                  kAlpha, a.data(), lda, got.data(), ldb);
            check_same(got, want, order);
            // Blocks of 4 over 13 or 11 lines: 4 or 3 steps, each but the last with one update; after a decline,
            // the engine is not asked again.
            const int updates = static_cast<int>((order + 3) / 4) - 1;
            CHECK(engine.calls == (declines == 0 || declines > updates ? updates : declines));
            CHECK(engine.calls + fallback.calls == updates + (declines >= 1 && declines <= updates ? 1 : 0));
          }
}

TEST_CASE(
    "composed trsm: B crosses to the products once per level of halving, and a line's bits do not depend on "
    "the order",
    "[composed]") {
  std::mt19937_64 random(23);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const BlockSolve<double> solve = [](char side, char uplo, char transa, char diag, int64_t m, int64_t n, double alpha,
                                      const double *A, int64_t lda, double *B, int64_t ldb) {
    plain_trsm<double>(side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
  };
  const int64_t order = 64, n = 5, block = 4, lda = order;
  std::vector<double> a(static_cast<size_t>(lda * order));
  for (int64_t j = 0; j < order; ++j)
    for (int64_t i = 0; i < order; ++i)
      a[i + j * lda] = i == j ? 3.0 + uniform(random) : uniform(random) / static_cast<double>(order);
  poison_outside(a, order, lda, 'L', false);
  const std::vector<double> b = random_matrix(order, order, n, random);
  for (char side : {'L', 'R'}) {
    INFO("side " << side);
    // Side L solves the rows of B (order x n), side R its columns (n x order).
    const int64_t m = side == 'L' ? order : n, cols = side == 'L' ? n : order, ldb = m;
    std::vector<double> given(static_cast<size_t>(ldb * cols));
    for (size_t i = 0; i < given.size(); ++i) given[i] = b[i % b.size()];
    std::vector<double> want = given, got = given;
    plain_trsm<double>(side, 'L', 'N', 'N', m, cols, kAlpha, a.data(), lda, want.data(), ldb);
    Engine engine, fallback;
    composed_trsm<double>(engine.product(), fallback.product(), solve, block, side, 'L', 'N', 'N', m, cols, kAlpha,
                          a.data(), lda, got.data(), ldb);
    check_same(got, want, order);
    // 16 diagonal blocks: 15 products, which write half of B at each of the 4 levels (by blocks, one product per
    // block would write 60 + 56 + ... + 4 of B's 64 lines, 480).
    CHECK(engine.calls == 15);
    CHECK(engine.written == 4 * (order / 2) * n);
    if (side == 'L') {
      // Forward (lower, side L): the first 41 lines solved alone come out bit for bit as in the whole.
      const int64_t part = 41;
      std::vector<double> alone(static_cast<size_t>(part * n));
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < part; ++i) alone[i + j * part] = given[i + j * ldb];
      Engine other;
      composed_trsm<double>(other.product(), fallback.product(), solve, block, 'L', 'L', 'N', 'N', part, n, kAlpha,
                            a.data(), lda, alone.data(), part);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < part; ++i) CHECK(alone[i + j * part] == got[i + j * ldb]);
    }
  }
}

TEST_CASE("composed routines in double precision: random shapes, options, scalars and blocks against the reference",
          "[composed]") {
  std::mt19937_64 random(31);
  std::uniform_int_distribution<int64_t> size(1, 37), pad(0, 4), coin(0, 1);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  const BlockSolve<double> solve = [](char side, char uplo, char transa, char diag, int64_t m, int64_t n, double alpha,
                                      const double *A, int64_t lda, double *B, int64_t ldb) {
    plain_trsm<double>(side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb);
  };
  for (int round = 0; round < 150; ++round) {
    const char side = coin(random) ? 'L' : 'R', uplo = coin(random) ? 'U' : 'L';
    const char trans = coin(random) ? 'N' : 'T', diag = coin(random) ? 'N' : 'U';
    // One round in 10 of orders past the copies' blocks of 64 columns (several blocks, several threads, the
    // mirrored triangle read across tiles).
    const int64_t scale = round % 10 == 9 ? 5 : 1;
    const int64_t m = scale * size(random), n = scale * size(random), k = size(random), order = side == 'L' ? m : n;
    const double alpha = uniform(random), beta = coin(random) ? 0.0 : uniform(random);
    INFO("round " << round << ": side " << side << " uplo " << uplo << " trans " << trans << " diag " << diag << " m "
                  << m << " n " << n << " k " << k << " alpha " << alpha << " beta " << beta);
    const int64_t lda = order + pad(random), ldb = m + pad(random), ldc = m + pad(random);
    Matrix a = random_matrix(order, lda, order, random);
    const Matrix b = random_matrix(m, ldb, n, random), c = random_matrix(m, ldc, n, random);
    poison_outside(a, order, lda, uplo, false);
    same_symm(side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);

    // syrk and syr2k: A and B are n x k (trans N) or k x n (T); C is n x n.
    const int64_t rows = trans == 'N' ? n : k, cols = trans == 'N' ? k : n, lds = rows + pad(random);
    const Matrix p = random_matrix(rows, lds, cols, random), q = random_matrix(rows, lds, cols, random);
    Matrix square = random_matrix(n, n + 1, n, random);
    poison_outside(square, n, n + 1, uplo, false);
    const int64_t halves = std::uniform_int_distribution<int64_t>(1, n)(random);
    same_syrk(uplo, trans, n, k, alpha, p, lds, beta, square, n + 1, halves);
    same_syr2k(uplo, trans, n, k, alpha, p, lds, q, lds, beta, square, n + 1, halves);

    // trmm and trsm on a triangle with a dominant diagonal (well conditioned), the rest of A poisoned; trsm by blocks
    // of any size, every update made by the engine.
    for (int64_t j = 0; j < order; ++j)
      for (int64_t i = 0; i < lda; ++i)
        a[i + j * lda] = i == j ? 3.0 + uniform(random) / 2 : uniform(random) / static_cast<double>(order);
    poison_outside(a, order, lda, uplo, diag == 'U');
    same_trmm(side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
    Matrix want = b, got = b;
    plain_trsm<double>(side, uplo, trans, diag, m, n, alpha, a.data(), lda, want.data(), ldb);
    Engine engine, fallback;
    const int64_t block = std::uniform_int_distribution<int64_t>(1, order)(random);
    composed_trsm<double>(engine.product(), fallback.product(), solve, block, side, uplo, trans, diag, m, n, alpha,
                          a.data(), lda, got.data(), ldb);
    check_same(got, want, order);
    CHECK(fallback.calls == 0);
  }
}
