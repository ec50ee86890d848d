// SPDX-License-Identifier: Apache-2.0
// String helpers shared by the command line, the table and the report writers.
#pragma once

#include <string>
#include <vector>

namespace bench {

// printf into a std::string.
std::string format(const char *pattern, ...) __attribute__((format(printf, 1, 2)));

// "a,b,,c" -> {"a", "b", "", "c"}; "" -> {""}.
std::vector<std::string> split(const std::string &text, char separator);

std::string join(const std::vector<std::string> &parts, const std::string &separator);

// A duration in milliseconds with four significant digits in fixed notation: 0.008012, 2.701, 1234.
std::string milliseconds(double ms);

// 1073741824 -> "1 GiB", 52428800 -> "50 MiB".
std::string byte_size(double bytes);

}  // namespace bench
