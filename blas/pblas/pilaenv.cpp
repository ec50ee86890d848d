// SPDX-License-Identifier: Apache-2.0
// PILAENV(ICTXT, PREC), ScaLAPACK's logical block size: PBLAS's Level 3 routines (PSGEMM, PSSYMM, PSTRSM, ...)
// step through the inner dimension in steps of it, one local BLAS call per step on the rank's whole part of C.
// ScaLAPACK's own returns 32, which suits a CPU BLAS; a BLAS on the GPU moves C to the device and back on every
// call, for 2 * 32 flops per element of C. This one returns FASTGEMM_PBLAS_BLOCK, a whole number from 1 to
// 65536, or 1024 where it is unset or empty; any other value leaves ScaLAPACK's own answer (the next pilaenv_
// of the process; 32 where there is none). Any positive block is valid for PBLAS: it changes how the products
// are cut, not what they compute. With FASTGEMM_LOG=1 the first call says which block it gives, on stderr.
// A program that defines pilaenv_ itself (PBLAS's own testers do) keeps its own: the executable's symbol comes
// before any preloaded library's.
#include "blas/block_setting.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kDefaultBlock = 1024;
constexpr long kLargestBlock = 65536;
constexpr int kReferenceBlock = 32;

using Pilaenv = int (*)(const int *, const char *);

int scalapack_block(const int *context, const char *precision) {
  static const Pilaenv next = reinterpret_cast<Pilaenv>(dlsym(RTLD_NEXT, "pilaenv_"));
  return next != nullptr ? next(context, precision) : kReferenceBlock;
}

struct Choice {
  int block = 0;  // 0: ScaLAPACK's own
  const char *source = "";
};

Choice choose() {
  const char *text = std::getenv("FASTGEMM_PBLAS_BLOCK");
  if (text == nullptr || *text == '\0') return {kDefaultBlock, "the default"};
  const long block = fastgemm_blas::parse_block_setting(text, kLargestBlock);
  if (block == 0) return {0, "FASTGEMM_PBLAS_BLOCK is no whole number from 1 to 65536"};
  return {static_cast<int>(block), "FASTGEMM_PBLAS_BLOCK"};
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int pilaenv_(const int *context, const char *precision) {
  static const Choice choice = choose();
  static const bool logged = [&] {
    const char *log = std::getenv("FASTGEMM_LOG");
    if (log == nullptr || std::strcmp(log, "1") != 0) return false;
    const int own = scalapack_block(context, precision);
    if (choice.block == 0) {
      std::fprintf(stderr, "fastgemm_pblas: %s; PBLAS's block stays ScaLAPACK's own, %d\n", choice.source, own);
    } else {
      std::fprintf(stderr, "fastgemm_pblas: PBLAS's block is %d (%s; ScaLAPACK's own: %d)\n", choice.block,
                   choice.source, own);
    }
    return true;
  }();
  (void)logged;
  return choice.block != 0 ? choice.block : scalapack_block(context, precision);
}
