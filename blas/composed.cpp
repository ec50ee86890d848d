// SPDX-License-Identifier: Apache-2.0
#include "composed.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <thread>
#include <vector>

namespace fastgemm_blas {
namespace {

// A column-major square or rectangular buffer, or null where the host has no memory for it.
template <typename T>
std::unique_ptr<T[]> buffer(int64_t rows, int64_t cols) {
  return std::unique_ptr<T[]>(new (std::nothrow) T[static_cast<size_t>(rows) * static_cast<size_t>(cols)]);
}

bool in_triangle(char uplo, int64_t i, int64_t j) { return uplo == 'U' ? i <= j : i >= j; }

// Columns [0, cols) of a copy, in blocks of kBlock columns shared among host threads (each block's columns in
// order). The buffers these copies write are new (their pages first touched here) and of the GPU's sizes, hundreds
// of MB: one thread takes longer than the product. Where no thread can be started, the caller's does it all.
constexpr int64_t kBlock = 64;
constexpr unsigned kMostThreads = 16;
void for_column_blocks(int64_t cols, const std::function<void(int64_t first, int64_t last)> &copy) {
  const int64_t blocks = (cols + kBlock - 1) / kBlock;
  const unsigned wanted =
      std::min<int64_t>(blocks, std::min(kMostThreads, std::max(1u, std::thread::hardware_concurrency())));
  std::atomic<int64_t> next{0};
  const auto work = [&] {
    for (int64_t block = next++; block < blocks; block = next++)
      copy(block * kBlock, std::min(cols, (block + 1) * kBlock));
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < wanted; ++t) {
    try {
      threads.emplace_back(work);
    } catch (...) {
      break;  // fewer threads: the others and this one take the blocks
    }
  }
  work();
  for (std::thread &thread : threads) thread.join();
}

// The symmetric matrix whose `uplo` triangle A holds (order n), whole; the other triangle is never read. The
// mirrored elements are read in tiles of kBlock x kBlock, so that A's lines stay in cache across a tile's columns.
template <typename T>
void symmetric_whole(char uplo, int64_t n, const T *A, int64_t lda, T *whole) {
  for_column_blocks(n, [&](int64_t first, int64_t last) {
    for (int64_t row = 0; row < n; row += kBlock) {
      const int64_t rows = std::min(n, row + kBlock);
      for (int64_t j = first; j < last; ++j)
        for (int64_t i = row; i < rows; ++i)
          whole[i + j * n] = in_triangle(uplo, i, j) ? A[i + j * lda] : A[j + i * lda];
    }
  });
}

// The triangular matrix A's `uplo` triangle holds (order n), zeros elsewhere, ones on the diagonal where diag is
// 'U' (the stored diagonal unread).
template <typename T>
void triangular_whole(char uplo, char diag, int64_t n, const T *A, int64_t lda, T *whole) {
  for_column_blocks(n, [&](int64_t first, int64_t last) {
    for (int64_t j = first; j < last; ++j)
      for (int64_t i = 0; i < n; ++i)
        whole[i + j * n] = i == j && diag == 'U' ? T(1) : in_triangle(uplo, i, j) ? A[i + j * lda] : T(0);
  });
}

// C's `uplo` triangle into a whole buffer (zeros in the other, which the products compute and nothing keeps), and
// back.
template <typename T>
void triangle_out(char uplo, int64_t n, const T *C, int64_t ldc, T *whole) {
  for_column_blocks(n, [&](int64_t first, int64_t last) {
    for (int64_t j = first; j < last; ++j)
      for (int64_t i = 0; i < n; ++i) whole[i + j * n] = in_triangle(uplo, i, j) ? C[i + j * ldc] : T(0);
  });
}
template <typename T>
void triangle_in(char uplo, int64_t n, const T *whole, T *C, int64_t ldc) {
  for_column_blocks(n, [&](int64_t first, int64_t last) {
    for (int64_t j = first; j < last; ++j)
      for (int64_t i = 0; i < n; ++i)
        if (in_triangle(uplo, i, j)) C[i + j * ldc] = whole[i + j * n];
  });
}

char other(char trans) { return trans == 'N' ? 'T' : 'N'; }

}  // namespace

template <typename T>
bool composed_symm(const Product<T> &product, char side, char uplo, int64_t m, int64_t n, T alpha, const T *A,
                   int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {
  const int64_t order = side == 'L' ? m : n;
  const auto whole = buffer<T>(order, order);
  if (!whole) return false;
  symmetric_whole(uplo, order, A, lda, whole.get());
  // C := alpha A B + beta C (side L) or alpha B A + beta C (side R), written in place by the engine.
  return side == 'L' ? product('N', 'N', m, n, m, alpha, whole.get(), m, B, ldb, beta, C, ldc)
                     : product('N', 'N', m, n, n, alpha, B, ldb, whole.get(), n, beta, C, ldc);
}

namespace {

// The largest multiple of `block` times a power of two below `size` (> block): where syrk, syr2k and trsm cut their
// lines in two, counted from line 0, so that the cuts do not depend on the order of the whole.
int64_t halving_cut(int64_t block, int64_t size) {
  int64_t cut = block;
  while (cut < size - cut) cut *= 2;
  return cut;
}

// syrk (`two_terms` false, B = A) and syr2k: C's `uplo` triangle := alpha (op(A) op(B)^T [+ op(B) op(A)^T]) + beta C.
// The lines are halved as trsm's (halving_cut): the block between the two halves is one product (two for syr2k)
// made in place in C, and the triangles of diagonal blocks of `block` lines, written out whole in a buffer (zeros in
// the other triangle), are computed there and copied back. Half the work of one product of all of C, and no copy
// of C but the diagonal blocks', for A's rows read once per level of halving: the gain is where k is small beside
// n. Products run on `product` until it declines one, then on `fallback`; false, with C untouched, only where no
// buffer could be had or the first product is declined.
template <typename T>
bool symmetric_update(const Product<T> &product, const Product<T> &fallback, int64_t block, char uplo, char trans,
                      int64_t n, int64_t k, T alpha, const T *A, int64_t lda, const T *B, int64_t ldb, bool two_terms,
                      T beta, T *C, int64_t ldc) {
  const int64_t leaf = std::min(block, n);
  const auto whole = buffer<T>(leaf, leaf);
  if (!whole) return false;
  bool gpu = true, written = false;
  // C (rows x cols at `to`) := alpha op(X)[rows from x] op(Y)[cols from y]^T + c_beta C.
  const auto term = [&](int64_t rows, int64_t cols, const T *X, int64_t ldx, int64_t x, const T *Y, int64_t ldy,
                        int64_t y, T c_beta, T *to, int64_t ld_to) {
    const T *xs = trans == 'N' ? X + x : X + x * ldx;
    const T *ys = trans == 'N' ? Y + y : Y + y * ldy;
    if (gpu && product(trans, other(trans), rows, cols, k, alpha, xs, ldx, ys, ldy, c_beta, to, ld_to)) {
      written = true;
      return true;
    }
    if (!written) return false;  // nothing changed yet: the caller computes the call elsewhere
    gpu = false;
    fallback(trans, other(trans), rows, cols, k, alpha, xs, ldx, ys, ldy, c_beta, to, ld_to);
    return true;
  };
  // Both terms of the block (rows from i, cols from j) at `to`.
  const auto block_terms = [&](int64_t rows, int64_t cols, int64_t i, int64_t j, T c_beta, T *to, int64_t ld_to) {
    if (!term(rows, cols, A, lda, i, B, ldb, j, c_beta, to, ld_to)) return false;
    return !two_terms || term(rows, cols, B, ldb, i, A, lda, j, T(1), to, ld_to);
  };
  const std::function<bool(int64_t, int64_t)> lines = [&](int64_t first, int64_t size) {
    T *diagonal = C + first + first * ldc;
    if (size <= block) {
      if (beta != T(0)) triangle_out(uplo, size, diagonal, ldc, whole.get());
      if (!block_terms(size, size, first, first, beta, whole.get(), size)) return false;
      triangle_in(uplo, size, whole.get(), diagonal, ldc);
      return true;
    }
    const int64_t cut = halving_cut(block, size), tail = first + cut, tail_size = size - cut;
    // The block between the halves: below the diagonal for uplo L (tail rows, head columns), above it for U.
    const bool made = uplo == 'L' ? block_terms(tail_size, cut, tail, first, beta, C + tail + first * ldc, ldc)
                                  : block_terms(cut, tail_size, first, tail, beta, C + first + tail * ldc, ldc);
    return made && lines(first, cut) && lines(tail, tail_size);
  };
  return lines(0, n);
}

}  // namespace

int64_t symmetric_update_block(int64_t block, int64_t n, int64_t k, int terms) {
  const int64_t most = std::max<int64_t>(block, 16384);
  int64_t lines = block;
  while (lines < n && lines < most && lines <= terms * k) lines *= 2;
  return std::min(lines, most);
}

template <typename T>
bool composed_syrk(const Product<T> &product, const Product<T> &fallback, int64_t block, char uplo, char trans,
                   int64_t n, int64_t k, T alpha, const T *A, int64_t lda, T beta, T *C, int64_t ldc) {
  return symmetric_update(product, fallback, block, uplo, trans, n, k, alpha, A, lda, A, lda, false, beta, C, ldc);
}

template <typename T>
bool composed_syr2k(const Product<T> &product, const Product<T> &fallback, int64_t block, char uplo, char trans,
                    int64_t n, int64_t k, T alpha, const T *A, int64_t lda, const T *B, int64_t ldb, T beta, T *C,
                    int64_t ldc) {
  return symmetric_update(product, fallback, block, uplo, trans, n, k, alpha, A, lda, B, ldb, true, beta, C, ldc);
}

template <typename T>
bool composed_trmm(const Product<T> &product, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                   T alpha, const T *A, int64_t lda, T *B, int64_t ldb) {
  const int64_t order = side == 'L' ? m : n;
  const auto whole = buffer<T>(order, order);
  const auto result = buffer<T>(m, n);
  if (!whole || !result) return false;
  triangular_whole(uplo, diag, order, A, lda, whole.get());
  // B := alpha op(A) B (side L) or alpha B op(A) (side R): computed apart, as B is also an operand.
  const bool computed = side == 'L'
                            ? product(transa, 'N', m, n, m, alpha, whole.get(), m, B, ldb, T(0), result.get(), m)
                            : product('N', transa, m, n, n, alpha, B, ldb, whole.get(), n, T(0), result.get(), m);
  if (!computed) return false;
  for_column_blocks(n, [&](int64_t first, int64_t last) {
    for (int64_t j = first; j < last; ++j)
      std::memcpy(B + j * ldb, result.get() + j * m, static_cast<size_t>(m) * sizeof(T));
  });
  return true;
}

template <typename T>
void composed_trsm(const Product<T> &product, const Product<T> &fallback, const BlockSolve<T> &solve, int64_t block,
                   char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha, const T *A, int64_t lda,
                   T *B, int64_t ldb) {
  const bool left = side == 'L';
  const int64_t order = left ? m : n;
  // op(A) lower (uplo L not transposed, or U transposed): forward for side L (the first lines first), backward
  // for side R (X op(A) = B solves the last columns first); upper the other way.
  const bool lower = (uplo == 'L') != (transa == 'T');
  const bool forward = left ? lower : !lower;
  // The element (i, j) of op(A) as the product reads it: A itself, or its transpose.
  const auto op_block = [&](int64_t row, int64_t col) {
    return transa == 'N' ? A + row + col * lda : A + col + row * lda;
  };
  // The lines [first, first + size) of B (rows for side L, columns for side R).
  const auto lines = [&](int64_t first) { return left ? B + first : B + first * ldb; };
  bool gpu = true;
  // B's lines `target` less the products of the solved lines `source` (beta scales them first):
  // side L: B_target (|target| x n) -= op(A)[target, source] X_source; side R: B_target -= X_source op(A)[source,
  // target].
  const auto update = [&](int64_t target, int64_t target_size, int64_t source, int64_t source_size, T beta) {
    T *to = lines(target);
    const T *from = lines(source);
    bool made = false;
    if (left) {
      const T *a = op_block(target, source);
      if (gpu) made = product(transa, 'N', target_size, n, source_size, T(-1), a, lda, from, ldb, beta, to, ldb);
      if (!made) fallback(transa, 'N', target_size, n, source_size, T(-1), a, lda, from, ldb, beta, to, ldb);
    } else {
      const T *a = op_block(source, target);
      if (gpu) made = product('N', transa, m, target_size, source_size, T(-1), from, ldb, a, lda, beta, to, ldb);
      if (!made) fallback('N', transa, m, target_size, source_size, T(-1), from, ldb, a, lda, beta, to, ldb);
    }
    gpu = gpu && made;
  };
  // The lines [first, first + size), alpha not yet applied to them where `scaled` is false. Cut in two at the
  // largest multiple of `block` times a power of two below the size, counted from line 0, so that the cuts, and so
  // each line's sums, do not depend on the order of the whole: the part substitution takes first is solved, the
  // other updated by one product of all of it, then solved. A line's updates are then log2(order / block)
  // products instead of order / block, and each moves the rest of B across once per level, not once per block.
  // The diagonal blocks, `block` lines each from line 0 (the last shorter), are solved by `solve`.
  const std::function<void(int64_t, int64_t, bool)> solve_lines = [&](int64_t first, int64_t size, bool scaled) {
    const T scale = scaled ? T(1) : alpha;
    if (size <= block) {
      T *own = lines(first);
      solve(side, uplo, transa, diag, left ? size : m, left ? n : size, scale, A + first + first * lda, lda, own, ldb);
      return;
    }
    const int64_t cut = halving_cut(block, size);
    const int64_t head = first, head_size = cut, tail = first + cut, tail_size = size - cut;
    if (forward) {
      solve_lines(head, head_size, scaled);
      update(tail, tail_size, head, head_size, scale);
      solve_lines(tail, tail_size, true);
    } else {
      solve_lines(tail, tail_size, scaled);
      update(head, head_size, tail, tail_size, scale);
      solve_lines(head, head_size, true);
    }
  };
  solve_lines(0, order, false);
}

#define FASTGEMM_BLAS_COMPOSED(T)                                                                                     \
  template bool composed_symm<T>(const Product<T> &, char, char, int64_t, int64_t, T, const T *, int64_t, const T *,  \
                                 int64_t, T, T *, int64_t);                                                           \
  template bool composed_syrk<T>(const Product<T> &, const Product<T> &, int64_t, char, char, int64_t, int64_t, T,    \
                                 const T *, int64_t, T, T *, int64_t);                                                \
  template bool composed_syr2k<T>(const Product<T> &, const Product<T> &, int64_t, char, char, int64_t, int64_t, T,   \
                                  const T *, int64_t, const T *, int64_t, T, T *, int64_t);                           \
  template bool composed_trmm<T>(const Product<T> &, char, char, char, char, int64_t, int64_t, T, const T *, int64_t, \
                                 T *, int64_t);
FASTGEMM_BLAS_COMPOSED(float)
FASTGEMM_BLAS_COMPOSED(double)
#undef FASTGEMM_BLAS_COMPOSED
template void composed_trsm<float>(const Product<float> &, const Product<float> &, const BlockSolve<float> &, int64_t,
                                   char, char, char, char, int64_t, int64_t, float, const float *, int64_t, float *,
                                   int64_t);
template void composed_trsm<double>(const Product<double> &, const Product<double> &, const BlockSolve<double> &,
                                    int64_t, char, char, char, char, int64_t, int64_t, double, const double *, int64_t,
                                    double *, int64_t);

}  // namespace fastgemm_blas
