// SPDX-License-Identifier: Apache-2.0
// The CPU's Level 3: the system BLAS, found at run time, for the calls the GPU does not take.
#pragma once

#include <type_traits>

#include "common.hpp"

namespace fastgemm_blas {

// The Level 3 families the drop-in defines, each in single and double precision.
enum class Family { gemm, symm, syrk, syr2k, trmm, trsm };
constexpr int family_count = 6;

// One routine of the CPU BLAS, e.g. dsymm_ and cblas_dsymm.
struct CpuRoutine {
  void *fortran = nullptr;                        // the Fortran symbol (dsymm_); nullptr: none found
  void *cblas = nullptr;                          // its CBLAS form, used only where the Fortran symbol is missing
  const char *name = "fastgemm_blas's own loop";  // the file it came from, for the log lines
};

struct CpuBlas {
  FortranSgemm sgemm = nullptr;                   // nullptr: the library found has no sgemm_
  CblasSgemm cblas_sgemm = nullptr;               // nullptr: cblas_sgemm goes through sgemm (or the own loop)
  void *library = nullptr;                        // where the error handlers are looked up after the program's own
  const char *name = "fastgemm_blas's own loop";  // for the log lines
  CpuRoutine level3[2 * family_count];            // family f in single precision at 2 f, in double at 2 f + 1
};

// Looked up on the first call that needs it, once per process: the next definition of sgemm_ or
// cblas_sgemm after this library (the BLAS the program was linked with or preloaded after it), else the
// library FASTGEMM_BLAS_FALLBACK names, else libblas.so.3 (Debian's and Ubuntu's alternatives link, which
// points at the reference BLAS, OpenBLAS, BLIS or ATLAS), else libopenblas.so.0. With none of them both
// pointers are null, and the products run in plain_sgemm. Each Level 3 routine is then looked up alone,
// its Fortran and CBLAS names together: the next definition in the process, else the library that serves
// SGEMM; a routine found in neither runs in the own loops of plain.hpp.
const CpuBlas &cpu_blas();

template <typename T>
const CpuRoutine &cpu_routine(Family family) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "single or double precision");
  return cpu_blas().level3[2 * static_cast<int>(family) + (std::is_same_v<T, double> ? 1 : 0)];
}

// A definition of NAME visible to the program (its own, or of a library it loaded globally), else the CPU
// BLAS library's: netlib's error handlers xerbla_ and cblas_xerbla, and CBLAS's RowMajorStrg.
void *error_symbol(const char *name);

// Set while this thread is inside the CPU BLAS: the reference's CBLAS computes through the Fortran
// routines (cblas_ssymm through ssymm_), which the loader resolves to this library's; that inner call goes
// straight to the CPU BLAS, never to the GPU and unlogged, so that each call the program makes is one
// line of the log. The previous value comes back at the end, for a CPU BLAS that calls back more than once.
extern thread_local bool t_in_cpu_blas;

class InCpuBlas {
 public:
  InCpuBlas() : outer_(t_in_cpu_blas) { t_in_cpu_blas = true; }
  ~InCpuBlas() { t_in_cpu_blas = outer_; }
  InCpuBlas(const InCpuBlas &) = delete;
  InCpuBlas &operator=(const InCpuBlas &) = delete;

 private:
  bool outer_;
};

}  // namespace fastgemm_blas
