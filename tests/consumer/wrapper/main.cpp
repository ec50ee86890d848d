// SPDX-License-Identifier: Apache-2.0
// fastgemm.hpp from two translation units of one program. Without a GPU, Handle() throws Error with
// FG_STATUS_NO_DEVICE and the program says so; with one, a handle is created, moved and used.
#include <fastgemm/fastgemm.hpp>

#include <cstdio>
#include <string>
#include <utility>

int second_unit_check(std::string *message);

int main() {
  std::string message;
  if (second_unit_check(&message) != FG_STATUS_INVALID_HANDLE || message != "fg_set_stream: handle is NULL") {
    std::fprintf(stderr, "fastgemm::check gave '%s'\n", message.c_str());
    return 1;
  }
  try {
    fastgemm::Handle handle;
    fastgemm::Handle moved(std::move(handle));
    moved.set_sgemm_algo(FG_SGEMM_AUTO);
    std::printf("wrapper: a handle on the device, algorithm %s\n", fg_sgemm_algo_name(moved.sgemm_algo()));
  } catch (const fastgemm::Error &error) {
    std::printf("wrapper: %s: %s\n", error.status_name(), error.what());
    return error.status() == FG_STATUS_NO_DEVICE ? 0 : 1;
  }
  return 0;
}
