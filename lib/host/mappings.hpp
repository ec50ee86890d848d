// SPDX-License-Identifier: Apache-2.0
// Whether fg_sgemm_host's pageable operands lie in memory the process may read (A, B) and write (C), checked
// against the process's mappings before anything is copied, so that an operand shorter than its extents is an
// error naming it instead of a fault in a copy thread.
//
// The method: the kernel's own list of mappings (/proc/self/maps), asked per mapping with the PROCMAP_QUERY ioctl
// (Linux 6.11 and later: one system call returns the mapping holding an address and its permissions), otherwise
// read and parsed once per call. Either costs a few system calls per operand, however large it is: an operand
// mostly lies in one mapping, or in a few adjacent ones, and its lines are then checked against that run in
// memory. A probe per page (process_vm_readv, a write to a pipe) would cost a system call's share per 4 KiB page,
// as much as copying the page; mincore says nothing of permissions (a PROT_NONE page is mapped); and catching
// SIGSEGV in the copy threads would take over a process-wide handler that belongs to the application.
// Without /proc (a sandbox that hides it) nothing is checked, as before.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace fastgemm::detail {

enum Access : unsigned { kRead = 1, kWrite = 2 };

// `lines` runs of `length_bytes` bytes, `stride_bytes` apart, from `begin`.
struct ByteRegion {
  uintptr_t begin = 0;
  int64_t stride_bytes = 0, lines = 0, length_bytes = 0;
};

// The process's mappings as seen during one call. Used by one thread.
class Mappings {
 public:
  enum class Method { query_then_parse, parse };
  // `parse` skips the ioctl (tests compare the two methods).
  explicit Mappings(Method method = Method::query_then_parse);
  ~Mappings();
  Mappings(const Mappings &) = delete;
  Mappings &operator=(const Mappings &) = delete;

  // False when the mappings cannot be read (no /proc): nothing can be checked.
  bool available() const { return fd_ >= 0; }

  // 0 when every byte of the region may be accessed with `access` (kRead, kWrite or both); otherwise the first
  // address, lowest line first, that may not. The answer for a region whose mappings change meanwhile is that of
  // one of the states it went through.
  uintptr_t first_denied(const ByteRegion &region, unsigned access);

 private:
  struct Mapping {
    uintptr_t begin = 0, end = 0;
    unsigned access = 0;
  };
  // The mapping holding `address`; false when none does.
  bool find(uintptr_t address, Mapping *mapping);
  bool query(uintptr_t address, Mapping *mapping, bool *answered);
  bool parse();

  int fd_ = -1;
  bool use_query_ = true;
  bool parsed_ = false;
  bool blind_ = false;         // the text could not be read: every address is taken as allowed
  std::vector<Mapping> list_;  // sorted, from the parsed text
};

// Success when the operand's region may be accessed (or the mappings cannot be read); otherwise invalid_value
// naming the operand and the first address it may not read (kRead) or write (kWrite) (the C layer puts the
// function's name before the message).
Status check_mapped(Mappings &mappings, const char *operand, const void *data, const ByteRegion &region,
                    unsigned access);

}  // namespace fastgemm::detail
