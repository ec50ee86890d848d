// SPDX-License-Identifier: Apache-2.0
// Reliability under the conditions a long-running host program creates: many threads with their own
// handles, one handle moved between streams, graph capture, operands of more than 2^31 elements, device
// memory exhausted by someone else, and kernel faults.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <thread>

#include <cublas_v2.h>

#include "gpu/gemm_harness.hpp"

using namespace fgtest;

namespace {

// One call with everything on the device, run on `handle` into `output`, then compared bit for bit.
struct Workload {
  bool rowmean = false;
  fg_sgemm_algo_t sgemm_algo = FG_SGEMM_AUTO;
  fg_rowmean_algo_t rowmean_algo = FG_ROWMEAN_AUTO;
  int64_t m = 0, n = 0, k = 0;  // sgemm; rowmean uses m = L, n = M, k = N
  std::shared_ptr<DeviceMemory> a, b;
  size_t output_bytes = 0;
  std::vector<unsigned char> alone;  // the output of the call run by itself

  fg_status_t run(fg_handle_t handle, void *output) const {
    if (rowmean) {
      const fg_status_t set = fg_set_rowmean_algo(handle, rowmean_algo);
      if (set != FG_STATUS_SUCCESS) return set;
      return fg_rowmean_matvec(handle, FG_F32, a->get(), b->get(), output, m, n, k);
    }
    const fg_status_t set = fg_set_sgemm_algo(handle, sgemm_algo);
    if (set != FG_STATUS_SUCCESS) return set;
    return fg_sgemm(handle, FG_ROW_MAJOR, FG_OP_N, FG_OP_T, m, n, k, 1.25f, a->as<float>(), k, b->as<float>(), k, 0.0f,
                    static_cast<float *>(output), n);
  }
};

std::vector<unsigned char> read_back(const void *device, size_t bytes, cudaStream_t stream) {
  std::vector<unsigned char> host(bytes);
  REQUIRE_CUDA_OK(cudaMemcpyAsync(host.data(), device, bytes, cudaMemcpyDeviceToHost, stream));
  REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
  return host;
}

// for_capture: workloads that can be captured in a CUDA graph, so no forced INT8 emulation (it looks at the
// operands first, which a stream being captured cannot do).
std::vector<Workload> make_workloads(fg_handle_t handle, int count, uint64_t seed, bool for_capture = false) {
  std::mt19937_64 random(seed);
  const auto sgemm_algos = carried_sgemm_algos(handle);
  const auto rowmean_algos = carried_rowmean_algos(handle);
  std::vector<Workload> workloads;
  for (int i = 0; i < count; ++i) {
    Workload w;
    w.rowmean = i % 2 == 1;
    const auto size = [&](int64_t low, int64_t high) {
      return low + static_cast<int64_t>(random() % (high - low + 1));
    };
    if (w.rowmean) {
      w.m = size(1, 700), w.n = size(1, 90), w.k = size(1, 24);
      w.rowmean_algo = i % 4 == 1 ? FG_ROWMEAN_AUTO : rowmean_algos[random() % rowmean_algos.size()];
      if (w.m > 1024) w.rowmean_algo = FG_ROWMEAN_AUTO;
      std::vector<float> input(w.k * w.m * w.n), matrix(w.m * w.m);
      fill_uniform(input, seed + 2 * i);
      fill_uniform(matrix, seed + 2 * i + 1);
      w.a = std::make_shared<DeviceMemory>(input.size() * 4);
      w.b = std::make_shared<DeviceMemory>(matrix.size() * 4);
      upload(*w.a, input);
      upload(*w.b, matrix);
      w.output_bytes = w.m * w.k * 4;
    } else {
      w.m = size(1, 300), w.n = size(1, 300), w.k = size(1, 300);
      w.sgemm_algo = i % 4 == 0 ? FG_SGEMM_AUTO : sgemm_algos[random() % sgemm_algos.size()];
      if (for_capture && w.sgemm_algo == FG_SGEMM_OZAKI_INT8) w.sgemm_algo = FG_SGEMM_AUTO;
      std::vector<float> a(w.m * w.k), b(w.n * w.k);
      fill_uniform(a, seed + 2 * i);
      fill_uniform(b, seed + 2 * i + 1);
      w.a = std::make_shared<DeviceMemory>(a.size() * 4);
      w.b = std::make_shared<DeviceMemory>(b.size() * 4);
      upload(*w.a, a);
      upload(*w.b, b);
      w.output_bytes = w.m * w.n * 4;
    }
    workloads.push_back(std::move(w));
  }
  // Each workload once, by itself, on a handle of its own. A forced algorithm that refuses the shape
  // (128-bit kernels and odd leading dimensions, say) leaves the choice to AUTO.
  for (Workload &w : workloads) {
    Handle alone;
    DeviceMemory output(w.output_bytes);
    INFO("workload " << (w.rowmean ? "rowmean " : "sgemm ") << w.m << " " << w.n << " " << w.k);
    if (w.run(alone.get(), output.get()) == FG_STATUS_NOT_SUPPORTED)
      w.sgemm_algo = FG_SGEMM_AUTO, w.rowmean_algo = FG_ROWMEAN_AUTO;
    REQUIRE_FG_OK(w.run(alone.get(), output.get()));
    w.alone = read_back(output.get(), w.output_bytes, nullptr);
  }
  return workloads;
}

}  // namespace

TEST_CASE("16 threads, each with its own handle and stream, get the results of calls run alone", "[concurrency]") {
  Handle setup;
  const std::vector<Workload> workloads = make_workloads(setup.get(), 24, 7);
  constexpr int kThreads = 16;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(4);
  std::atomic<long> calls{0}, mismatches{0}, failures{0};
  std::vector<std::string> first_failure(kThreads);  // each thread writes only its own entry
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      fg_handle_t handle = nullptr;
      cudaStream_t stream = nullptr;
      if (fg_create(&handle) != FG_STATUS_SUCCESS ||
          cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess ||
          fg_set_stream(handle, stream) != FG_STATUS_SUCCESS) {
        ++failures;
        return;
      }
      size_t largest = 0;
      for (const Workload &w : workloads) largest = std::max(largest, w.output_bytes);
      void *output = nullptr;
      std::vector<unsigned char> host(largest);
      if (cudaMalloc(&output, largest) != cudaSuccess) ++failures;
      for (size_t i = t; output != nullptr && std::chrono::steady_clock::now() < deadline; i += 7) {
        const Workload &w = workloads[i % workloads.size()];
        const fg_status_t status = cudaMemsetAsync(output, 0xff, w.output_bytes, stream) == cudaSuccess
                                       ? w.run(handle, output)
                                       : FG_STATUS_CUDA_ERROR;
        if (status != FG_STATUS_SUCCESS ||
            cudaMemcpyAsync(host.data(), output, w.output_bytes, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
            cudaStreamSynchronize(stream) != cudaSuccess) {
          first_failure[t] = std::string(fg_status_name(status)) + ": " + fg_last_error_message();
          ++failures;
          break;
        }
        if (std::memcmp(host.data(), w.alone.data(), w.output_bytes) != 0) ++mismatches;
        ++calls;
      }
      cudaFree(output);
      fg_destroy(handle);
      cudaStreamDestroy(stream);
    });
  for (auto &thread : threads) thread.join();
  INFO(calls << " calls from " << kThreads << " threads");
  std::string failures_seen;
  for (const std::string &failure : first_failure)
    if (!failure.empty()) failures_seen += failure + "\n";
  INFO(failures_seen);
  CHECK(failures == 0);
  CHECK(mismatches == 0);
  CHECK(calls >= kThreads);
  std::printf("concurrency: %ld calls from %d threads, %ld mismatches\n", calls.load(), kThreads, mismatches.load());
}

TEST_CASE("one handle moved between streams gets the results of calls run alone", "[concurrency]") {
  Handle handle;
  const std::vector<Workload> workloads = make_workloads(handle.get(), 10, 11);
  cudaStream_t streams[3];
  for (auto &stream : streams) REQUIRE_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (int round = 0; round < 3; ++round)
    for (size_t i = 0; i < workloads.size(); ++i) {
      const Workload &w = workloads[i];
      cudaStream_t stream = streams[(i + round) % 3];
      REQUIRE_FG_OK(fg_set_stream(handle.get(), stream));
      DeviceMemory output(w.output_bytes);
      REQUIRE_CUDA_OK(cudaMemsetAsync(output.get(), 0xff, w.output_bytes, stream));
      REQUIRE_FG_OK(w.run(handle.get(), output.get()));
      // Read back on another stream, ordered after the work only through an event: nothing was left on
      // a stream the handle no longer uses.
      cudaEvent_t done;
      REQUIRE_CUDA_OK(cudaEventCreate(&done));
      REQUIRE_CUDA_OK(cudaEventRecord(done, stream));
      cudaStream_t reader = streams[(i + round + 1) % 3];
      REQUIRE_CUDA_OK(cudaStreamWaitEvent(reader, done, 0));
      CHECK(read_back(output.get(), w.output_bytes, reader) == w.alone);
      REQUIRE_CUDA_OK(cudaEventDestroy(done));
    }
  REQUIRE_FG_OK(fg_set_stream(handle.get(), nullptr));
  for (auto &stream : streams) REQUIRE_CUDA_OK(cudaStreamDestroy(stream));
}

TEST_CASE("calls captured into a CUDA graph and replayed give the direct calls' results", "[graph]") {
  Handle handle;
  const std::vector<Workload> workloads = make_workloads(handle.get(), 8, 13, true);
  cudaStream_t stream;
  REQUIRE_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  REQUIRE_FG_OK(fg_set_stream(handle.get(), stream));
  std::vector<std::unique_ptr<DeviceMemory>> outputs;
  for (const Workload &w : workloads) {
    outputs.push_back(std::make_unique<DeviceMemory>(w.output_bytes));
    REQUIRE_FG_OK(w.run(handle.get(), outputs.back()->get()));  // first calls of each shape class: warm-up
  }
  REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
  for (auto &output : outputs) REQUIRE_CUDA_OK(cudaMemset(output->get(), 0xff, 16));
  REQUIRE_CUDA_OK(cudaDeviceSynchronize());  // the poison (legacy stream) lands before the graph's stream writes
  // Global capture mode: an allocation or synchronization inside a call would end the capture in error.
  REQUIRE_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (size_t i = 0; i < workloads.size(); ++i) {
    INFO("captured call " << i);
    const fg_status_t status = workloads[i].run(handle.get(), outputs[i]->get());
    INFO(fg_status_name(status) << ": " << fg_last_error_message());
    CHECK(status == FG_STATUS_SUCCESS);
  }
  cudaGraph_t graph = nullptr;
  REQUIRE_CUDA_OK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  REQUIRE_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 3; ++replay) {
    for (size_t i = 0; i < outputs.size(); ++i)
      REQUIRE_CUDA_OK(cudaMemsetAsync(outputs[i]->get(), 0xff, workloads[i].output_bytes, stream));
    REQUIRE_CUDA_OK(cudaGraphLaunch(exec, stream));
    for (size_t i = 0; i < outputs.size(); ++i)
      CHECK(read_back(outputs[i]->get(), workloads[i].output_bytes, stream) == workloads[i].alone);
  }
  REQUIRE_CUDA_OK(cudaGraphExecDestroy(exec));
  REQUIRE_CUDA_OK(cudaGraphDestroy(graph));
  REQUIRE_FG_OK(fg_set_stream(handle.get(), nullptr));
  REQUIRE_CUDA_OK(cudaStreamDestroy(stream));
}

namespace {

// A device array of `count` floats repeating one random period of `period` values, filled by copies
// so that tens of gigabytes take no host memory of their size.
struct PeriodicArray {
  std::vector<float> period;
  std::unique_ptr<DeviceMemory> memory;

  PeriodicArray(int64_t count, int64_t period_length, uint64_t seed) : period(period_length) {
    fill_uniform(period, seed);
    memory = std::make_unique<DeviceMemory>(count * sizeof(float));
    const int64_t first = std::min(count, period_length);
    REQUIRE_CUDA_OK(cudaMemcpy(memory->get(), period.data(), first * sizeof(float), cudaMemcpyHostToDevice));
    for (int64_t done = first; done < count;) {  // doubling copies of what is already there
      const int64_t chunk = std::min(done - done % period_length, count - done);
      REQUIRE_CUDA_OK(
          cudaMemcpy(memory->as<float>() + done, memory->as<float>(), chunk * sizeof(float), cudaMemcpyDeviceToDevice));
      done += chunk;
    }
  }
  float at(int64_t i) const { return period[i % period.size()]; }
};

}  // namespace

TEST_CASE("operands of more than 2^31 elements compute correctly", "[huge]") {
  Handle handle;
  size_t free_bytes = 0, total_bytes = 0;
  REQUIRE_CUDA_OK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const int64_t m = 70000, k = 40000, n = 8;  // A: 2.8e9 elements, 11.2 GB
  if (free_bytes < static_cast<size_t>(m * k * 4) + (size_t(1) << 30)) {
    WARN("skipped: the device has " << free_bytes << " bytes free");
    return;
  }
  PeriodicArray a(m * k, 1000003, 21);
  std::vector<float> b(k * n);
  fill_uniform(b, 22);
  DeviceMemory b_device(b.size() * 4), c_device(m * n * 4);
  upload(b_device, b);
  std::mt19937_64 random(23);
  for (fg_sgemm_algo_t algo : algos_under_test(handle.get())) {
    INFO("algorithm " << fg_sgemm_algo_name(algo));
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), algo));
    REQUIRE_CUDA_OK(cudaMemset(c_device.get(), 0xff, m * n * 4));
    const fg_status_t status =
        fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, a.memory->as<float>(), k,
                 b_device.as<float>(), n, 0.0f, c_device.as<float>(), n);
    if (status == FG_STATUS_NOT_SUPPORTED && algo != FG_SGEMM_AUTO) continue;
    REQUIRE(status == FG_STATUS_SUCCESS);
    const std::vector<float> c = download<float>(c_device, m * n);
    for (int sample = 0; sample < 64; ++sample) {
      const int64_t i = sample < 2 ? (sample == 0 ? 0 : m - 1) : static_cast<int64_t>(random() % m);
      const int64_t j = static_cast<int64_t>(random() % n);
      double expected = 0, scale = 0;
      for (int64_t p = 0; p < k; ++p) {
        expected += static_cast<double>(a.at(i * k + p)) * b[p * n + j];
        scale += std::fabs(static_cast<double>(a.at(i * k + p)) * b[p * n + j]);
      }
      INFO("C[" << i << "][" << j << "] = " << c[i * n + j] << ", expected " << expected);
      CHECK(std::fabs(c[i * n + j] - expected) <= 1e-5 * scale);
    }
  }
  std::printf("huge: A of %lld elements (%.1f GB)\n", static_cast<long long>(m * k), m * k * 4 / 1e9);

  // A row mean over more than 2^31 values.
  a.memory.reset();
  const int64_t L = 2, M = (int64_t(1) << 31) + 17, N = 1;
  PeriodicArray input(L * M * N, 999983, 24);
  DeviceMemory matrix(L * L * 4), output(L * N * 4);
  const std::vector<float> matrix_values{0.5f, -1.0f, 2.0f, 0.25f};
  upload(matrix, matrix_values);
  REQUIRE_FG_OK(fg_rowmean_matvec(handle.get(), FG_F32, input.memory->get(), matrix.get(), output.get(), L, M, N));
  const std::vector<float> result = download<float>(output, L * N);
  // Sums over whole periods, then the rest.
  const auto row_mean = [&](int64_t row) {
    long double period_sum = 0;
    for (float v : input.period) period_sum += v;
    const int64_t begin = row * M, length = static_cast<int64_t>(input.period.size());
    long double sum = 0;
    int64_t i = begin;
    for (; i % length != 0 && i < begin + M; ++i) sum += input.at(i);
    const int64_t periods = (begin + M - i) / length;
    sum += period_sum * periods;
    for (i += periods * length; i < begin + M; ++i) sum += input.at(i);
    return sum / M;
  };
  const long double means[2] = {row_mean(0), row_mean(1)};
  for (int64_t i = 0; i < L; ++i) {
    const long double expected = matrix_values[i * 2] * means[0] + matrix_values[i * 2 + 1] * means[1];
    INFO("output " << i << " = " << result[i] << ", expected " << static_cast<double>(expected));
    CHECK(std::fabs(result[i] - expected) <= 1e-6 * (std::fabs(means[0]) + std::fabs(means[1])) * 2);
  }
}

TEST_CASE("with device memory exhausted, calls that need workspace fail cleanly and others still run", "[pressure]") {
  Handle handle;
  const int64_t L = 1024, M = 1, N = 1 << 18;  // the two-pass algorithm needs N * L floats of workspace: 1 GiB
  DeviceMemory input(L * M * N * 4), matrix(L * L * 4), output(L * N * 4);
  std::vector<float> small(L * L);
  fill_uniform(small, 31);
  upload(matrix, small);
  REQUIRE_CUDA_OK(cudaMemset(input.get(), 0, 4));
  // Warm the sgemm path (cuBLAS's handle included) while memory is plentiful.
  GemmCase gc;
  gc.m = gc.n = gc.k = 64;
  check_gemm_case(handle.get(), algos_under_test(handle.get()), gc, 32);

  // Take all but 256 MiB of what is free, in pieces.
  std::vector<void *> hoard;
  for (size_t piece = size_t(1) << 30; piece >= (size_t(1) << 20); piece /= 2) {
    for (;;) {
      size_t free_bytes = 0, total_bytes = 0;
      REQUIRE_CUDA_OK(cudaMemGetInfo(&free_bytes, &total_bytes));
      void *memory = nullptr;
      if (free_bytes < piece + (size_t(256) << 20) || cudaMalloc(&memory, piece) != cudaSuccess) break;
      hoard.push_back(memory);
    }
  }
  (void)cudaGetLastError();
  const std::vector<float> before(16, 3.5f);
  upload(output, before);
  REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), FG_ROWMEAN_TWO_PASS));
  const fg_status_t status = fg_rowmean_matvec(handle.get(), FG_F32, input.get(), matrix.get(), output.get(), L, M, N);
  const std::string message = fg_last_error_message();
  INFO(fg_status_name(status) << ": " << message);
  CHECK(status == FG_STATUS_ALLOC_FAILED);
  CHECK(message.find("fg_rowmean_matvec: ") == 0);
  CHECK(message.find("cudaErrorMemoryAllocation") != std::string::npos);
  CHECK(download<float>(output, 16) == before);
  // Calls that need no workspace still work.
  check_gemm_case(handle.get(), algos_under_test(handle.get()), gc, 33);
  for (void *memory : hoard) REQUIRE_CUDA_OK(cudaFree(memory));
  std::printf("pressure: %zu pieces held, workspace refused with %s\n", hoard.size(), fg_status_name(status));
}

// Leaves the device unusable: run on its own (the gpu.fault CTest entry), never beside other tests.
TEST_CASE("a kernel fault surfaces as FG_STATUS_CUDA_ERROR naming the CUDA error", "[.fault]") {
  Handle handle;
  // fastgemm refuses an output its allocation does not hold, so the fault comes from a kernel of another
  // library in the same context: cuBLAS told to write C at an address no allocation holds (the first
  // page, which is never mapped).
  DeviceMemory small(4), a(64 * 64 * 4), b(64 * 64 * 4);
  cublasHandle_t cublas = nullptr;
  REQUIRE(cublasCreate(&cublas) == CUBLAS_STATUS_SUCCESS);
  const float one = 1.0f, zero = 0.0f;
  const int size = 64;
  float *unmapped = reinterpret_cast<float *>(uintptr_t{256});
  CHECK(cublasSgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, &one, a.as<float>(), size, b.as<float>(), size,
                    &zero, unmapped, size) == CUBLAS_STATUS_SUCCESS);  // the fault happens later, on the device
  const cudaError_t fault = cudaDeviceSynchronize();
  INFO("cudaDeviceSynchronize: " << cudaGetErrorName(fault));
  REQUIRE(fault != cudaSuccess);
  const fg_status_t status = fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 1, 1, 1, 1.0f, a.as<float>(), 1,
                                      b.as<float>(), 1, 0.0f, small.as<float>(), 1);
  const std::string message = fg_last_error_message();
  INFO(fg_status_name(status) << ": " << message);
  CHECK(status == FG_STATUS_CUDA_ERROR);
  CHECK(message.find(cudaGetErrorName(fault)) != std::string::npos);
  CHECK(fg_last_cuda_error() == static_cast<int>(fault));
}
