// SPDX-License-Identifier: Apache-2.0
#include "text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace bench {

std::string format(const char *pattern, ...) {
  va_list args;
  va_start(args, pattern);
  va_list sizing;
  va_copy(sizing, args);
  const int length = std::vsnprintf(nullptr, 0, pattern, sizing);
  va_end(sizing);
  std::string text(length > 0 ? static_cast<size_t>(length) : 0, '\0');
  if (length > 0) std::vsnprintf(text.data(), text.size() + 1, pattern, args);
  va_end(args);
  return text;
}

std::vector<std::string> split(const std::string &text, char separator) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (size_t end = text.find(separator); end != std::string::npos; end = text.find(separator, begin)) {
    parts.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  parts.push_back(text.substr(begin));
  return parts;
}

std::string join(const std::vector<std::string> &parts, const std::string &separator) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i == 0 ? "" : separator) + parts[i];
  return text;
}

std::string milliseconds(double ms) {
  if (!std::isfinite(ms) || ms <= 0) return format("%g", ms);
  const int decimals = std::max(0, 3 - static_cast<int>(std::floor(std::log10(ms))));
  return format("%.*f", decimals, ms);
}

std::string byte_size(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return format(bytes == std::floor(bytes) ? "%.0f %s" : "%.2f %s", bytes, units[unit]);
}

}  // namespace bench
