// SPDX-License-Identifier: Apache-2.0
// fastgemm from C++ (fastgemm.hpp): output = matrix * (row means of input) on the GPU with
// rowmean_matvec, in double precision, checked against the CPU. Without a GPU, fastgemm says so
// (FG_STATUS_NO_DEVICE); the program prints its message and exits 0.
//
// Build against fastgemm installed in /opt/fastgemm, static or shared (the run path lets the loader find a
// shared libfastgemm; a static one needs none):
//   export PKG_CONFIG_PATH=/opt/fastgemm/lib/pkgconfig
//   c++ -std=c++11 rowmean.cpp -o rowmean $(pkg-config --cflags --libs fastgemm) \
//       -Wl,-rpath,$(pkg-config --variable=libdir fastgemm)
// or with CMake: cmake -S samples -B build-samples -DCMAKE_PREFIX_PATH=/opt/fastgemm
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include <cuda_runtime_api.h>
#include <fastgemm/fastgemm.hpp>

// Device memory for count values of T, released with the object.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t count) : bytes_(count * sizeof(T)) {
    if (cudaMalloc(&data_, bytes_) != cudaSuccess) throw std::runtime_error("cudaMalloc failed");
  }
  explicit DeviceArray(const std::vector<T> &host) : DeviceArray(host.size()) {
    if (cudaMemcpy(data_, host.data(), bytes_, cudaMemcpyHostToDevice) != cudaSuccess)
      throw std::runtime_error("cudaMemcpy to the device failed");
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;

  T *get() const { return static_cast<T *>(data_); }
  std::vector<T> to_host() const {
    std::vector<T> host(bytes_ / sizeof(T));
    if (cudaMemcpy(host.data(), data_, bytes_, cudaMemcpyDeviceToHost) != cudaSuccess)
      throw std::runtime_error("cudaMemcpy from the device failed");
    return host;
  }

 private:
  void *data_ = nullptr;
  size_t bytes_;
};

int main() {
  // input: N batches of L rows of M values; matrix: L x L; output: L x N, column k for batch k. All
  // row-major.
  const int64_t L = 48, M = 35, N = 7;
  std::vector<double> input(N * L * M), matrix(L * L);
  for (size_t i = 0; i < input.size(); ++i) input[i] = std::sin(0.37 * i);
  for (size_t i = 0; i < matrix.size(); ++i) matrix[i] = std::cos(0.11 * i);

  try {
    fastgemm::Handle handle;
    DeviceArray<double> device_input(input), device_matrix(matrix), device_output(L * N);
    handle.rowmean_matvec(device_input.get(), device_matrix.get(), device_output.get(), L, M, N);
    // The call only enqueues; copying the result back waits for it, and reports a failure of the kernel.
    const std::vector<double> output = device_output.to_host();

    double worst = 0.0;
    for (int64_t i = 0; i < L; ++i)
      for (int64_t k = 0; k < N; ++k) {
        double expected = 0.0;
        for (int64_t j = 0; j < L; ++j) {
          double sum = 0.0;
          for (int64_t m = 0; m < M; ++m) sum += input[(k * L + j) * M + m];
          expected += matrix[i * L + j] * (sum / M);
        }
        worst = std::max(worst, std::fabs(output[i * N + k] - expected) / (std::fabs(expected) + 1.0));
      }
    std::printf("rowmean_matvec L=%lld M=%lld N=%lld: worst relative error %.1e\n", static_cast<long long>(L),
                static_cast<long long>(M), static_cast<long long>(N), worst);
    return worst < 1e-12 ? 0 : 1;
  } catch (const fastgemm::Error &error) {
    if (error.status() == FG_STATUS_NO_DEVICE) {
      std::printf("no usable CUDA device, as fastgemm reports: %s\n", error.what());
      return 0;
    }
    std::fprintf(stderr, "%s: %s\n", error.status_name(), error.what());
  } catch (const std::exception &error) {
    std::fprintf(stderr, "%s\n", error.what());
  }
  return 1;
}
