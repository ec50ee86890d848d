// SPDX-License-Identifier: Apache-2.0
// The real cuBLAS beneath this library's entry points, and the statistics of the calls that pass through here.
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "interposer.hpp"

namespace fastgemm_cublas {
namespace {

thread_local int t_forwarding = 0;

// The library of the process's cuBLAS, by its soname (the major version this library was built against): a
// program that loaded it privately (Python's extension modules do) still has it under that name.
void *loaded_library(Library library) {
  static void *const cublas = dlopen("libcublas.so." CUBLAS_SONAME_MAJOR, RTLD_LAZY | RTLD_NOLOAD);
  static void *const cublas_lt = dlopen("libcublasLt.so." CUBLAS_SONAME_MAJOR, RTLD_LAZY | RTLD_NOLOAD);
  return library == Library::cublas ? cublas : cublas_lt;
}

}  // namespace

Forwarding::Forwarding() { ++t_forwarding; }
Forwarding::~Forwarding() { --t_forwarding; }
bool Forwarding::active() { return t_forwarding > 0; }

void *real_symbol(Library library, const char *name) {
  void *next = dlsym(RTLD_NEXT, name);
  if (next != nullptr) return next;
  void *loaded = loaded_library(library);
  return loaded == nullptr ? nullptr : dlsym(loaded, name);
}

namespace {

struct EntryStats {
  const char *entry;
  std::atomic<int64_t> calls[2];
  std::atomic<int64_t> host_ns[2];
};

// Every entry point's counters, printed once at exit.
class Statistics {
 public:
  ~Statistics() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (EntryStats *entry : entries_) {
      const int64_t served = entry->calls[0].load(), passed = entry->calls[1].load();
      const auto micros = [&](int route) {
        const int64_t calls = entry->calls[route].load();
        return calls == 0 ? 0.0 : entry->host_ns[route].load() / 1e3 / static_cast<double>(calls);
      };
      std::fprintf(stderr,
                   "fastgemm_cublas stats: %s: %lld calls, %lld to fastgemm (%.1f us of host time each), %lld to "
                   "cuBLAS (%.1f us each)\n",
                   entry->entry, static_cast<long long>(served + passed), static_cast<long long>(served), micros(0),
                   static_cast<long long>(passed), micros(1));
    }
  }
  EntryStats *find(const char *entry) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (EntryStats *known : entries_)
      if (known->entry == entry) return known;
    auto *added = new EntryStats{entry, {{0}, {0}}, {{0}, {0}}};  // lives to the process's end
    entries_.push_back(added);
    return added;
  }

 private:
  std::mutex mutex_;
  std::vector<EntryStats *> entries_;
};

Statistics &statistics() {
  static Statistics instance;
  return instance;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

CallRecord::CallRecord(const char *entry) : entry_(entry) {
  if (settings().stats) start_ns_ = now_ns();
}

CallRecord::~CallRecord() {
  if (!settings().stats) return;
  const int64_t elapsed = now_ns() - start_ns_;
  EntryStats *entry = statistics().find(entry_);
  const int route = route_ == Route::fastgemm ? 0 : 1;
  entry->calls[route].fetch_add(1, std::memory_order_relaxed);
  entry->host_ns[route].fetch_add(elapsed, std::memory_order_relaxed);
}

}  // namespace fastgemm_cublas
