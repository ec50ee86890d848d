// SPDX-License-Identifier: Apache-2.0
// What the two libraries for LD_PRELOAD (libfastgemm_blas, libfastgemm_cublas) share: finding libfastgemm.so beside
// themselves, binding its functions by name, and reading a flop threshold from the environment. Header-only, compiled
// into each, so that neither links anything the other needs.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace fastgemm_preload {

// The directory, with its final '/', of the library that holds `address` (a function of the caller's library):
// libfastgemm.so is built and installed beside both. "" when the loader cannot tell.
inline std::string directory_of(const void *address) {
  Dl_info info = {};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  const char *slash = std::strrchr(info.dli_fname, '/');
  return slash == nullptr ? "" : std::string(info.dli_fname, slash + 1);
}

// *function := `name` in `library`; a name not found is added to *missing (comma-separated).
template <typename Function>
bool bind(void *library, const char *name, Function *function, std::string *missing) {
  *function = reinterpret_cast<Function>(dlsym(library, name));
  if (*function == nullptr) *missing += std::string(missing->empty() ? "" : ", ") + name;
  return *function != nullptr;
}

// A threshold of flops as a variable gives it: true with *value set for a number >= 0 and nothing after it.
inline bool read_min_flops(const char *text, double *value) {
  if (text == nullptr || *text == '\0') return false;
  char *end = nullptr;
  const double read = std::strtod(text, &end);
  if (*end != '\0' || !(read >= 0.0)) return false;
  *value = read;
  return true;
}

}  // namespace fastgemm_preload
