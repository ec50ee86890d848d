// SPDX-License-Identifier: Apache-2.0
// ILAENV(ISPEC, NAME, OPTS, N1, N2, N3, N4), LAPACK's tuning function: its ISPEC = 1 answer is the block of columns
// a blocked routine (xGETRF, xPOTRF, xGEQRF, xSYTRD, ...) factors on the host before it updates the rest of the
// matrix with Level 3 calls of that depth. The reference's blocks (32 to 64) suit a CPU BLAS; a BLAS on the GPU moves
// the updated part of the matrix to the device and back on every call, for 2 * block flops per element, so at 64
// the copies set the speed and the drop-in's size rule keeps those calls on the CPU. This one answers
// FASTGEMM_LAPACK_BLOCK (a whole number from 1 to 8192; 1024 where it is unset or empty) for ISPEC = 1 where
// LAPACK's own answer is a block (more than 1), the problem is at least kOrdersPerBlock blocks on every side it
// names, and block times the largest of those sides stays within kLargestBlockTimesOrder (LAPACK sizes workspaces
// as order times block in 32-bit integers); everything else is LAPACK's own answer. A block within those bounds is
// a tuning choice, which LAPACK's routines take as they take the reference's (some cap it themselves: xORMQR and
// xGEHRD at 64): it changes how the work is cut, and so the order in which sums are rounded, not what is computed.
// LAPACK's own answer comes from the ilaenv_ that follows this library, or, where the LAPACK that asks was loaded
// out of the global scope (dlopen with RTLD_LOCAL, as Python loads its modules), from that library; where no LAPACK
// is loaded at all, from the distribution's (liblapack.so.3), and only where none can be found, the reference's
// answers for a routine it does not know. With FASTGEMM_LOG=1 every answer that differs from LAPACK's own is said
// on stderr. A program that defines ilaenv_ itself (LAPACK's test programs do) keeps its own: the executable's
// symbol comes before any preloaded library's.
#include "blas/block_setting.hpp"
#include "blas/lapack/symbols.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kDefaultBlock = 1024;
constexpr long kLargestBlock = 8192;
// The block is given to problems of at least this many blocks on each side they name.
constexpr long kOrdersPerBlock = 8;
// And where block * order stays within this (a quarter of 32-bit integers' range, for the workspace formulas that
// add to it or multiply it by small numbers).
constexpr long long kLargestBlockTimesOrder = 1LL << 29;

// gfortran's interface: the lengths of the character arguments follow the others.
using Ilaenv = int (*)(const int *, const char *, const char *, const int *, const int *, const int *, const int *,
                       size_t, size_t);

// LAPACK's ilaenv_, or null where none is loaded or loadable. Found once; not remembered while none is found.
Ilaenv lapack_ilaenv() {
  static std::atomic<Ilaenv> found{nullptr};
  Ilaenv next = found.load(std::memory_order_acquire);
  if (next != nullptr) return next;
  next = reinterpret_cast<Ilaenv>(fastgemm_lapack::lapack_symbol("ilaenv_"));
  if (next != nullptr) found.store(next, std::memory_order_release);
  return next;
}

// The reference ILAENV's answers for a routine it does not know, where no LAPACK can be found (a program that calls
// ILAENV itself with no LAPACK loaded): no block, and the fixed parameters of ilaenv.f.
int reference_unknown(int ispec, const int *n1, const int *n2) {
  switch (ispec) {
    case 1: return 1;
    case 2: return 2;
    case 3: return 0;
    case 4: return 6;
    case 5: return 2;
    case 6: return n1 != nullptr && n2 != nullptr ? static_cast<int>(static_cast<float>(std::min(*n1, *n2)) * 1.6f) : 0;
    case 7: return 1;
    case 8: return 50;
    case 9: return 25;
    case 10:
    case 11: return 1;  // IEEE arithmetic, as on every machine this library runs on
    default: return -1;
  }
}

struct Choice {
  int block = 0;  // 0: LAPACK's own throughout
  bool log = false;
};

// FASTGEMM_LAPACK_BLOCK and FASTGEMM_LOG, read at the first call.
Choice choose() {
  Choice choice;
  const char *log = std::getenv("FASTGEMM_LOG");
  choice.log = log != nullptr && std::strcmp(log, "1") == 0;
  const char *text = std::getenv("FASTGEMM_LAPACK_BLOCK");
  if (text == nullptr || *text == '\0') {
    choice.block = kDefaultBlock;
  } else {
    choice.block = static_cast<int>(fastgemm_blas::parse_block_setting(text, kLargestBlock));
    if (choice.block == 0 && choice.log)
      std::fprintf(stderr,
                   "fastgemm_lapack: FASTGEMM_LAPACK_BLOCK=%s is no whole number from 1 to 8192; LAPACK's own "
                   "blocks stay\n",
                   text);
  }
  return choice;
}

// Whether the orders the call names (N1 to N4, those not negative; at least one) are each at least kOrdersPerBlock
// blocks, and the largest times the block within kLargestBlockTimesOrder.
bool takes_block(int block, const int *const orders[4]) {
  long long largest = -1;
  for (int i = 0; i < 4; ++i) {
    if (orders[i] == nullptr || *orders[i] < 0) continue;
    if (*orders[i] < kOrdersPerBlock * block) return false;
    largest = std::max<long long>(largest, *orders[i]);
  }
  return largest >= 0 && largest * block <= kLargestBlockTimesOrder;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int ilaenv_(const int *ispec, const char *name, const char *opts,
                                                              const int *n1, const int *n2, const int *n3,
                                                              const int *n4, size_t name_length, size_t opts_length) {
  static const Choice choice = choose();
  const Ilaenv lapack = lapack_ilaenv();
  if (ispec == nullptr) return -1;
  const int own = lapack != nullptr ? lapack(ispec, name, opts, n1, n2, n3, n4, name_length, opts_length)
                                    : reference_unknown(*ispec, n1, n2);
  if (choice.block == 0 || *ispec != 1 || own <= 1) return own;
  const int *const orders[4] = {n1, n2, n3, n4};
  if (!takes_block(choice.block, orders)) return own;
  if (choice.log) {
    char routine[16] = {};
    const size_t length = name == nullptr ? 0 : std::min(name_length, sizeof routine - 1);
    if (length > 0) std::memcpy(routine, name, length);
    std::fprintf(stderr, "fastgemm_lapack: %s orders %d %d %d %d: block %d (LAPACK's own: %d)\n", routine,
                 n1 != nullptr ? *n1 : -1, n2 != nullptr ? *n2 : -1, n3 != nullptr ? *n3 : -1, n4 != nullptr ? *n4 : -1,
                 choice.block, own);
  }
  return choice.block;
}
