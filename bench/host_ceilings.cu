// SPDX-License-Identifier: Apache-2.0
// fastgemm-host-ceilings: what the host can move, the ceilings of fg_sgemm_host with operands in host memory. The
// host's copies from pageable into pinned memory split over 1 to 48 threads (the host engine's packing), and 1 GiB per
// device between pinned memory and every device at once, each way and both ways together (its transfers).
//
//   fastgemm-host-ceilings            every visible device
//
// Exit status: 0 measured; 1 a CUDA call failed; 3 no CUDA device.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace {

struct CudaFailure {
  std::string what;
};

void check(cudaError_t error, const char *call) {
  if (error != cudaSuccess) throw CudaFailure{std::string(call) + ": " + cudaGetErrorString(error)};
}
#define CHECK_CUDA(call) check((call), #call)

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The best of three runs of `body`, in seconds.
template <typename Body>
double best_of_three(Body body) {
  double best = 1e30;
  for (int round = 0; round < 3; ++round) {
    const double start = seconds_now();
    body();
    best = std::min(best, seconds_now() - start);
  }
  return best;
}

// body(index) on `count` threads at once; a CUDA failure on any of them is thrown here once all are done.
template <typename Body>
void on_threads(int count, Body body) {
  std::vector<std::string> failures(static_cast<size_t>(count));
  std::vector<std::thread> threads;
  for (int index = 0; index < count; ++index)
    threads.emplace_back([&, index] {
      try {
        body(index);
      } catch (const CudaFailure &failure) {
        failures[static_cast<size_t>(index)] = failure.what;
      }
    });
  for (std::thread &thread : threads) thread.join();
  for (const std::string &failure : failures)
    if (!failure.empty()) throw CudaFailure{failure};
}

constexpr size_t kGiB = size_t(1) << 30;

void measure(int devices) {
  const size_t host_bytes = 4 * kGiB;
  std::vector<char> pageable(host_bytes);
  for (size_t i = 0; i < host_bytes; i += 4096) pageable[i] = static_cast<char>(i >> 12);
  char *pinned = nullptr;
  CHECK_CUDA(cudaHostAlloc(reinterpret_cast<void **>(&pinned), host_bytes, cudaHostAllocPortable));
  std::memset(pinned, 1, host_bytes);
  std::printf("host copies, pageable into pinned, 4 GiB split over the threads:\n");
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int threads : {1, 2, 4, 8, 16, 24, 32, 48}) {
    if (threads > cores) break;
    const size_t part = host_bytes / static_cast<size_t>(threads);
    const double seconds = best_of_three([&] {
      on_threads(threads, [&](int t) {
        std::memcpy(pinned + static_cast<size_t>(t) * part, pageable.data() + static_cast<size_t>(t) * part, part);
      });
    });
    std::printf("  %2d threads: %6.1f GB/s\n", threads, static_cast<double>(host_bytes) / 1e9 / seconds);
  }
  // 1 GiB on each device, from and to its own GiB of the pinned (or pageable) buffer, 4 devices at most per buffer.
  std::vector<void *> memory(static_cast<size_t>(devices), nullptr);
  std::vector<cudaStream_t> up(static_cast<size_t>(devices), nullptr), down(static_cast<size_t>(devices), nullptr);
  for (int d = 0; d < devices; ++d) {
    CHECK_CUDA(cudaSetDevice(d));
    CHECK_CUDA(cudaMalloc(&memory[static_cast<size_t>(d)], kGiB));
    CHECK_CUDA(cudaStreamCreateWithFlags(&up[static_cast<size_t>(d)], cudaStreamNonBlocking));
    CHECK_CUDA(cudaStreamCreateWithFlags(&down[static_cast<size_t>(d)], cudaStreamNonBlocking));
  }
  const auto host_part = [&](char *base, int d) { return base + static_cast<size_t>(d % 4) * kGiB; };
  enum Direction { to_device, to_host, both, to_device_pageable };
  const char *names[] = {"host to device, pinned", "device to host, pinned", "both ways at once, pinned",
                         "host to device, pageable"};
  std::printf("transfers, 1 GiB per device, the devices at once:\n");
  for (int count = 1; count <= devices; count = count < devices ? std::min(devices, count * 2) : devices + 1) {
    for (Direction direction : {to_device, to_host, both, to_device_pageable}) {
      const double seconds = best_of_three([&] {
        on_threads(count, [&](int d) {
          const size_t i = static_cast<size_t>(d);
          CHECK_CUDA(cudaSetDevice(d));
          char *device = static_cast<char *>(memory[i]);
          switch (direction) {
            case to_device:
              CHECK_CUDA(cudaMemcpyAsync(device, host_part(pinned, d), kGiB, cudaMemcpyHostToDevice, up[i]));
              break;
            case to_host:
              CHECK_CUDA(cudaMemcpyAsync(host_part(pinned, d), device, kGiB, cudaMemcpyDeviceToHost, down[i]));
              break;
            case both:
              CHECK_CUDA(cudaMemcpyAsync(device, host_part(pinned, d), kGiB / 2, cudaMemcpyHostToDevice, up[i]));
              CHECK_CUDA(cudaMemcpyAsync(host_part(pinned, d) + kGiB / 2, device + kGiB / 2, kGiB / 2,
                                         cudaMemcpyDeviceToHost, down[i]));
              break;
            case to_device_pageable:
              CHECK_CUDA(cudaMemcpyAsync(device, host_part(pageable.data(), d), kGiB, cudaMemcpyHostToDevice, up[i]));
              break;
          }
          CHECK_CUDA(cudaStreamSynchronize(up[i]));
          CHECK_CUDA(cudaStreamSynchronize(down[i]));
        });
      });
      const double total = static_cast<double>(count) * static_cast<double>(kGiB) / 1e9 / seconds;
      std::printf("  %-26s %d device%s: %6.1f GB/s in all, %5.1f each\n", names[direction], count,
                  count == 1 ? ", " : "s,", total, total / count);
    }
  }
  for (int d = 0; d < devices; ++d) {
    CHECK_CUDA(cudaSetDevice(d));
    CHECK_CUDA(cudaFree(memory[static_cast<size_t>(d)]));
    CHECK_CUDA(cudaStreamDestroy(up[static_cast<size_t>(d)]));
    CHECK_CUDA(cudaStreamDestroy(down[static_cast<size_t>(d)]));
  }
  CHECK_CUDA(cudaFreeHost(pinned));
}

}  // namespace

int main(int argc, char **argv) {
  if (argc > 1) {
    std::fprintf(stderr, "usage: %s (no arguments: it measures every visible device)\n", argv[0]);
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "fastgemm-host-ceilings: no CUDA device\n");
    return 3;
  }
  try {
    measure(devices);
  } catch (const CudaFailure &failure) {
    std::fprintf(stderr, "fastgemm-host-ceilings: %s\n", failure.what.c_str());
    return 1;
  } catch (const std::exception &failure) {  // no memory or no thread for the measurement
    std::fprintf(stderr, "fastgemm-host-ceilings: %s\n", failure.what());
    return 1;
  }
  return 0;
}
