// SPDX-License-Identifier: Apache-2.0
// xGEQR2, xLARFT and xLARFB (s and d): LAPACK's blocked QR (xGEQRF) in Level 3 calls. The reference factors each
// panel of NB columns one column at a time (xGEQR2: each reflector applied to the panel's other columns, two passes
// over them) and then builds the panel's T (xLARFT: one matrix-vector product a column), both at the speed of memory,
// about 3 m NB^2 flops a panel; and its xLARFB, which applies a panel's reflectors to the rest of the matrix, copies
// the first NB rows of C into a transposed workspace and subtracts it back, element by element with a stride of LDC,
// on one thread. With the block this library gives large matrices (1024), those were most of a QR's time (a QR of
// order 32768 did not finish in 200 s while its products took a few). Here:
// - xGEQR2 works in halves (Elmroth and Gustavson's recursive QR): the left half is factored, its reflectors applied
//   to the right half at once, the right half factored; xLARFT likewise builds T from the halves' T1 and T2 as
//   [T1, -T1 (V1^T V2) T2; 0, T2], V1^T V2 a triangular and a general product. Leaves of at most kLeafColumns columns
//   are LAPACK's own routines'.
// - xLARFB (from the left, forward, columnwise: xGEQRF's and xORMQR's) makes the same calls as the reference, with its
//   two copies between C's first rows and the workspace done by tiles and split among threads: the reference's
//   result, bit for bit, with the same BLAS.
// So a QR's work is Level 3 calls, which a GPU BLAS preloaded beside this library takes where they are large. The
// reflectors, R and T are those the reference defines (the same Householder vectors and scalars: Q = H1 H2 ... Hk =
// I - V T V^T); only the order in which their sums are rounded differs. Taken: xGEQR2 of m x n with m >= n, from
// kMinColumns to kMostColumns columns (its T takes n^2 elements of memory here); xLARFT forward and columnwise with
// k >= kMinColumns reflectors of n >= k rows; xLARFB from the left, forward and columnwise, with reflectors of m >= k
// rows. Every other call is LAPACK's own. With FASTGEMM_LOG=1 each call taken with at least kMinColumns reflectors
// is said on stderr, with its time.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "blas/lapack/symbols.hpp"

namespace {

constexpr int kMinColumns = 128;
constexpr int kLeafColumns = 32;
constexpr int kMostColumns = 4096;
// xLARFB's copies: tiles of kTile x kTile elements; split among up to kMostThreads threads from kThreadedElements.
constexpr int64_t kTile = 64;
constexpr int64_t kThreadedElements = int64_t(1) << 20;
constexpr unsigned kMostThreads = 16;

// gfortran's interfaces: the lengths of the character arguments follow the others.
template <typename T>
struct Routines {
  using Geqr2 = void (*)(const int *, const int *, T *, const int *, T *, T *, int *);
  using Larft = void (*)(const char *, const char *, const int *, const int *, const T *, const int *, const T *, T *,
                         const int *, size_t, size_t);
  using Larfb = void (*)(const char *, const char *, const char *, const char *, const int *, const int *, const int *,
                         const T *, const int *, const T *, const int *, T *, const int *, T *, const int *, size_t,
                         size_t, size_t, size_t);
  using Gemm = void (*)(const char *, const char *, const int *, const int *, const int *, const T *, const T *,
                        const int *, const T *, const int *, const T *, T *, const int *, size_t, size_t);
  using Trmm = void (*)(const char *, const char *, const char *, const char *, const int *, const int *, const T *,
                        const T *, const int *, T *, const int *, size_t, size_t, size_t, size_t);
  Geqr2 geqr2 = nullptr;  // LAPACK's own
  Larft larft = nullptr;  // LAPACK's own
  Larfb larfb = nullptr;
  Gemm gemm = nullptr;
  Trmm trmm = nullptr;
  bool complete() const {
    return geqr2 != nullptr && larft != nullptr && larfb != nullptr && gemm != nullptr && trmm != nullptr;
  }
};

template <typename T>
Routines<T> find_routines() {
  constexpr bool kDouble = sizeof(T) == sizeof(double);
  using fastgemm_lapack::blas_symbol;
  using fastgemm_lapack::lapack_symbol;
  Routines<T> found;
  found.geqr2 = reinterpret_cast<typename Routines<T>::Geqr2>(lapack_symbol(kDouble ? "dgeqr2_" : "sgeqr2_"));
  found.larft = reinterpret_cast<typename Routines<T>::Larft>(lapack_symbol(kDouble ? "dlarft_" : "slarft_"));
  found.larfb = reinterpret_cast<typename Routines<T>::Larfb>(lapack_symbol(kDouble ? "dlarfb_" : "slarfb_"));
  found.gemm = reinterpret_cast<typename Routines<T>::Gemm>(blas_symbol(kDouble ? "dgemm_" : "sgemm_"));
  found.trmm = reinterpret_cast<typename Routines<T>::Trmm>(blas_symbol(kDouble ? "dtrmm_" : "strmm_"));
  return found;
}

// The routines, found once all are; looked for again while some are missing.
template <typename T>
Routines<T> routines() {
  static std::mutex mutex;
  static Routines<T> kept;
  static std::atomic<bool> ready{false};
  if (ready.load(std::memory_order_acquire)) return kept;
  const Routines<T> found = find_routines<T>();
  if (found.complete()) {
    const std::lock_guard<std::mutex> lock(mutex);
    if (!ready.load(std::memory_order_relaxed)) {
      kept = found;
      ready.store(true, std::memory_order_release);
    }
  }
  return found;
}

bool logging() {
  static const bool log = [] {
    const char *value = std::getenv("FASTGEMM_LOG");
    return value != nullptr && std::strcmp(value, "1") == 0;
  }();
  return log;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <typename T>
char precision() {
  return sizeof(T) == sizeof(double) ? 'D' : 'S';
}

int64_t at(int64_t row, int64_t column, int64_t ld) { return row + column * ld; }

// W (n x k) := C1^T, or C1 -= W^T where `subtract`, C1 the first k rows of C: for each of C's columns i in [first,
// last), by tiles of kTile columns and kTile rows (C's columns read along, W's rows written a tile at a time).
template <typename T>
void copy_part(bool subtract, int64_t first, int64_t last, int64_t k, T *c, int64_t ldc, T *w, int64_t ldw) {
  for (int64_t i0 = first; i0 < last; i0 += kTile)
    for (int64_t j0 = 0; j0 < k; j0 += kTile) {
      const int64_t i1 = i0 + kTile < last ? i0 + kTile : last, j1 = j0 + kTile < k ? j0 + kTile : k;
      for (int64_t i = i0; i < i1; ++i) {
        T *column = c + at(0, i, ldc);
        if (subtract) {
          for (int64_t j = j0; j < j1; ++j) column[j] -= w[at(i, j, ldw)];
        } else {
          for (int64_t j = j0; j < j1; ++j) w[at(i, j, ldw)] = column[j];
        }
      }
    }
}

// copy_part over all n columns, split among threads (at tile boundaries) where the block has kThreadedElements or
// more; the parts no thread could be started for run on this one. Each element is copied or subtracted once, as the
// reference's loops do it: the same results.
template <typename T>
void copy_first_rows(bool subtract, int n, int k, T *c, int ldc, T *w, int ldw) {
  const unsigned hardware = std::thread::hardware_concurrency();
  const int64_t tiles = (n + kTile - 1) / kTile;
  int64_t threads = std::min<int64_t>({hardware == 0 ? 1 : int64_t(hardware), int64_t(kMostThreads), tiles});
  if (int64_t(n) * k < kThreadedElements) threads = 1;
  const auto start = [&](int64_t part) { return part >= threads ? int64_t(n) : tiles * part / threads * kTile; };
  const auto run = [&](int64_t part) { copy_part(subtract, start(part), start(part + 1), k, c, ldc, w, ldw); };
  std::vector<std::thread> pool;
  int64_t started = threads;  // parts 1 to started - 1 run on threads of their own
  for (int64_t part = 1; part < threads; ++part) {
    try {
      pool.emplace_back(run, part);
    } catch (...) {
      started = part;
      break;
    }
  }
  run(0);
  for (int64_t part = started; part < threads; ++part) run(part);
  for (std::thread &thread : pool) thread.join();
}

template <typename T>
struct Halves {
  Routines<T> r;

  // For the n1 + n2 reflectors of the m x (n1 + n2) unit lower trapezoidal V (m >= n1 + n2), whose T1 (of the first
  // n1) and T2 (of the others, V2 from row n1) are in place in T: T12 = -T1 (V1^T V2) T2. V1^T V2 is V1's rows n1 to
  // n - 1 transposed times V2's unit lower triangle, plus V1's rows from n transposed times V2's.
  void join(int m, int n1, int n2, const T *v, int ldv, T *t, int ldt) const {
    const int n = n1 + n2;
    T *w = t + at(0, n1, ldt);
    for (int j = 0; j < n2; ++j)
      for (int i = 0; i < n1; ++i) w[at(i, j, ldt)] = v[at(n1 + j, i, ldv)];
    const T one = 1, minus_one = -1;
    r.trmm("R", "L", "N", "U", &n1, &n2, &one, v + at(n1, n1, ldv), &ldv, w, &ldt, 1, 1, 1, 1);
    if (m > n) {
      const int rows = m - n;
      r.gemm("T", "N", &n1, &n2, &rows, &one, v + at(n, 0, ldv), &ldv, v + at(n, n1, ldv), &ldv, &one, w, &ldt, 1, 1);
    }
    r.trmm("L", "U", "N", "N", &n1, &n2, &one, t, &ldt, w, &ldt, 1, 1, 1, 1);
    r.trmm("R", "U", "N", "N", &n1, &n2, &minus_one, t + at(n1, n1, ldt), &ldt, w, &ldt, 1, 1, 1, 1);
  }

  // xLARFB('L', trans, 'F', 'C') of the k reflectors of the m x k V (m >= k) on the m x n C, as the reference does it:
  // W (n x k) := C^T V = C1^T V1 + C2^T V2, W := W T (trans 'T') or W T^T ('N'), C2 -= V2 W^T, C1 -= (W V1^T)^T (V1 the
  // unit lower triangle of V's first k rows, C1 C's first k rows).
  void apply(char trans, int m, int n, int k, const T *v, int ldv, const T *t, int ldt, T *c, int ldc, T *w,
             int ldw) const {
    if (m <= 0 || n <= 0) return;
    copy_first_rows(false, n, k, c, ldc, w, ldw);
    const T one = 1, minus_one = -1;
    const char transposed[2] = {trans == 'N' ? 'T' : 'N', '\0'};
    r.trmm("R", "L", "N", "U", &n, &k, &one, v, &ldv, w, &ldw, 1, 1, 1, 1);
    const int rows = m - k;
    if (rows > 0) r.gemm("T", "N", &n, &k, &rows, &one, c + k, &ldc, v + k, &ldv, &one, w, &ldw, 1, 1);
    r.trmm("R", "U", transposed, "N", &n, &k, &one, t, &ldt, w, &ldw, 1, 1, 1, 1);
    if (rows > 0) r.gemm("N", "T", &rows, &n, &k, &minus_one, v + k, &ldv, w, &ldw, &one, c + k, &ldc, 1, 1);
    r.trmm("R", "L", "T", "U", &n, &k, &one, v, &ldv, w, &ldw, 1, 1, 1, 1);
    copy_first_rows(true, n, k, c, ldc, w, ldw);
  }

  // xLARFT('F', 'C') of the n reflectors of the m x n V.
  void triangle(int m, int n, const T *v, int ldv, const T *tau, T *t, int ldt) const {
    if (n <= kLeafColumns) {
      r.larft("F", "C", &m, &n, v, &ldv, tau, t, &ldt, 1, 1);
      return;
    }
    const int n1 = n / 2, n2 = n - n1;
    triangle(m, n1, v, ldv, tau, t, ldt);
    triangle(m - n1, n2, v + at(n1, n1, ldv), ldv, tau + n1, t + at(n1, n1, ldt), ldt);
    join(m, n1, n2, v, ldv, t, ldt);
  }

  // xGEQR2 of the m x n panel a (m >= n), and where with_t its T; T's space (n x n) is used either way, work holds
  // at least floor(n / 2) x ceil(n / 2) elements and kLeafColumns.
  void factor(int m, int n, T *a, int lda, T *tau, T *t, int ldt, T *work, bool with_t) const {
    if (n <= kLeafColumns) {
      int info = 0;
      r.geqr2(&m, &n, a, &lda, tau, work, &info);  // info is 0: the arguments are valid
      if (with_t) r.larft("F", "C", &m, &n, a, &lda, tau, t, &ldt, 1, 1);
      return;
    }
    const int n1 = n / 2, n2 = n - n1;
    factor(m, n1, a, lda, tau, t, ldt, work, true);
    T *right = a + at(0, n1, lda);
    apply('T', m, n2, n1, a, lda, t, ldt, right, lda, work, n2);
    factor(m - n1, n2, right + n1, lda, tau + n1, t + at(n1, n1, ldt), ldt, work, with_t);
    if (with_t) join(m, n1, n2, a, lda, t, ldt);
  }
};

template <typename T>
void geqr2(const int *m, const int *n, T *a, const int *lda, T *tau, T *work, int *info) {
  const Routines<T> r = routines<T>();
  if (r.geqr2 == nullptr) {  // no LAPACK in the program nor in the system: nothing is computed, and INFO says so
    if (info != nullptr) *info = -1;
    if (logging()) std::fprintf(stderr, "fastgemm_lapack: no LAPACK to factor with (xGEQR2): INFO -1\n");
    return;
  }
  const bool taken = r.complete() && *m >= *n && *n >= kMinColumns && *n <= kMostColumns && *lda >= *m;
  T *space = nullptr;
  const size_t columns = taken ? static_cast<size_t>(*n) : 0;
  if (taken)
    space = static_cast<T *>(
        std::malloc(sizeof(T) * (columns * columns + (columns / 2 + 1) * (columns / 2 + 1) + kLeafColumns)));
  if (space == nullptr) {
    r.geqr2(m, n, a, lda, tau, work, info);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  Halves<T>{r}.factor(*m, *n, a, *lda, tau, space, *n, space + columns * columns, false);
  std::free(space);
  *info = 0;
  if (logging())
    std::fprintf(stderr, "fastgemm_lapack: %cGEQR2 %d x %d: in halves (Level 3), leaves of %d: %.3f s\n",
                 precision<T>(), *m, *n, kLeafColumns, seconds_since(start));
}

template <typename T>
void larft(const char *direct, const char *storev, const int *n, const int *k, const T *v, const int *ldv, const T *tau,
           T *t, const int *ldt) {
  const Routines<T> r = routines<T>();
  if (r.larft == nullptr) {  // no LAPACK anywhere: T is made NaN rather than left as it was
    for (int j = 0; j < *k; ++j)
      for (int i = 0; i <= j; ++i) t[at(i, j, *ldt)] = std::numeric_limits<T>::quiet_NaN();
    if (logging()) std::fprintf(stderr, "fastgemm_lapack: no LAPACK to build T with (xLARFT): T is NaN\n");
    return;
  }
  const bool forward = *direct == 'F' || *direct == 'f', columnwise = *storev == 'C' || *storev == 'c';
  if (!r.complete() || !forward || !columnwise || *k < kMinColumns || *n < *k || *ldv < *n || *ldt < *k) {
    r.larft(direct, storev, n, k, v, ldv, tau, t, ldt, 1, 1);  // single characters, whatever lengths came
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  Halves<T>{r}.triangle(*n, *k, v, *ldv, tau, t, *ldt);
  if (logging())
    std::fprintf(stderr, "fastgemm_lapack: %cLARFT %d x %d: in halves (Level 3), leaves of %d: %.3f s\n",
                 precision<T>(), *n, *k, kLeafColumns, seconds_since(start));
}

template <typename T>
void larfb(const char *side, const char *trans, const char *direct, const char *storev, const int *m, const int *n,
           const int *k, const T *v, const int *ldv, const T *t, const int *ldt, T *c, const int *ldc, T *work,
           const int *ldwork) {
  const Routines<T> r = routines<T>();
  if (r.larfb == nullptr) {  // no LAPACK anywhere: C is made NaN rather than left as it was
    for (int j = 0; j < *n; ++j)
      for (int i = 0; i < *m; ++i) c[at(i, j, *ldc)] = std::numeric_limits<T>::quiet_NaN();
    if (logging()) std::fprintf(stderr, "fastgemm_lapack: no LAPACK to apply reflectors with (xLARFB): C is NaN\n");
    return;
  }
  const char op = *trans == 't' || *trans == 'c' || *trans == 'C' ? 'T' : *trans == 'n' ? 'N' : *trans;
  const bool left = *side == 'L' || *side == 'l', forward = *direct == 'F' || *direct == 'f',
             columnwise = *storev == 'C' || *storev == 'c';
  if (!r.complete() || !left || !forward || !columnwise || (op != 'T' && op != 'N') || *k < 1 || *m < *k || *n < 1 ||
      *ldv < *m || *ldt < *k || *ldc < *m || *ldwork < *n) {
    r.larfb(side, trans, direct, storev, m, n, k, v, ldv, t, ldt, c, ldc, work, ldwork, 1, 1, 1, 1);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  Halves<T>{r}.apply(op, *m, *n, *k, v, *ldv, t, *ldt, c, *ldc, work, *ldwork);
  if (logging() && *k >= kMinColumns)
    std::fprintf(stderr, "fastgemm_lapack: %cLARFB L%c %d x %d, %d reflectors: copies by tiles: %.3f s\n",
                 precision<T>(), op, *m, *n, *k, seconds_since(start));
}

}  // namespace

extern "C" {
__attribute__((visibility("default"))) void sgeqr2_(const int *m, const int *n, float *a, const int *lda, float *tau,
                                                    float *work, int *info) {
  geqr2(m, n, a, lda, tau, work, info);
}
__attribute__((visibility("default"))) void dgeqr2_(const int *m, const int *n, double *a, const int *lda, double *tau,
                                                    double *work, int *info) {
  geqr2(m, n, a, lda, tau, work, info);
}
__attribute__((visibility("default"))) void slarft_(const char *direct, const char *storev, const int *n, const int *k,
                                                    const float *v, const int *ldv, const float *tau, float *t,
                                                    const int *ldt, size_t, size_t) {
  larft(direct, storev, n, k, v, ldv, tau, t, ldt);
}
__attribute__((visibility("default"))) void dlarft_(const char *direct, const char *storev, const int *n, const int *k,
                                                    const double *v, const int *ldv, const double *tau, double *t,
                                                    const int *ldt, size_t, size_t) {
  larft(direct, storev, n, k, v, ldv, tau, t, ldt);
}
__attribute__((visibility("default"))) void slarfb_(const char *side, const char *trans, const char *direct,
                                                    const char *storev, const int *m, const int *n, const int *k,
                                                    const float *v, const int *ldv, const float *t, const int *ldt,
                                                    float *c, const int *ldc, float *work, const int *ldwork, size_t,
                                                    size_t, size_t, size_t) {
  larfb(side, trans, direct, storev, m, n, k, v, ldv, t, ldt, c, ldc, work, ldwork);
}
__attribute__((visibility("default"))) void dlarfb_(const char *side, const char *trans, const char *direct,
                                                    const char *storev, const int *m, const int *n, const int *k,
                                                    const double *v, const int *ldv, const double *t, const int *ldt,
                                                    double *c, const int *ldc, double *work, const int *ldwork, size_t,
                                                    size_t, size_t, size_t) {
  larfb(side, trans, direct, storev, m, n, k, v, ldv, t, ldt, c, ldc, work, ldwork);
}
}
