// SPDX-License-Identifier: Apache-2.0
// xLASWP(N, A, LDA, K1, K2, IPIV, INCX), LAPACK's row interchanges: for each of A's N columns, rows K1 to K2 (in
// the order INCX gives) are swapped with the rows IPIV names. The reference is one loop on one thread; in xGETRF it
// passes over the whole matrix once per block column, which at orders of ten thousand and more takes seconds while
// the host's other cores wait. Each column's swaps are independent of the others', so this one splits the columns
// among threads, each doing the reference's swaps in the reference's order: the result is the reference's, bit for
// bit; and each column's swaps are made before the next column's (swap_each_column), which keeps a column's rows in
// the core's cache. A call whose rows reach past LDA (columns sharing elements, outside LAPACK's contract) runs whole
// on the calling thread in the reference's order, with the reference's result too. Calls of fewer than kThreadedSwaps
// element swaps, calls whose rows reach past LDA, and any call where a thread cannot be started, run on the calling
// thread.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

namespace {

// Element swaps (columns times rows interchanged) from which the columns are split among threads.
constexpr int64_t kThreadedSwaps = int64_t(1) << 22;
// Columns a thread takes at least, and the most threads one call uses.
constexpr int64_t kColumnsPerThread = 64;
constexpr unsigned kMostThreads = 16;
// The reference's blocks of columns (swap_columns).
constexpr int64_t kReferenceBlock = 32;

struct Complex8 {
  float re, im;
};
struct Complex16 {
  double re, im;
};

// The reference's interchanges on columns [first, last), in its order: blocks of 32 columns from column 0 (first is
// a multiple of 32), and in each block rows i from K1 to K2 (K2 down to K1 where INCX < 0), each swapped across the
// block's columns with row IPIV(x), x starting at K1 (K1 + (K1 - K2) INCX where INCX < 0) and moving by INCX.
template <typename T>
void swap_columns(T *a, int64_t lda, int k1, int k2, const int *ipiv, int incx, int64_t first, int64_t last) {
  const int64_t step = incx > 0 ? 1 : -1;
  const int64_t begin = incx > 0 ? k1 : k2, end = incx > 0 ? int64_t(k2) + 1 : int64_t(k1) - 1;
  const int64_t x0 = incx > 0 ? k1 : k1 + (int64_t(k1) - k2) * incx;
  for (int64_t block = first; block < last; block += kReferenceBlock) {
    const int64_t block_end = std::min(block + kReferenceBlock, last);
    int64_t x = x0;
    for (int64_t i = begin; i != end; i += step, x += incx) {
      const int64_t row = ipiv[x - 1];
      if (row == i) continue;
      for (int64_t column = block; column < block_end; ++column)
        std::swap(a[column * lda + i - 1], a[column * lda + row - 1]);
    }
  }
}

// The same interchanges a column at a time: each column's swaps, in the reference's order, before the next column's.
// Where the rows lie within LDA no two columns share an element, so each column ends as the reference leaves it; and
// a column's rows (a few hundred KB at orders of ten thousand) stay in the core's cache and its pages in the TLB
// while they are swapped, where the reference's blocks of 32 columns touch 32 columns' pages for each row.
template <typename T>
void swap_each_column(T *a, int64_t lda, int k1, int k2, const int *ipiv, int incx, int64_t first, int64_t last) {
  const int64_t step = incx > 0 ? 1 : -1;
  const int64_t begin = incx > 0 ? k1 : k2, end = incx > 0 ? int64_t(k2) + 1 : int64_t(k1) - 1;
  const int64_t x0 = incx > 0 ? k1 : k1 + (int64_t(k1) - k2) * incx;
  for (int64_t column = first; column < last; ++column) {
    T *c = a + column * lda - 1;  // c[row] is A(row, column), rows from 1
    int64_t x = x0;
    for (int64_t i = begin; i != end; i += step, x += incx) {
      const int64_t row = ipiv[x - 1];
      if (row != i) std::swap(c[i], c[row]);
    }
  }
}

// Whether every row the call touches lies within LDA, so that no two columns share an element and the columns may be
// split among threads. A call that reaches past LDA (outside LAPACK's contract) runs in the reference's order.
bool columns_apart(int64_t lda, int k1, int k2, const int *ipiv, int incx) {
  if (k1 < 1 || k2 > lda) return false;
  const int64_t x0 = incx > 0 ? k1 : k1 + (int64_t(k1) - k2) * incx;
  for (int64_t i = k1, x = x0; i <= k2; ++i, x += incx)
    if (ipiv[x - 1] < 1 || ipiv[x - 1] > lda) return false;
  return true;
}

template <typename T>
void laswp(const int *n, T *a, const int *lda, const int *k1, const int *k2, const int *ipiv, const int *incx) {
  if (*incx == 0 || *n <= 0 || *k2 < *k1) return;  // the reference's loops run no step there
  const int64_t columns = *n, ld = *lda;
  const int64_t swaps = columns * (int64_t(*k2) - *k1 + 1);
  const unsigned hardware = std::thread::hardware_concurrency();
  const int64_t threads =
      std::min<int64_t>({hardware == 0 ? 1 : int64_t(hardware), int64_t(kMostThreads), columns / kColumnsPerThread});
  if (!columns_apart(ld, *k1, *k2, ipiv, *incx)) return swap_columns(a, ld, *k1, *k2, ipiv, *incx, 0, columns);
  const auto part = [&](int64_t first, int64_t last) { swap_each_column(a, ld, *k1, *k2, ipiv, *incx, first, last); };
  // The start of part t of `threads`.
  const auto start = [&](int64_t t) { return t >= threads ? columns : columns * t / threads; };
  if (swaps < kThreadedSwaps || threads < 2) return part(0, columns);
  std::vector<std::thread> pool;
  int64_t started = threads;  // parts 1 to started - 1 run on threads of their own
  for (int64_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(part, start(t), start(t + 1));
    } catch (...) {
      started = t;  // no thread for part t: this thread takes the parts from t on
      break;
    }
  }
  part(0, start(1));
  if (started < threads) part(start(started), columns);
  for (std::thread &thread : pool) thread.join();
}

}  // namespace

extern "C" {
__attribute__((visibility("default"))) void slaswp_(const int *n, float *a, const int *lda, const int *k1,
                                                    const int *k2, const int *ipiv, const int *incx) {
  laswp(n, a, lda, k1, k2, ipiv, incx);
}
__attribute__((visibility("default"))) void dlaswp_(const int *n, double *a, const int *lda, const int *k1,
                                                    const int *k2, const int *ipiv, const int *incx) {
  laswp(n, a, lda, k1, k2, ipiv, incx);
}
__attribute__((visibility("default"))) void claswp_(const int *n, Complex8 *a, const int *lda, const int *k1,
                                                    const int *k2, const int *ipiv, const int *incx) {
  laswp(n, a, lda, k1, k2, ipiv, incx);
}
__attribute__((visibility("default"))) void zlaswp_(const int *n, Complex16 *a, const int *lda, const int *k1,
                                                    const int *k2, const int *ipiv, const int *incx) {
  laswp(n, a, lda, k1, k2, ipiv, incx);
}
}
