// SPDX-License-Identifier: Apache-2.0
// The second translation unit: the wrapper's inline definitions link once with main.cpp's.
#include <fastgemm/fastgemm.hpp>

#include <string>

// The status and message of a failing call, through fastgemm::check.
int second_unit_check(std::string *message) {
  try {
    fastgemm::check(fg_set_stream(nullptr, nullptr));
  } catch (const fastgemm::Error &error) {
    *message = error.what();
    return error.status();
  }
  return FG_STATUS_SUCCESS;
}
