// SPDX-License-Identifier: Apache-2.0
// symbols.hpp: LAPACK's and the BLAS's routines, found through the dynamic loader.
#include "blas/lapack/symbols.hpp"

#include <dlfcn.h>
#include <link.h>

#include <string>
#include <vector>

namespace fastgemm_lapack {
namespace {

// Whether `symbol` is this library's own.
bool is_own(const void *symbol) {
  static const void *const own_base = [] {
    Dl_info info = {};
    return dladdr(reinterpret_cast<const void *>(&is_own), &info) != 0 ? info.dli_fbase : nullptr;
  }();
  Dl_info info = {};
  return dladdr(symbol, &info) != 0 && info.dli_fbase == own_base;
}

// The names of the loaded objects, in load order (collected first: the loader is not asked to open anything while
// it lists them).
int collect_name(struct dl_phdr_info *object, size_t, void *names) {
  if (object->dlpi_name == nullptr || object->dlpi_name[0] == '\0') return 0;
  try {
    static_cast<std::vector<std::string> *>(names)->emplace_back(object->dlpi_name);
    return 0;
  } catch (...) {
    return 1;  // no memory: the list stops here (nothing is thrown through the loader)
  }
}

// The first loaded object, in load order, that defines `name` other than this library; null if none.
void *find_loaded(const char *name) {
  std::vector<std::string> names;
  dl_iterate_phdr(collect_name, &names);
  for (const std::string &object : names) {
    void *handle = dlopen(object.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void *symbol = dlsym(handle, name);
    dlclose(handle);  // RTLD_NOLOAD took a reference of its own; the object stays loaded
    if (symbol != nullptr && !is_own(symbol)) return symbol;
  }
  return nullptr;
}

}  // namespace

void *lapack_symbol(const char *name) {
  void *symbol = dlsym(RTLD_NEXT, name);
  if (symbol == nullptr || is_own(symbol)) symbol = find_loaded(name);
  if (symbol == nullptr) {
    if (void *library = dlopen("liblapack.so.3", RTLD_NOW | RTLD_LOCAL)) {  // kept open: its function is used
      symbol = dlsym(library, name);
      if (symbol != nullptr && is_own(symbol)) symbol = nullptr;
    }
  }
  return symbol;
}

void *blas_symbol(const char *name) {
  void *symbol = dlsym(RTLD_DEFAULT, name);
  if (symbol == nullptr || is_own(symbol)) symbol = find_loaded(name);
  return symbol;
}

}  // namespace fastgemm_lapack
