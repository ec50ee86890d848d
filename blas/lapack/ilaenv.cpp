// SPDX-License-Identifier: Apache-2.0
// ILAENV(ISPEC, NAME, OPTS, N1, N2, N3, N4), LAPACK's tuning function: its ISPEC = 1 answer is the block of columns
// a blocked routine (xGETRF, xPOTRF, xGEQRF, xSYTRD, ...) factors on the host before it updates the rest of the
// matrix with Level 3 calls of that depth. The reference's blocks (32 to 64) suit a CPU BLAS; a BLAS on the GPU moves
// the updated part of the matrix to the device and back on every call, for 2 * block flops per element, so at 64
// the copies set the speed and the drop-in's size rule keeps those calls on the CPU. This one answers
// FASTGEMM_LAPACK_BLOCK (a whole number from 1 to 65536; 1024 where it is unset or empty) for ISPEC = 1 where
// LAPACK's own answer is a block (more than 1) and the problem is at least kOrdersPerBlock blocks on every side it
// names, so that the factorizations on the host stay a small part of the work; everything else is LAPACK's own
// answer (the next ilaenv_ of the process). A block is a tuning choice, valid for LAPACK at any value: it changes how
// the work is cut, and so the order in which sums are rounded, not what is computed. With FASTGEMM_LOG=1 every
// answer that differs from LAPACK's own is said on stderr. A program that defines ilaenv_ itself (LAPACK's test
// programs do) keeps its own: the executable's symbol comes before any preloaded library's.
#include <dlfcn.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kDefaultBlock = 1024;
constexpr long kLargestBlock = 65536;
// The block is given to problems of at least this many blocks on each side they name.
constexpr long kOrdersPerBlock = 8;

// gfortran's interface: the lengths of the character arguments follow the others.
using Ilaenv = int (*)(const int *, const char *, const char *, const int *, const int *, const int *, const int *,
                       size_t, size_t);

Ilaenv next_ilaenv() {
  static const Ilaenv next = reinterpret_cast<Ilaenv>(dlsym(RTLD_NEXT, "ilaenv_"));
  return next;
}

// FASTGEMM_LAPACK_BLOCK as a block, or 0 where it is no whole number from 1 to kLargestBlock.
long parse_block(const char *text) {
  if (text[0] < '1' || text[0] > '9' || std::strlen(text) > 5) return 0;
  long value = 0;
  for (const char *p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return 0;
    value = value * 10 + (*p - '0');
  }
  return value <= kLargestBlock ? value : 0;
}

struct Choice {
  int block = 0;  // 0: LAPACK's own throughout
  bool log = false;
};

Choice choose() {
  Choice choice;
  const char *log = std::getenv("FASTGEMM_LOG");
  choice.log = log != nullptr && std::strcmp(log, "1") == 0;
  const char *text = std::getenv("FASTGEMM_LAPACK_BLOCK");
  if (text == nullptr || *text == '\0') {
    choice.block = kDefaultBlock;
  } else {
    choice.block = static_cast<int>(parse_block(text));
    if (choice.block == 0 && choice.log)
      std::fprintf(stderr,
                   "fastgemm_lapack: FASTGEMM_LAPACK_BLOCK=%s is no whole number from 1 to 65536; LAPACK's own "
                   "blocks stay\n",
                   text);
  }
  return choice;
}

// Whether every order the call names (N1 to N4, those not -1) is at least kOrdersPerBlock blocks; false where it
// names none.
bool large_enough(int block, const int *const orders[4]) {
  bool named = false;
  for (int i = 0; i < 4; ++i) {
    if (orders[i] == nullptr || *orders[i] < 0) continue;
    named = true;
    if (*orders[i] < kOrdersPerBlock * block) return false;
  }
  return named;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int ilaenv_(const int *ispec, const char *name, const char *opts,
                                                              const int *n1, const int *n2, const int *n3,
                                                              const int *n4, size_t name_length, size_t opts_length) {
  static const Choice choice = choose();
  const Ilaenv next = next_ilaenv();
  // Without a LAPACK behind this library there is no answer to give but the reference's for an unknown routine.
  const int own = next != nullptr ? next(ispec, name, opts, n1, n2, n3, n4, name_length, opts_length) : 1;
  if (choice.block == 0 || ispec == nullptr || *ispec != 1 || own <= 1) return own;
  const int *const orders[4] = {n1, n2, n3, n4};
  if (!large_enough(choice.block, orders)) return own;
  if (choice.log) {
    char routine[16] = {};
    const size_t length = name == nullptr ? 0 : (name_length < sizeof routine - 1 ? name_length : sizeof routine - 1);
    if (length > 0) std::memcpy(routine, name, length);
    std::fprintf(stderr, "fastgemm_lapack: %s orders %d %d %d %d: block %d (LAPACK's own: %d)\n", routine,
                 n1 != nullptr ? *n1 : -1, n2 != nullptr ? *n2 : -1, n3 != nullptr ? *n3 : -1, n4 != nullptr ? *n4 : -1,
                 choice.block, own);
  }
  return choice.block;
}
