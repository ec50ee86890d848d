// SPDX-License-Identifier: Apache-2.0
#include "plain.hpp"

namespace fastgemm_blas {
namespace {

// beta C as the reference forms it: beta == 0 gives 0 without reading C (which may hold NaN).
template <typename T>
T scaled(T beta, T c) {
  return beta == T(0) ? T(0) : beta * c;
}

// Element (i, l) of op(A) for a triangular A, reading only what the reference reads: the triangle UPLO,
// and its diagonal unless it is a unit one.
template <typename T>
class Triangle {
 public:
  Triangle(char uplo, char transa, char diag, const T *a, int64_t lda)
      : a_(a), lda_(lda), stored_upper_(uplo == 'U'), transposed_(transa == 'T'), unit_(diag == 'U') {}
  // Whether op(A) is upper triangular.
  bool upper() const { return stored_upper_ != transposed_; }
  T operator()(int64_t i, int64_t l) const {
    if (i == l) return unit_ ? T(1) : a_[i + i * lda_];
    const int64_t row = transposed_ ? l : i, column = transposed_ ? i : l;
    if (stored_upper_ ? row > column : row < column) return T(0);
    return a_[row + column * lda_];
  }

 private:
  const T *a_;
  int64_t lda_;
  bool stored_upper_, transposed_, unit_;
};

// Element (i, l) of the symmetric A whose triangle UPLO is stored.
template <typename T>
T symmetric(const T *a, int64_t lda, char uplo, int64_t i, int64_t l) {
  const bool stored = uplo == 'U' ? i <= l : i >= l;
  return stored ? a[i + l * lda] : a[l + i * lda];
}

// Element (i, l) of op(A), with op(A) of n rows.
template <typename T>
T op(const T *a, int64_t lda, char trans, int64_t i, int64_t l) {
  return trans == 'N' ? a[i + l * lda] : a[l + i * lda];
}

// C(i, j) := alpha sum(i, j) + beta C(i, j) over the columns j < n and, in each, the rows of `uplo`: all m ('G'), or
// those of the triangle 'U' or 'L' (m == n): what gemm, symm, syrk and syr2k share. alpha == 0 calls no sum (reads
// neither operand); beta == 0 reads no C.
template <typename T, typename Sum>
void update(char uplo, int64_t m, int64_t n, T alpha, T beta, T *C, int64_t ldc, Sum sum) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = uplo == 'L' ? j : 0; i < (uplo == 'U' ? j + 1 : m); ++i) {
      T &c = C[i + j * ldc];
      c = alpha == T(0) ? scaled(beta, c) : alpha * sum(i, j) + scaled(beta, c);
    }
}

}  // namespace

void plain_sgemm(bool a_trans, bool b_trans, int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                 const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  plain_gemm<float>(a_trans ? 'T' : 'N', b_trans ? 'T' : 'N', m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <typename T>
void plain_gemm(char transa, char transb, int64_t m, int64_t n, int64_t k, T alpha, const T *A, int64_t lda, const T *B,
                int64_t ldb, T beta, T *C, int64_t ldc) {
  update('G', m, n, alpha, beta, C, ldc, [&](int64_t i, int64_t j) {
    T sum = T(0);
    for (int64_t l = 0; l < k; ++l) sum += op(A, lda, transa, i, l) * op(B, ldb, transb, l, j);
    return sum;
  });
}

template <typename T>
void plain_symm(char side, char uplo, int64_t m, int64_t n, T alpha, const T *A, int64_t lda, const T *B, int64_t ldb,
                T beta, T *C, int64_t ldc) {
  update('G', m, n, alpha, beta, C, ldc, [&](int64_t i, int64_t j) {
    T sum = T(0);
    if (side == 'L') {
      for (int64_t l = 0; l < m; ++l) sum += symmetric(A, lda, uplo, i, l) * B[l + j * ldb];
    } else {
      for (int64_t l = 0; l < n; ++l) sum += B[i + l * ldb] * symmetric(A, lda, uplo, l, j);
    }
    return sum;
  });
}

template <typename T>
void plain_syrk(char uplo, char trans, int64_t n, int64_t k, T alpha, const T *A, int64_t lda, T beta, T *C,
                int64_t ldc) {
  update(uplo, n, n, alpha, beta, C, ldc, [&](int64_t i, int64_t j) {
    T sum = T(0);
    for (int64_t l = 0; l < k; ++l) sum += op(A, lda, trans, i, l) * op(A, lda, trans, j, l);
    return sum;
  });
}

template <typename T>
void plain_syr2k(char uplo, char trans, int64_t n, int64_t k, T alpha, const T *A, int64_t lda, const T *B, int64_t ldb,
                 T beta, T *C, int64_t ldc) {
  update(uplo, n, n, alpha, beta, C, ldc, [&](int64_t i, int64_t j) {
    T sum = T(0);
    for (int64_t l = 0; l < k; ++l)
      sum += op(A, lda, trans, i, l) * op(B, ldb, trans, j, l) + op(B, ldb, trans, i, l) * op(A, lda, trans, j, l);
    return sum;
  });
}

// In place: each element of B is overwritten once every element it is computed from has been read.
template <typename T>
void plain_trmm(char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha, const T *A, int64_t lda,
                T *B, int64_t ldb) {
  const Triangle<T> a(uplo, transa, diag, A, lda);
  if (side == 'L') {
    // B(i, j) from B(l, j) for l >= i (op(A) upper: rows from the first down) or l <= i (lower: from the
    // last up).
    for (int64_t j = 0; j < n; ++j)
      for (int64_t step = 0; step < m; ++step) {
        const int64_t i = a.upper() ? step : m - 1 - step;
        T sum = T(0);
        if (alpha != T(0))
          for (int64_t l = a.upper() ? i : 0; l < (a.upper() ? m : i + 1); ++l) sum += a(i, l) * B[l + j * ldb];
        B[i + j * ldb] = alpha * sum;
      }
  } else {
    // B(i, j) from B(i, l) for l <= j (op(A) upper: columns from the last back) or l >= j (lower: from the
    // first on).
    for (int64_t step = 0; step < n; ++step) {
      const int64_t j = a.upper() ? n - 1 - step : step;
      for (int64_t i = 0; i < m; ++i) {
        T sum = T(0);
        if (alpha != T(0))
          for (int64_t l = a.upper() ? 0 : j; l < (a.upper() ? j + 1 : n); ++l) sum += B[i + l * ldb] * a(l, j);
        B[i + j * ldb] = alpha * sum;
      }
    }
  }
}

// Substitution in place: each element of the solution X is found from those found before it.
template <typename T>
void plain_trsm(char side, char uplo, char transa, char diag, int64_t m, int64_t n, T alpha, const T *A, int64_t lda,
                T *B, int64_t ldb) {
  const Triangle<T> a(uplo, transa, diag, A, lda);
  if (alpha == T(0)) {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) B[i + j * ldb] = T(0);
    return;
  }
  if (side == 'L') {
    // op(A) X = alpha B: upper from the last row up, lower from the first down.
    for (int64_t j = 0; j < n; ++j)
      for (int64_t step = 0; step < m; ++step) {
        const int64_t i = a.upper() ? m - 1 - step : step;
        T value = alpha * B[i + j * ldb];
        for (int64_t l = a.upper() ? i + 1 : 0; l < (a.upper() ? m : i); ++l) value -= a(i, l) * B[l + j * ldb];
        B[i + j * ldb] = value / a(i, i);
      }
  } else {
    // X op(A) = alpha B: upper from the first column on, lower from the last back.
    for (int64_t step = 0; step < n; ++step) {
      const int64_t j = a.upper() ? step : n - 1 - step;
      for (int64_t i = 0; i < m; ++i) {
        T value = alpha * B[i + j * ldb];
        for (int64_t l = a.upper() ? 0 : j + 1; l < (a.upper() ? j : n); ++l) value -= B[i + l * ldb] * a(l, j);
        B[i + j * ldb] = value / a(j, j);
      }
    }
  }
}

#define FASTGEMM_BLAS_PLAIN(T)                                                                                     \
  template void plain_gemm<T>(char, char, int64_t, int64_t, int64_t, T, const T *, int64_t, const T *, int64_t, T, \
                              T *, int64_t);                                                                       \
  template void plain_symm<T>(char, char, int64_t, int64_t, T, const T *, int64_t, const T *, int64_t, T, T *,     \
                              int64_t);                                                                            \
  template void plain_syrk<T>(char, char, int64_t, int64_t, T, const T *, int64_t, T, T *, int64_t);               \
  template void plain_syr2k<T>(char, char, int64_t, int64_t, T, const T *, int64_t, const T *, int64_t, T, T *,    \
                               int64_t);                                                                           \
  template void plain_trmm<T>(char, char, char, char, int64_t, int64_t, T, const T *, int64_t, T *, int64_t);      \
  template void plain_trsm<T>(char, char, char, char, int64_t, int64_t, T, const T *, int64_t, T *, int64_t);
FASTGEMM_BLAS_PLAIN(float)
FASTGEMM_BLAS_PLAIN(double)
#undef FASTGEMM_BLAS_PLAIN

}  // namespace fastgemm_blas
