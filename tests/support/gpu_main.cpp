// SPDX-License-Identifier: Apache-2.0
// Entry point of the GPU test programs: without a usable CUDA device they report "skipped" to CTest
// (exit code 77, the tests' SKIP_RETURN_CODE) instead of passing without having run; so do they with
// fewer devices than FASTGEMM_TEST_MIN_DEVICES asks for (the tests of several devices). Listing the tests
// or the tags, and the help, run no test and need no device.
#define CATCH_CONFIG_RUNNER
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include <cuda_runtime_api.h>

namespace {

bool runs_no_test(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    for (const char *option : {"-l", "--list-tests", "-t", "--list-tags", "--list-test-names-only", "--list-reporters",
                               "-h", "-?", "--help"}) {
      if (std::strcmp(argv[i], option) == 0) return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char **argv) {
  if (runs_no_test(argc, argv)) return Catch::Session().run(argc, argv);
  int devices = 0;
  const cudaError_t error = cudaGetDeviceCount(&devices);
  if (error != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device (%s); GPU tests need one\n",
                error != cudaSuccess ? cudaGetErrorName(error) : "0 devices");
    return 77;
  }
  const char *wanted = std::getenv("FASTGEMM_TEST_MIN_DEVICES");
  if (wanted != nullptr && devices < std::atoi(wanted)) {
    std::printf("SKIPPED: %d CUDA device(s); these tests need %s\n", devices, wanted);
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
