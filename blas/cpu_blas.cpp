// SPDX-License-Identifier: Apache-2.0
#include "cpu_blas.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace fastgemm_blas {
namespace {

// The file a symbol was found in, for the log; the library's handle, for the error handlers.
void describe(const void *symbol, CpuBlas *blas) {
  Dl_info info = {};
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return;
  blas->name = info.dli_fname;
  if (blas->library == nullptr) blas->library = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
}

// This library's own entry points are never the CPU's: FASTGEMM_BLAS_FALLBACK naming libfastgemm_blas.so
// itself would otherwise call itself forever. Every symbol of this library's file is its own (the file is
// told by a function of internal linkage, which no other definition can take the place of).
bool is_own(const void *symbol) {
  if (symbol == nullptr) return false;
  static const void *const own_base = [] {
    Dl_info info = {};
    return dladdr(reinterpret_cast<const void *>(&is_own), &info) != 0 ? info.dli_fbase : nullptr;
  }();
  Dl_info info = {};
  return dladdr(symbol, &info) != 0 && info.dli_fbase == own_base;
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

// The routines of CpuBlas::level3, in its order.
constexpr const char *level3_names[2 * family_count] = {"sgemm",  "dgemm",  "ssymm", "dsymm", "ssyrk", "dsyrk",
                                                        "ssyr2k", "dsyr2k", "strmm", "dtrmm", "strsm", "dtrsm"};

// Both names of ROUTINE (dsymm_ and cblas_dsymm) from one place, HANDLE's definitions, so that a call and
// its CBLAS form are one library's; false when it defines neither (its own are not counted).
bool take_routine(void *handle, const char *routine, CpuRoutine *found) {
  char fortran[16], cblas[24];
  std::snprintf(fortran, sizeof fortran, "%s_", routine);
  std::snprintf(cblas, sizeof cblas, "cblas_%s", routine);
  void *fortran_symbol = dlsym(handle, fortran), *cblas_symbol = dlsym(handle, cblas);
  if (is_own(fortran_symbol)) fortran_symbol = nullptr;
  if (is_own(cblas_symbol)) cblas_symbol = nullptr;
  if (fortran_symbol == nullptr && cblas_symbol == nullptr) return false;
  found->fortran = fortran_symbol;
  found->cblas = cblas_symbol;
  Dl_info info = {};
  if (dladdr(fortran_symbol != nullptr ? fortran_symbol : cblas_symbol, &info) != 0 && info.dli_fname != nullptr)
    found->name = info.dli_fname;
  return true;
}

// SGEMM's entry is the one found above; every other routine is looked up alone: the next definition in
// the process, else the library that serves SGEMM (and what it depends on).
void find_level3(CpuBlas *blas) {
  blas->level3[0].fortran = reinterpret_cast<void *>(blas->sgemm);
  blas->level3[0].cblas = reinterpret_cast<void *>(blas->cblas_sgemm);
  blas->level3[0].name = blas->name;
  for (int i = 1; i < 2 * family_count; ++i)
    if (!take_routine(RTLD_NEXT, level3_names[i], &blas->level3[i]) && blas->library != nullptr)
      (void)take_routine(blas->library, level3_names[i], &blas->level3[i]);
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
    find_level3(&blas);
    return blas;
  }
  if (log) std::fprintf(stderr, "fastgemm_blas: the CPU's SGEMM is %s (%s)\n", blas.name, how);
  find_level3(&blas);
  return blas;
}

}  // namespace

thread_local bool t_in_cpu_blas = false;

const CpuBlas &cpu_blas() {
  static const CpuBlas found = find_cpu_blas();
  return found;
}

void *error_symbol(const char *name) {
  if (void *symbol = dlsym(RTLD_DEFAULT, name)) return symbol;
  const CpuBlas &blas = cpu_blas();
  return blas.library != nullptr ? dlsym(blas.library, name) : nullptr;
}

}  // namespace fastgemm_blas
