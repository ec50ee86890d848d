// SPDX-License-Identifier: Apache-2.0
#include "host/mappings.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace fastgemm::detail {
namespace {

// The PROCMAP_QUERY ioctl's argument (include/uapi/linux/fs.h, Linux 6.11), declared here so that the build
// does not depend on the headers' age; the kernel takes the struct's size from its first field, and an older
// kernel answers ENOTTY (or EINVAL), after which the text is parsed.
struct ProcmapQuery {
  uint64_t size;
  uint64_t query_flags;
  uint64_t query_addr;
  uint64_t vma_start;
  uint64_t vma_end;
  uint64_t vma_flags;
  uint64_t vma_page_size;
  uint64_t vma_offset;
  uint64_t inode;
  uint32_t dev_major;
  uint32_t dev_minor;
  uint32_t vma_name_size;
  uint32_t build_id_size;
  uint64_t vma_name_addr;
  uint64_t build_id_addr;
};
static_assert(sizeof(ProcmapQuery) == 104, "the kernel's struct procmap_query is 104 bytes");
constexpr uint64_t kQueryReadable = 0x01, kQueryWritable = 0x02;
constexpr unsigned long kProcmapQuery = _IOWR('f', 17, ProcmapQuery);

}  // namespace

Mappings::Mappings(Method method) : use_query_(method == Method::query_then_parse) {
  fd_ = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
}

Mappings::~Mappings() {
  if (fd_ >= 0) ::close(fd_);
}

bool Mappings::query(uintptr_t address, Mapping *mapping, bool *answered) {
  ProcmapQuery q = {};
  q.size = sizeof q;
  q.query_addr = address;  // no flags: the mapping that covers the address, or ENOENT
  *answered = true;
  if (::ioctl(fd_, kProcmapQuery, &q) == 0) {
    // An answer that does not hold the address is not one this code understands: the text decides instead.
    if (q.vma_start <= address && address < q.vma_end) {
      mapping->begin = static_cast<uintptr_t>(q.vma_start);
      mapping->end = static_cast<uintptr_t>(q.vma_end);
      mapping->access =
          ((q.vma_flags & kQueryReadable) != 0 ? kRead : 0u) | ((q.vma_flags & kQueryWritable) != 0 ? kWrite : 0u);
      return true;
    }
  } else if (errno == ENOENT) {
    return false;
  }
  *answered = false;
  return false;
}

bool Mappings::parse() {
  parsed_ = true;
  std::string text;
  char buffer[1 << 14];
  if (::lseek(fd_, 0, SEEK_SET) != 0) return false;
  for (;;) {
    const ssize_t got = ::read(fd_, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return false;
    if (got == 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  // Each line: "begin-end perms offset device inode [path]", addresses in hexadecimal, perms "rwxp" with '-'.
  const char *cursor = text.c_str();
  while (*cursor != '\0') {
    char *after = nullptr;
    Mapping mapping;
    mapping.begin = static_cast<uintptr_t>(std::strtoull(cursor, &after, 16));
    if (*after == '-') {
      mapping.end = static_cast<uintptr_t>(std::strtoull(after + 1, &after, 16));
      if (after[0] == ' ' && after[1] != '\0' && after[2] != '\0') {
        mapping.access = (after[1] == 'r' ? kRead : 0u) | (after[2] == 'w' ? kWrite : 0u);
        if (mapping.begin < mapping.end) list_.push_back(mapping);
      }
    }
    const char *line_end = std::strchr(cursor, '\n');
    if (line_end == nullptr) break;
    cursor = line_end + 1;
  }
  std::sort(list_.begin(), list_.end(), [](const Mapping &x, const Mapping &y) { return x.begin < y.begin; });
  return true;
}

bool Mappings::find(uintptr_t address, Mapping *mapping) {
  if (use_query_) {
    bool answered = false;
    const bool found = query(address, mapping, &answered);
    if (answered) return found;
    use_query_ = false;  // a kernel without the ioctl: the text, for the rest of the call
  }
  if (!parsed_ && !parse()) {
    blind_ = true;  // unreadable text: nothing is known, nothing is refused
    list_.clear();
  }
  auto after = std::upper_bound(list_.begin(), list_.end(), address,
                                [](uintptr_t value, const Mapping &m) { return value < m.begin; });
  if (after == list_.begin()) return false;
  --after;
  if (address >= after->end) return false;
  *mapping = *after;
  return true;
}

uintptr_t Mappings::first_denied(const ByteRegion &region, unsigned access) {
  if (fd_ < 0 || region.lines <= 0 || region.length_bytes <= 0) return 0;
  // A run of adjacent mappings that all allow the access, [run_begin, run_end): lines inside it need no query.
  uintptr_t run_begin = 0, run_end = 0;
  // Extends the run over the mapping holding `address` (at the run's end or outside it); false when the address
  // may not be accessed.
  const auto cover = [&](uintptr_t address) -> bool {
    Mapping mapping;
    if (!find(address, &mapping) || (mapping.access & access) != access) return blind_;
    if (mapping.begin != run_end || address < run_begin) run_begin = mapping.begin;
    run_end = mapping.end;
    return true;
  };
  const auto line_begin = [&](int64_t line) {
    return region.begin + static_cast<uintptr_t>(line * region.stride_bytes);
  };
  // Whole span first: an operand in one run of mappings, its usual case, costs a query per mapping.
  const uintptr_t span_end = line_begin(region.lines - 1) + static_cast<uintptr_t>(region.length_bytes);
  for (uintptr_t address = region.begin; address < span_end; address = run_end)
    if (!cover(address) || blind_) break;
  if (blind_) return 0;
  if (run_begin <= region.begin && span_end <= run_end) return 0;
  // Otherwise line by line, so that gaps between lines that no line touches are not held against the operand.
  run_begin = run_end = 0;
  for (int64_t line = 0; line < region.lines; ++line) {
    const uintptr_t begin = line_begin(line), end = begin + static_cast<uintptr_t>(region.length_bytes);
    for (uintptr_t address = begin; address < end;) {
      if (address >= run_begin && address < run_end) {
        address = run_end;
        continue;
      }
      if (!cover(address)) return address;
      if (blind_) return 0;
      address = run_end;
    }
  }
  return 0;
}

Status check_mapped(Mappings &mappings, const char *operand, const void *data, const ByteRegion &region,
                    unsigned access) {
  const uintptr_t denied = mappings.first_denied(region, access);
  if (denied == 0) return Status::success();
  char message[256];
  std::snprintf(message, sizeof message,
                "%s = %p reaches memory the process cannot %s at 0x%" PRIxPTR " (byte %" PRIuPTR
                " of its extent): an operand shorter than its sizes and leading dimension",
                operand, data, (access & kWrite) != 0 ? "write" : "read", denied,
                denied - reinterpret_cast<uintptr_t>(data));
  return Status::failure(StatusCode::invalid_value, message);
}

}  // namespace fastgemm::detail
