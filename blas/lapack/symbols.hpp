// SPDX-License-Identifier: Apache-2.0
// The routines libfastgemm_lapack.so calls that it does not define, or defines in place of LAPACK's: found at run
// time, since the library links no LAPACK or BLAS of its own (it is preloaded into programs on whichever they use).
#pragma once

namespace fastgemm_lapack {

// LAPACK's own `name` (ilaenv_, dgeqr2_, ...), never this library's: the definition that follows this library in the
// program's lookup order; where none does, the first loaded object's, in load order (a LAPACK opened out of the
// global scope, as Python opens its modules); where none is loaded, the distribution's liblapack.so.3's, opened for
// it and kept. Null where none can be found.
void *lapack_symbol(const char *name);

// The BLAS routine `name` (dgemm_, ...) as a program's LAPACK calls it: the global scope's first definition (a
// preloaded GPU BLAS before the system's), else the first loaded object's. Null where none can be found.
void *blas_symbol(const char *name);

}  // namespace fastgemm_lapack
