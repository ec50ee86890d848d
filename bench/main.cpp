// SPDX-License-Identifier: Apache-2.0
// fastgemm-bench: the project's one way to measure speed. See usage_text() for what it does and how.
#include <cuda_runtime_api.h>
#include <fastgemm/fastgemm.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "gpu.hpp"
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

// The CUDA driver's version, 0 where no NVIDIA driver is installed.
int driver_version() {
  int version = 0;
  return cudaDriverGetVersion(&version) == cudaSuccess ? version : 0;
}

// Why there is no device to run on, in the reader's terms first, CUDA's words after: without a driver the
// runtime says "driver version is insufficient", which would send the reader to upgrade a driver that
// the machine does not have.
int no_device(cudaError_t error, const std::string &detail) {
  std::string headline = driver_version() == 0 ? "no NVIDIA driver found" : "no NVIDIA driver/GPU found";
  int runtime = 0;
  if (error == cudaErrorInsufficientDriver && driver_version() > 0 && cudaRuntimeGetVersion(&runtime) == cudaSuccess) {
    headline = "the NVIDIA driver supports CUDA " + bench::cuda_version_string(driver_version()) +
               ", older than the CUDA runtime " + bench::cuda_version_string(runtime) +
               " this program uses: update the driver";
  }
  std::fprintf(stderr, "fastgemm-bench: %s (CUDA: %s); it needs a GPU to measure anything\n", headline.c_str(),
               detail.c_str());
  return kExitNoDevice;
}

// "fastgemm-bench 0.1.0, libfastgemm 0.1.0, CUDA runtime 13.0, NVIDIA driver 13.0" (driver "none" without one).
int print_version() {
  const int library = fg_version();
  int runtime = 0;
  const std::string runtime_text =
      cudaRuntimeGetVersion(&runtime) == cudaSuccess ? bench::cuda_version_string(runtime) : "unknown";
  const int driver = driver_version();
  std::printf("fastgemm-bench %d.%d.%d, libfastgemm %d.%d.%d, CUDA runtime %s, NVIDIA driver %s\n", FG_VERSION_MAJOR,
              FG_VERSION_MINOR, FG_VERSION_PATCH, library / 10000, library / 100 % 100, library % 100,
              runtime_text.c_str(), driver > 0 ? bench::cuda_version_string(driver).c_str() : "none");
  return 0;
}

void print_algorithms(const char *op, const bench::AlgoFamily &family) {
  std::printf("%s algorithms (--algo):\n", op);
  for (int id : bench::carried_algos(family)) std::printf("  %3d  %s\n", id, family.name(id));
}

// Makes options.device current. Returns 0, or the exit status when there is no device to make current.
int select_device(const bench::Options &options) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) return no_device(error, std::string("cudaGetDeviceCount: ") + cudaGetErrorString(error));
  if (count == 0) return no_device(cudaErrorNoDevice, "cudaGetDeviceCount: 0 devices");
  if (options.device >= count) {
    const std::string message = "--device " + std::to_string(options.device) + ", but this machine has " +
                                std::to_string(count) + " CUDA device(s)";
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
  // --version answers before anything else on the command line is read, so it works with any of it.
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0) return print_version();
  }
  bench::Options options;
  bench::Plan plan;
  bench::OverheadPlan overhead;
  bench::AccuracyPlan accuracy;
  try {
    options = bench::parse_options(argc, argv);
    if (options.help) {
      std::fputs((options.help_all ? bench::usage_text() : bench::short_usage_text()).c_str(), stdout);
      return 0;
    }
    if (options.list) {
      print_algorithms("sgemm", bench::sgemm_algos());
      print_algorithms("rowmean", bench::rowmean_algos());
      return 0;
    }
    if (options.profile && options.command != "overhead") throw bench::UsageError("--profile applies to overhead only");
    if (options.command == "overhead") {
      overhead = bench::make_overhead_plan(options);
    } else if (options.command == "accuracy") {
      accuracy = bench::make_accuracy_plan(options);
    } else {
      plan = options.command == "sgemm" ? bench::make_sgemm_plan(options) : bench::make_rowmean_plan(options);
    }
  } catch (const bench::UsageError &error) {
    return usage_error(error.what());
  }

  if (const int status = select_device(options); status != 0) return status;
  fg_handle_t handle = nullptr;
  const fg_status_t created = fg_create(&handle);
  if (created == FG_STATUS_NO_DEVICE) return no_device(cudaErrorNoDevice, fg_last_error_message());
  if (created != FG_STATUS_SUCCESS) {
    std::fprintf(stderr, "fastgemm-bench: fg_create returned %s: %s\n", fg_status_name(created),
                 fg_last_error_message());
    return kExitFailure;
  }
  if (!options.host_devices.empty()) {
    const fg_status_t listed =
        fg_set_devices(handle, options.host_devices.data(), static_cast<int>(options.host_devices.size()));
    if (listed != FG_STATUS_SUCCESS) {
      std::fprintf(stderr, "fastgemm-bench: --devices: %s\n", fg_last_error_message());
      (void)fg_destroy(handle);
      return kExitFailure;
    }
  }
  int status = 0;
  if (options.command == "overhead")
    status = bench::run_overhead(overhead, options, handle);
  else if (options.command == "accuracy")
    status = bench::run_accuracy(accuracy, options, handle);
  else
    status = bench::run_plan(plan, options, handle);
  const fg_status_t destroyed = fg_destroy(handle);
  if (destroyed != FG_STATUS_SUCCESS) {
    std::fprintf(stderr, "fastgemm-bench: fg_destroy returned %s: %s\n", fg_status_name(destroyed),
                 fg_last_error_message());
    return kExitFailure;
  }
  return status;
}
