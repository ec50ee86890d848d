// fastgemm-bench: the project's one way to measure speed. See usage_text() for what it does and how.
#include <cuda_runtime_api.h>
#include <fastgemm/fastgemm.h>

#include <cstdio>
#include <string>

#include "ops.hpp"
#include "options.hpp"

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoDevice = 3;

int usage_error(const char *message) {
  std::fprintf(stderr, "fastgemm-bench: %s\nTry 'fastgemm-bench --help'.\n", message);
  return kExitUsage;
}

int no_device(const char *reason) {
  std::fprintf(stderr, "fastgemm-bench: no CUDA device found (%s); it needs a GPU to measure anything\n", reason);
  return kExitNoDevice;
}

void print_algorithms(const char *op, const bench::AlgoFamily &family) {
  std::printf("%s algorithms (--algo):\n", op);
  for (int id : bench::carried_algos(family)) std::printf("  %3d  %s\n", id, family.name(id));
}

// Makes options.device current. Returns 0, or the exit status when there is no device to make current.
int select_device(const bench::Options &options) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    const std::string reason = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(error);
    return no_device(reason.c_str());
  }
  if (count == 0) return no_device("cudaGetDeviceCount: 0 devices");
  if (options.device >= count) {
    const std::string message =
        "--device " + std::to_string(options.device) + ", but this machine has " + std::to_string(count) +
        " CUDA device(s)";
    return usage_error(message.c_str());
  }
  const cudaError_t selected = cudaSetDevice(options.device);
  if (selected != cudaSuccess) {
    std::fprintf(stderr, "fastgemm-bench: cudaSetDevice(%d) failed: %s\n", options.device,
                 cudaGetErrorString(selected));
    return kExitFailure;
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  bench::Options options;
  bench::Plan plan;
  bench::OverheadPlan overhead;
  try {
    options = bench::parse_options(argc, argv);
    if (options.help) {
      std::fputs(bench::usage_text(), stdout);
      return 0;
    }
    if (options.list) {
      print_algorithms("sgemm", bench::sgemm_algos());
      print_algorithms("rowmean", bench::rowmean_algos());
      return 0;
    }
    if (options.command == "overhead") {
      overhead = bench::make_overhead_plan(options);
    } else {
      plan = options.command == "sgemm" ? bench::make_sgemm_plan(options) : bench::make_rowmean_plan(options);
    }
  } catch (const bench::UsageError &error) {
    return usage_error(error.what());
  }

  if (const int status = select_device(options); status != 0) return status;
  fg_handle_t handle = nullptr;
  const fg_status_t created = fg_create(&handle);
  if (created == FG_STATUS_NO_DEVICE) return no_device(fg_last_error_message());
  if (created != FG_STATUS_SUCCESS) {
    std::fprintf(stderr, "fastgemm-bench: fg_create returned %s: %s\n", fg_status_name(created),
                 fg_last_error_message());
    return kExitFailure;
  }
  const int status = options.command == "overhead" ? bench::run_overhead(overhead, options, handle)
                                                   : bench::run_plan(plan, options, handle);
  const fg_status_t destroyed = fg_destroy(handle);
  if (destroyed != FG_STATUS_SUCCESS) {
    std::fprintf(stderr, "fastgemm-bench: fg_destroy returned %s: %s\n", fg_status_name(destroyed),
                 fg_last_error_message());
    return kExitFailure;
  }
  return status;
}
