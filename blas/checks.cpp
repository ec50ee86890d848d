// SPDX-License-Identifier: Apache-2.0
#include "checks.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cpu_blas.hpp"

namespace fastgemm_blas {
namespace {

using FortranXerbla = void (*)(const char *, const int *, size_t);
using CblasXerbla = void (*)(int, const char *, const char *, ...);

bool is_trans(char value) { return value == 'N' || value == 'T' || value == 'C'; }
bool is_side(char value) { return value == 'L' || value == 'R'; }
bool is_uplo(char value) { return value == 'U' || value == 'L'; }
bool is_diag(char value) { return value == 'U' || value == 'N'; }

// What netlib's cblas_xerbla does to a position in row-major (LAPACK 3.11's, the Level 3 part).
int row_major_position(const char *routine, int info) {
  if (std::strstr(routine, "gemm") != nullptr) {
    if (info == 4 || info == 5) return 9 - info;
    if (info == 9 || info == 11) return 20 - info;
  } else if (std::strstr(routine, "symm") != nullptr) {
    if (info == 4 || info == 5) return 9 - info;
  } else if (std::strstr(routine, "trmm") != nullptr || std::strstr(routine, "trsm") != nullptr) {
    if (info == 6 || info == 7) return 13 - info;
  }
  return info;
}

}  // namespace

char upper_case(char value) { return value >= 'a' && value <= 'z' ? static_cast<char>(value - 'a' + 'A') : value; }

char trans_letter(char value) { return upper_case(value) == 'N' ? 'N' : 'T'; }

int gemm_argument_error(char transa, char transb, int m, int n, int k, int lda, int ldb, int ldc) {
  transa = upper_case(transa);
  transb = upper_case(transb);
  if (!is_trans(transa)) return 1;
  if (!is_trans(transb)) return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < std::max(1, transa == 'N' ? m : k)) return 8;
  if (ldb < std::max(1, transb == 'N' ? k : n)) return 10;
  if (ldc < std::max(1, m)) return 13;
  return 0;
}

int symm_argument_error(char side, char uplo, int m, int n, int lda, int ldb, int ldc) {
  side = upper_case(side);
  if (!is_side(side)) return 1;
  if (!is_uplo(upper_case(uplo))) return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (lda < std::max(1, side == 'L' ? m : n)) return 7;
  if (ldb < std::max(1, m)) return 9;
  if (ldc < std::max(1, m)) return 12;
  return 0;
}

int syrk_argument_error(char uplo, char trans, int n, int k, int lda, int ldc) {
  trans = upper_case(trans);
  if (!is_uplo(upper_case(uplo))) return 1;
  if (!is_trans(trans)) return 2;
  if (n < 0) return 3;
  if (k < 0) return 4;
  if (lda < std::max(1, trans == 'N' ? n : k)) return 7;
  if (ldc < std::max(1, n)) return 10;
  return 0;
}

int syr2k_argument_error(char uplo, char trans, int n, int k, int lda, int ldb, int ldc) {
  trans = upper_case(trans);
  const int rows = trans == 'N' ? n : k;
  if (!is_uplo(upper_case(uplo))) return 1;
  if (!is_trans(trans)) return 2;
  if (n < 0) return 3;
  if (k < 0) return 4;
  if (lda < std::max(1, rows)) return 7;
  if (ldb < std::max(1, rows)) return 9;
  if (ldc < std::max(1, n)) return 12;
  return 0;
}

int triangular_argument_error(char side, char uplo, char transa, char diag, int m, int n, int lda, int ldb) {
  side = upper_case(side);
  if (!is_side(side)) return 1;
  if (!is_uplo(upper_case(uplo))) return 2;
  if (!is_trans(upper_case(transa))) return 3;
  if (!is_diag(upper_case(diag))) return 4;
  if (m < 0) return 5;
  if (n < 0) return 6;
  if (lda < std::max(1, side == 'L' ? m : n)) return 9;
  if (ldb < std::max(1, m)) return 11;
  return 0;
}

void report_fortran_error(const char *name, int info) {
  if (const auto xerbla = reinterpret_cast<FortranXerbla>(error_symbol("xerbla_"))) {
    xerbla(name, &info, std::strlen(name));
    return;
  }
  std::fprintf(stderr, " ** On entry to %s parameter number %2d had an illegal value\n", name, info);
  std::exit(EXIT_FAILURE);
}

void report_cblas_error(bool row, int info, const char *routine, const char *message, int value) {
  if (const auto xerbla = reinterpret_cast<CblasXerbla>(error_symbol("cblas_xerbla"))) {
    int *const row_major_flag = static_cast<int *>(error_symbol("RowMajorStrg"));
    if (row_major_flag != nullptr) *row_major_flag = row ? 1 : 0;
    xerbla(info, routine, message, value);
    if (row_major_flag != nullptr) *row_major_flag = 0;
    return;
  }
  if (row) info = row_major_position(routine, info);
  std::fprintf(stderr, "Parameter %d to routine %s was incorrect\n", info, routine);
  std::fprintf(stderr, message, value);
  std::exit(-1);
}

}  // namespace fastgemm_blas
