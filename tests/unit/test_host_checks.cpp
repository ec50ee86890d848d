// SPDX-License-Identifier: Apache-2.0
// fg_sgemm_host's checks that need no device: which failure of a call's parts the call reports, and whether pageable
// operands lie in memory the process may read and write (mmap and mprotect stand in for short operands).
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "host/failure.hpp"
#include "host/mappings.hpp"

using namespace fastgemm::detail;

TEST_CASE("host: a call reports the failure that stopped its other parts, whatever its message", "[host_checks]") {
  const Status aborted = aborted_by_other_failure();
  CHECK(aborted.code == StatusCode::aborted);
  const Status cause = Status::failure(StatusCode::cuda_error, "cudaMemcpy2DAsync: invalid argument", 1);
  // The parts in the order they are read: the cause may come after any number of aborts.
  const Status reported = first_failure({aborted, Status::success(), cause, aborted});
  CHECK(reported.code == StatusCode::cuda_error);
  CHECK(reported.message == cause.message);
  CHECK(reported.cuda_error == 1);
  // A failure worded as an abort is still a cause: only the code tells the two apart.
  const Status same_words = Status::failure(StatusCode::internal_error, aborted.message);
  CHECK(first_failure({aborted, same_words}).code == StatusCode::internal_error);
  // Of two causes, the first in the parts' order.
  const Status second = Status::failure(StatusCode::alloc_failed, "no host thread could be started");
  CHECK(first_failure(std::vector<Status>{aborted, second, cause}).code == StatusCode::alloc_failed);
  // Aborts alone are not a success.
  CHECK(first_failure({aborted, Status::success()}).code == StatusCode::aborted);
  CHECK(first_failure({Status::success(), Status::success()}).ok());
  CHECK(first_failure(std::vector<Status>{}).ok());
}

namespace {

// Pages of anonymous memory, unmapped when the test ends.
class Pages {
 public:
  explicit Pages(size_t count) : bytes_(count * page_size()) {
    void *memory = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(memory != MAP_FAILED);
    base_ = static_cast<char *>(memory);
  }
  ~Pages() { munmap(base_, bytes_); }
  Pages(const Pages &) = delete;
  Pages &operator=(const Pages &) = delete;
  static size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
  char *page(size_t index) const { return base_ + index * page_size(); }
  uintptr_t address(size_t index) const { return reinterpret_cast<uintptr_t>(page(index)); }

 private:
  size_t bytes_;
  char *base_ = nullptr;
};

ByteRegion lines_from(const char *begin, int64_t stride, int64_t lines, int64_t length) {
  return ByteRegion{reinterpret_cast<uintptr_t>(begin), stride, lines, length};
}

}  // namespace

TEST_CASE("host: operands are checked against the process's mappings, by either method", "[host_checks]") {
  const int64_t page = static_cast<int64_t>(Pages::page_size());
  Pages pages(8);
  // 0-2 read-write, 3 inaccessible, 4 read-only, 5-7 read-write.
  REQUIRE(mprotect(pages.page(3), Pages::page_size(), PROT_NONE) == 0);
  REQUIRE(mprotect(pages.page(4), Pages::page_size(), PROT_READ) == 0);
  for (Mappings::Method method : {Mappings::Method::query_then_parse, Mappings::Method::parse}) {
    INFO("method " << (method == Mappings::Method::parse ? "parse" : "query, then parse"));
    Mappings mappings(method);
    REQUIRE(mappings.available());
    // Inside pages 0-2, dense or strided.
    CHECK(mappings.first_denied(lines_from(pages.page(0), page, 3, page), kRead | kWrite) == 0);
    CHECK(mappings.first_denied(lines_from(pages.page(0) + 100, 1000, 10, 64), kRead | kWrite) == 0);
    // A region one float longer than pages 0-2: the first byte of page 3 is the first denied.
    CHECK(mappings.first_denied(lines_from(pages.page(0), 3 * page + 4, 1, 3 * page + 4), kRead) == pages.address(3));
    // Lines of 16 bytes, one per page from page 1: the third lies in page 3.
    CHECK(mappings.first_denied(lines_from(pages.page(1) + 8, page, 5, 16), kRead) == pages.address(3) + 8);
    // Lines that skip page 3: pages 2 and 5 only, the gap untouched.
    CHECK(mappings.first_denied(lines_from(pages.page(2), 3 * page, 2, page), kRead | kWrite) == 0);
    // Page 4 reads but does not write.
    CHECK(mappings.first_denied(lines_from(pages.page(4), page, 1, page), kRead) == 0);
    CHECK(mappings.first_denied(lines_from(pages.page(4), page, 1, page), kWrite) == pages.address(4));
    CHECK(mappings.first_denied(lines_from(pages.page(5) - 4, page, 1, 8), kRead | kWrite) == pages.address(5) - 4);
    // Pages 5-7 after page 4: readable throughout from 4, writable only from 5.
    CHECK(mappings.first_denied(lines_from(pages.page(4), 4 * page, 1, 4 * page), kRead) == 0);
    // Nothing to check.
    CHECK(mappings.first_denied(lines_from(pages.page(3), page, 0, page), kRead) == 0);
  }
  // Memory no longer mapped.
  REQUIRE(munmap(pages.page(7), Pages::page_size()) == 0);
  Mappings mappings;
  CHECK(mappings.first_denied(lines_from(pages.page(6), page, 2, page), kRead) == pages.address(7));
  REQUIRE(mmap(pages.page(7), Pages::page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
               0) == pages.page(7));
}

TEST_CASE("host: an operand that reaches memory it may not use is named, with the first address", "[host_checks]") {
  const int64_t page = static_cast<int64_t>(Pages::page_size());
  Pages pages(3);
  REQUIRE(mprotect(pages.page(2), Pages::page_size(), PROT_NONE) == 0);
  // B ends one page early: 2 pages of floats where its extents ask for 2 pages and one float.
  float *b = reinterpret_cast<float *>(pages.page(0));
  Mappings mappings;
  CHECK(check_mapped(mappings, "B", b, lines_from(pages.page(0), 2 * page, 1, 2 * page), kRead).ok());
  const Status refused =
      check_mapped(mappings, "B", b, lines_from(pages.page(0), 2 * page + 4, 1, 2 * page + 4), kRead);
  CHECK(refused.code == StatusCode::invalid_value);
  INFO(refused.message);
  CHECK(refused.message.find("B = ") == 0);
  char address[32];
  std::snprintf(address, sizeof address, "0x%" PRIxPTR, pages.address(2));
  CHECK(refused.message.find(std::string("cannot read at ") + address) != std::string::npos);
  CHECK(refused.message.find("byte " + std::to_string(2 * page)) != std::string::npos);
  const Status unwritable = check_mapped(mappings, "C", b, lines_from(pages.page(1), page, 2, 8), kRead | kWrite);
  CHECK(unwritable.message.find("C = ") != std::string::npos);
  CHECK(unwritable.message.find("cannot write") != std::string::npos);
}

TEST_CASE("host: the mappings check costs a few system calls whatever the operand's size", "[host_checks]") {
  // 2048 x 2048 floats and 16384 x 16384 / 16 (64 MiB), as fg_sgemm_host's pageable operands: the check must stay a
  // small part of copying them (2048^3 moves 64 MiB, over a millisecond).
  for (size_t floats : {size_t{2048} * 2048, size_t{16} << 20}) {
    std::vector<float> operand(floats, 1.0f);
    const ByteRegion region = lines_from(reinterpret_cast<const char *>(operand.data()), 2048 * 4,
                                         static_cast<int64_t>(floats / 2048), 2048 * 4);
    const auto start = std::chrono::steady_clock::now();
    constexpr int kRepeats = 20;
    for (int repeat = 0; repeat < kRepeats; ++repeat) {
      Mappings mappings;
      CHECK(mappings.first_denied(region, kRead | kWrite) == 0);
    }
    const double micros =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / kRepeats;
    INFO(floats << " floats: " << micros << " us a check");
    // Generous for a loaded machine: the check itself is a few microseconds.
    CHECK(micros < 500.0);
  }
}
