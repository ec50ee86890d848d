// SPDX-License-Identifier: Apache-2.0
#include "profile.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu.hpp"
#include "text.hpp"

namespace bench {
namespace {

// The signal handler's view: one profile samples at a time.
std::atomic<uintptr_t *> g_buffer{nullptr};
std::atomic<size_t> g_next{0};
size_t g_capacity = 0;

uintptr_t program_counter(const ucontext_t *context) {
#if defined(__x86_64__)
  return static_cast<uintptr_t>(context->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<uintptr_t>(context->uc_mcontext.pc);
#else
  (void)context;
  return 0;
#endif
}

void on_sample(int, siginfo_t *, void *context) {
  uintptr_t *buffer = g_buffer.load(std::memory_order_relaxed);
  if (buffer == nullptr) return;
  const size_t slot = g_next.fetch_add(1, std::memory_order_relaxed);
  if (slot < g_capacity) buffer[slot] = program_counter(static_cast<const ucontext_t *>(context));
}

std::string demangled(const char *name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void *)> text(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  std::string result = status == 0 && text ? text.get() : name;
  // Long template names say little more than their first part.
  if (result.size() > 90) result = result.substr(0, 87) + "...";
  return result;
}

// The functions an object's full symbol table (.symtab) lists, by address: what names the library's internal
// functions, which no exported symbol covers. Empty for a stripped object.
class FunctionTable {
 public:
  explicit FunctionTable(const char *path) {
    const int file = open(path, O_RDONLY | O_CLOEXEC);
    if (file < 0) return;
    struct stat info = {};
    if (fstat(file, &info) == 0 && static_cast<size_t>(info.st_size) >= sizeof(ElfW(Ehdr))) {
      const size_t size = static_cast<size_t>(info.st_size);
      void *mapped = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file, 0);
      if (mapped != MAP_FAILED) {
        read(static_cast<const char *>(mapped), size);
        munmap(mapped, size);
      }
    }
    close(file);
    std::sort(functions_.begin(), functions_.end());
  }

  // The function holding an address (`pc`, `base` the object's load base), or nullptr.
  const std::string *find(uintptr_t pc, uintptr_t base) const {
    const uintptr_t address = absolute_ ? pc : pc - base;
    auto after =
        std::upper_bound(functions_.begin(), functions_.end(), std::make_tuple(address, SIZE_MAX, std::string()));
    if (after == functions_.begin()) return nullptr;
    const auto &[start, size, name] = *(after - 1);
    return address < start + size ? &name : nullptr;
  }

 private:
  void read(const char *image, size_t size) {
    ElfW(Ehdr) header;
    std::memcpy(&header, image, sizeof header);
    if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_shentsize != sizeof(ElfW(Shdr)) ||
        header.e_shoff + size_t{header.e_shnum} * sizeof(ElfW(Shdr)) > size)
      return;
    absolute_ = header.e_type == ET_EXEC;  // symbols of a fixed-address executable hold run-time addresses
    const auto *sections = reinterpret_cast<const ElfW(Shdr) *>(image + header.e_shoff);
    for (size_t i = 0; i < header.e_shnum; ++i) {
      const ElfW(Shdr) &table = sections[i];
      if (table.sh_type != SHT_SYMTAB || table.sh_link >= header.e_shnum) continue;
      const ElfW(Shdr) &names = sections[table.sh_link];
      if (table.sh_offset + table.sh_size > size || names.sh_offset + names.sh_size > size) continue;
      const auto *symbols = reinterpret_cast<const ElfW(Sym) *>(image + table.sh_offset);
      for (size_t j = 0; j < table.sh_size / sizeof(ElfW(Sym)); ++j) {
        const ElfW(Sym) &symbol = symbols[j];
        if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_size == 0 || symbol.st_name >= names.sh_size)
          continue;
        const char *name = image + names.sh_offset + symbol.st_name;
        functions_.emplace_back(symbol.st_value, symbol.st_size,
                                std::string(name, strnlen(name, names.sh_size - symbol.st_name)));
      }
    }
  }

  std::vector<std::tuple<uintptr_t, size_t, std::string>> functions_;
  bool absolute_ = false;
};

const FunctionTable &functions_of(const char *path) {
  static std::map<std::string, std::unique_ptr<FunctionTable>> tables;
  std::unique_ptr<FunctionTable> &table = tables[path];
  if (!table) table = std::make_unique<FunctionTable>(path);
  return *table;
}

// Where an address lies: its object and the function holding it, by the exported symbols or the object's
// own symbol table.
std::pair<std::string, std::string> place(uintptr_t pc) {
  Dl_info info = {};
  void *entry = nullptr;  // the symbol's ElfW(Sym)
  if (dladdr1(reinterpret_cast<void *>(pc), &info, &entry, RTLD_DL_SYMENT) == 0 || info.dli_fname == nullptr)
    return {"[unknown]", format("0x%llx", static_cast<unsigned long long>(pc))};
  std::string object = info.dli_fname;
  const size_t slash = object.rfind('/');
  if (slash != std::string::npos) object = object.substr(slash + 1);
  const auto start = reinterpret_cast<uintptr_t>(info.dli_saddr);
  const auto *symbol = static_cast<const ElfW(Sym) *>(entry);
  if (info.dli_sname != nullptr && symbol != nullptr && pc >= start && pc < start + symbol->st_size)
    return {object, demangled(info.dli_sname)};
  const auto base = reinterpret_cast<uintptr_t>(info.dli_fbase);
  if (const std::string *name = functions_of(info.dli_fname).find(pc, base)) return {object, demangled(name->c_str())};
  return {object, format("+0x%llx", static_cast<unsigned long long>(pc - base))};
}

std::vector<SamplingProfile::Count> sorted(const std::map<std::pair<std::string, std::string>, size_t> &counts) {
  std::vector<SamplingProfile::Count> rows;
  for (const auto &[key, samples] : counts) rows.push_back({key.first, key.second, samples});
  std::stable_sort(rows.begin(), rows.end(), [](const auto &x, const auto &y) { return x.samples > y.samples; });
  return rows;
}

}  // namespace

bool SamplingProfile::supported() {
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
  return true;
#else
  return false;
#endif
}

SamplingProfile::SamplingProfile(int period_us, size_t capacity) {
  if (!supported()) throw BenchError("sampling profiles need Linux on x86-64 or AArch64");
  if (g_buffer.load() != nullptr) throw BenchError("one sampling profile at a time");
  g_capacity = capacity;
  g_next = 0;
  g_buffer = new uintptr_t[capacity];
  struct sigaction action = {};
  action.sa_sigaction = on_sample;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGPROF, &action, nullptr) != 0) {
    delete[] g_buffer.exchange(nullptr);
    throw BenchError("sigaction(SIGPROF) failed");
  }
  installed_ = true;
  // The signal goes to this thread only: the loop's, not the runtime's helper threads.
  sigevent event = {};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = SIGPROF;
  event._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
  timer_t timer = nullptr;
  if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) {
    signal(SIGPROF, SIG_DFL);
    delete[] g_buffer.exchange(nullptr);
    throw BenchError("timer_create failed");
  }
  timer_ = timer;
  period_us_ = period_us;
}

SamplingProfile::~SamplingProfile() {
  if (timer_ != nullptr) {
    stop();
    timer_delete(static_cast<timer_t>(timer_));
  }
  if (installed_) signal(SIGPROF, SIG_IGN);
  delete[] g_buffer.exchange(nullptr);
}

void SamplingProfile::start() {
  itimerspec spec = {};
  spec.it_interval.tv_nsec = static_cast<long>(period_us_) * 1000;
  spec.it_value = spec.it_interval;
  if (timer_settime(static_cast<timer_t>(timer_), 0, &spec, nullptr) != 0) throw BenchError("timer_settime failed");
}

void SamplingProfile::stop() {
  itimerspec spec = {};
  (void)timer_settime(static_cast<timer_t>(timer_), 0, &spec, nullptr);
}

void SamplingProfile::clear() { g_next = 0; }

size_t SamplingProfile::samples() const { return std::min(g_next.load(), g_capacity); }

std::vector<SamplingProfile::Count> SamplingProfile::by_object() const {
  std::map<std::pair<std::string, std::string>, size_t> counts;
  const uintptr_t *buffer = g_buffer.load();
  for (size_t i = 0; i < samples(); ++i) ++counts[{place(buffer[i]).first, ""}];
  return sorted(counts);
}

std::vector<SamplingProfile::Count> SamplingProfile::top_symbols(size_t count) const {
  std::map<std::pair<std::string, std::string>, size_t> counts;
  const uintptr_t *buffer = g_buffer.load();
  for (size_t i = 0; i < samples(); ++i) ++counts[place(buffer[i])];
  std::vector<Count> rows = sorted(counts);
  if (rows.size() > count) rows.resize(count);
  return rows;
}

}  // namespace bench
