// SPDX-License-Identifier: Apache-2.0
#include "cpu_blas.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

extern "C" void sgemm_(const char *, const char *, const int *, const int *, const int *, const float *, const float *,
                       const int *, const float *, const int *, const float *, float *, const int *, size_t, size_t);
extern "C" void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *,
                            int);

namespace fastgemm_blas {
namespace {

// The file a symbol was found in, for the log; the library's handle, for the error handlers.
void describe(const void *symbol, CpuBlas *blas) {
  Dl_info info = {};
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return;
  blas->name = info.dli_fname;
  if (blas->library == nullptr) blas->library = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
}

// This library's own entry points are never the CPU's SGEMM: FASTGEMM_BLAS_FALLBACK naming
// libfastgemm_blas.so itself would otherwise call itself forever.
bool is_own(const void *symbol) {
  return symbol == reinterpret_cast<const void *>(&::sgemm_) ||
         symbol == reinterpret_cast<const void *>(&::cblas_sgemm);
}

bool take(void *sgemm, void *cblas, CpuBlas *blas) {
  if (is_own(sgemm)) sgemm = nullptr;
  if (is_own(cblas)) cblas = nullptr;
  if (sgemm == nullptr && cblas == nullptr) return false;
  blas->sgemm = reinterpret_cast<FortranSgemm>(sgemm);
  blas->cblas_sgemm = reinterpret_cast<CblasSgemm>(cblas);
  return true;
}

// Local: the library's symbols stay out of the program's scope, where they would take the place of
// definitions the program does not expect.
bool take_library(const char *file, CpuBlas *blas, const char **error) {
  void *library = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    *error = dlerror();
    return false;
  }
  if (!take(dlsym(library, "sgemm_"), dlsym(library, "cblas_sgemm"), blas)) {
    *error = "it defines neither sgemm_ nor cblas_sgemm";
    dlclose(library);
    return false;
  }
  blas->library = library;
  describe(blas->sgemm != nullptr ? reinterpret_cast<void *>(blas->sgemm) : reinterpret_cast<void *>(blas->cblas_sgemm),
           blas);
  return true;
}

CpuBlas find_cpu_blas() {
  CpuBlas blas;
  const bool log = settings().log;
  const char *how = nullptr;
  if (take(dlsym(RTLD_NEXT, "sgemm_"), dlsym(RTLD_NEXT, "cblas_sgemm"), &blas)) {
    describe(blas.sgemm != nullptr ? reinterpret_cast<void *>(blas.sgemm) : reinterpret_cast<void *>(blas.cblas_sgemm),
             &blas);
    how = "the next definition in the process";
  }
  const char *fallback = settings().fallback;
  if (how == nullptr && fallback != nullptr && *fallback != '\0') {
    const char *error = nullptr;
    if (take_library(fallback, &blas, &error))
      how = "FASTGEMM_BLAS_FALLBACK";
    else
      std::fprintf(stderr, "fastgemm_blas: FASTGEMM_BLAS_FALLBACK=%s is not used: %s\n", fallback, error);
  }
  for (const char *file : {"libblas.so.3", "libopenblas.so.0"}) {
    const char *error = nullptr;
    if (how == nullptr && take_library(file, &blas, &error)) how = file;
  }
  if (how == nullptr) {
    // Said whether or not FASTGEMM_LOG is set: the loop is correct but many times slower than any BLAS,
    // and a program that loses its BLAS should not lose it silently.
    std::fprintf(stderr,
                 "fastgemm_blas: no system BLAS (no sgemm_ after this library, FASTGEMM_BLAS_FALLBACK %s, no "
                 "libblas.so.3 or libopenblas.so.0 the loader finds): the CPU's SGEMM products run in "
                 "fastgemm_blas's own loop, which is slow\n",
                 fallback != nullptr && *fallback != '\0' ? "unusable" : "unset");
    return blas;
  }
  if (log) std::fprintf(stderr, "fastgemm_blas: the CPU's SGEMM is %s (%s)\n", blas.name, how);
  return blas;
}

}  // namespace

const CpuBlas &cpu_blas() {
  static const CpuBlas found = find_cpu_blas();
  return found;
}

void plain_sgemm(bool a_trans, bool b_trans, int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                 const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      float sum = 0.0f;
      for (int64_t l = 0; l < k; ++l)
        sum += (a_trans ? A[i * lda + l] : A[l * lda + i]) * (b_trans ? B[l * ldb + j] : B[j * ldb + l]);
      float &c = C[j * ldc + i];
      c = beta == 0.0f ? alpha * sum : alpha * sum + beta * c;
    }
}

void *error_symbol(const char *name) {
  if (void *symbol = dlsym(RTLD_DEFAULT, name)) return symbol;
  const CpuBlas &blas = cpu_blas();
  return blas.library != nullptr ? dlsym(blas.library, name) : nullptr;
}

}  // namespace fastgemm_blas
