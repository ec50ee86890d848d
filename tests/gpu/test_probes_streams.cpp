// SPDX-License-Identifier: Apache-2.0
// Programs as a user writes them against the public header, on streams and threads: graphs captured after
// stream changes, streams that die before the handle, work on the legacy stream followed by another stream,
// the per-thread default stream from two threads and at a thread's exit, and a thread that chose no device.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "gpu/probe_support.hpp"

using namespace fgtest;

TEST_CASE("a graph captured after fg_set_stream replays any number of times", "[workspace]") {
  Handle handle;
  RowmeanData data(96, 40, 12, 101);
  for (fg_rowmean_algo_t algo : rowmean_algos(handle.get())) {
    INFO("algorithm " << fg_rowmean_algo_name(algo));
    REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), algo));
    REQUIRE_FG_OK(fg_set_stream(handle.get(), nullptr));
    REQUIRE_FG_OK(data.run(handle.get()));  // warm-up on the legacy stream
    cudaStream_t stream;
    REQUIRE_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    REQUIRE_FG_OK(fg_set_stream(handle.get(), stream));
    cudaGraphExec_t exec = capture_call(stream, [&] { return data.run(handle.get()); });
    for (int replay = 0; replay < 4; ++replay) {
      data.poison(stream);
      REQUIRE_CUDA_OK(cudaGraphLaunch(exec, stream));
      CHECK(data.error(stream) < 1e-12);
    }
    REQUIRE_CUDA_OK(cudaGraphExecDestroy(exec));
    REQUIRE_FG_OK(fg_set_stream(handle.get(), nullptr));
    REQUIRE_CUDA_OK(cudaStreamDestroy(stream));
  }
  require_no_pending_fault();
}

TEST_CASE("a stream destroyed before the handle: fg_destroy is safe", "[workspace]") {
  for (fg_rowmean_algo_t algo : {FG_ROWMEAN_AUTO, FG_ROWMEAN_STAGED, FG_ROWMEAN_TWO_PASS, FG_ROWMEAN_CUBLAS}) {
    INFO("algorithm " << fg_rowmean_algo_name(algo));
    fg_handle_t handle = nullptr;
    REQUIRE_FG_OK(fg_create(&handle));
    if (fg_set_rowmean_algo(handle, algo) != FG_STATUS_SUCCESS) {
      REQUIRE_FG_OK(fg_destroy(handle));
      continue;
    }
    RowmeanData data(64, 33, 5, 7);
    cudaStream_t stream;
    REQUIRE_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    REQUIRE_FG_OK(fg_set_stream(handle, stream));
    data.poison(stream);
    REQUIRE_FG_OK(data.run(handle));
    CHECK(data.error(stream) < 1e-12);
    REQUIRE_CUDA_OK(cudaStreamDestroy(stream));
    REQUIRE_FG_OK(fg_destroy(handle));
    require_no_pending_fault();
  }
}

namespace {

// Row-major m x k times k x n with random operands in device memory.
struct Product {
  int64_t m, n, k;
  std::vector<float> a, b;
  DeviceMemory da, db, dc;
  Product(int64_t m_, int64_t n_, int64_t k_, uint64_t seed)
      : m(m_), n(n_), k(k_), a(m_ * k_), b(k_ * n_), da(m_ * k_ * 4), db(k_ * n_ * 4), dc(m_ * n_ * 4) {
    fill_uniform(a, seed);
    fill_uniform(b, seed + 1);
    upload(da, a);
    upload(db, b);
  }
  fg_status_t run(fg_handle_t handle) const {
    return fg_sgemm(handle, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, da.as<float>(), k, db.as<float>(), n, 0.0f,
                    dc.as<float>(), n);
  }
  double error() const {
    GemmCase gc;
    gc.m = m, gc.n = n, gc.k = k;
    const std::vector<float> c(m * n, 0.0f);
    return relative_error(download<float>(dc, m * n), reference_gemm(gc.resolved(), a, b, c));
  }
  // For products too large for a full reference: the largest error over 32 elements, each relative to the
  // sum of its terms' magnitudes.
  double sampled_error() const {
    const std::vector<float> c = download<float>(dc, m * n);
    double worst = 0;
    for (int64_t sample = 0; sample < 32; ++sample) {
      const int64_t i = (sample * 7919) % m, j = (sample * 104729) % n;
      double exact = 0, scale = 0;
      for (int64_t p = 0; p < k; ++p) {
        exact += static_cast<double>(a[i * k + p]) * b[p * n + j];
        scale += std::fabs(static_cast<double>(a[i * k + p]) * b[p * n + j]);
      }
      const double error = std::fabs(c[i * n + j] - exact) / scale;
      worst = std::isnan(error) || error > worst ? error : worst;
    }
    return worst;
  }
};

}  // namespace

// On the legacy stream the handle records no event after each call; a stream change must still order the
// next use of the workspace (or of cuBLAS) after that work.
TEST_CASE("work on the legacy stream, then a non-blocking stream: the next call waits for it", "[workspace]") {
  Product long_one(4096, 4096, 4096, 31), short_one(64, 64, 4096, 33);
  for (fg_sgemm_algo_t next : {FG_SGEMM_CUBLAS, FG_SGEMM_SPLIT_K}) {
    INFO("the call on the new stream runs " << fg_sgemm_algo_name(next));
    Handle handle;
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_CUBLAS));
    for (int i = 0; i < 3; ++i) REQUIRE_FG_OK(long_one.run(handle.get()));  // milliseconds of work
    cudaEvent_t legacy_done, short_done;
    REQUIRE_CUDA_OK(cudaEventCreate(&legacy_done));
    REQUIRE_CUDA_OK(cudaEventCreate(&short_done));
    REQUIRE_CUDA_OK(cudaEventRecord(legacy_done, nullptr));
    cudaStream_t stream;
    REQUIRE_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    REQUIRE_FG_OK(fg_set_stream(handle.get(), stream));
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), next));
    REQUIRE_CUDA_OK(cudaMemsetAsync(short_one.dc.get(), 0xff, 64 * 64 * 4, stream));  // NaN
    REQUIRE_FG_OK(short_one.run(handle.get()));
    REQUIRE_CUDA_OK(cudaEventRecord(short_done, stream));
    REQUIRE_CUDA_OK(cudaEventSynchronize(short_done));
    // Unordered, the short call would have finished within microseconds, long before the legacy work.
    CHECK(cudaEventQuery(legacy_done) == cudaSuccess);
    CHECK(short_one.error() < gemm_tolerance(4096));
    CHECK(long_one.sampled_error() < 1e-5);
    REQUIRE_FG_OK(fg_set_stream(handle.get(), nullptr));
    REQUIRE_CUDA_OK(cudaStreamDestroy(stream));
    REQUIRE_CUDA_OK(cudaEventDestroy(legacy_done));
    REQUIRE_CUDA_OK(cudaEventDestroy(short_done));
  }
  require_no_pending_fault();
}

TEST_CASE("fg_destroy waits for the handle's work on the legacy stream", "[workspace]") {
  Product product(1024, 1024, 32768, 35);
  fg_handle_t handle = nullptr;
  REQUIRE_FG_OK(fg_create(&handle));
  // split_k takes the handle's workspace and no cuBLAS handle, whose release would synchronize the device.
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle, FG_SGEMM_SPLIT_K));
  for (int i = 0; i < 3; ++i) REQUIRE_FG_OK(product.run(handle));
  cudaEvent_t done;
  REQUIRE_CUDA_OK(cudaEventCreate(&done));
  REQUIRE_CUDA_OK(cudaEventRecord(done, nullptr));
  REQUIRE_FG_OK(fg_destroy(handle));
  CHECK(cudaEventQuery(done) == cudaSuccess);
  CHECK(product.sampled_error() < 1e-5);
  REQUIRE_CUDA_OK(cudaEventDestroy(done));
  require_no_pending_fault();
}

// The first thread exits with its work on its per-thread stream possibly still running: in a process that has used
// the stream-ordered allocator (every earlier test's handle has), the CUDA driver can hang that exit unless the thread
// waits for that stream, as fastgemm makes it (docs/c-api.md). Each algorithm runs on a fresh handle, so that the first
// thread's call also allocates the workspace.
TEST_CASE("stream changes never free a workspace in use; the per-thread stream from two threads in turn",
          "[workspace][per_thread_stream]") {
  RowmeanData first(128, 50, 16, 3), second(128, 50, 16, 4);
  for (fg_rowmean_algo_t algo : rowmean_algos(Handle().get())) {
    Handle handle;
    INFO("algorithm " << fg_rowmean_algo_name(algo));
    REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), algo));
    REQUIRE_FG_OK(fg_set_stream(handle.get(), cudaStreamPerThread));
    fg_status_t statuses[2] = {FG_STATUS_INTERNAL_ERROR, FG_STATUS_INTERNAL_ERROR};
    std::string messages[2];
    cudaError_t synchronized = cudaErrorUnknown;
    // One thread at a time, no synchronization between them: the second call must wait for the first's
    // use of the workspace although it runs on another thread's default stream. (Catch's assertions stay
    // on the main thread.)
    const size_t output_bytes = first.L * first.N * sizeof(double);
    std::thread([&] {
      (void)cudaMemsetAsync(first.d_output.get(), 0xff, output_bytes, cudaStreamPerThread);
      statuses[0] = first.run(handle.get());
      messages[0] = fg_last_error_message();
    }).join();
    std::thread([&] {
      (void)cudaMemsetAsync(second.d_output.get(), 0xff, output_bytes, cudaStreamPerThread);
      statuses[1] = second.run(handle.get());
      messages[1] = fg_last_error_message();
      synchronized = cudaDeviceSynchronize();
    }).join();
    INFO(messages[0] << " / " << messages[1]);
    CHECK(synchronized == cudaSuccess);
    CHECK(statuses[0] == FG_STATUS_SUCCESS);
    CHECK(statuses[1] == FG_STATUS_SUCCESS);
    CHECK(first.error(nullptr) < 1e-12);
    CHECK(second.error(nullptr) < 1e-12);
  }
  require_no_pending_fault();
}

// A thread that enqueued work on its per-thread stream through fastgemm and exits without synchronizing: its exit
// waits for that work, which is what keeps the exit out of the driver's hang above. Checked without any
// synchronization after the join: an event the thread recorded after its calls must have completed.
TEST_CASE("a thread's exit waits for what it enqueued on its per-thread stream through fastgemm",
          "[workspace][per_thread_stream]") {
  constexpr int64_t n = 2048;
  constexpr int calls = 12;  // about 4 ms of products on the H100: far longer than a thread's exit and join
  std::vector<float> a(n * n), b(n * n);
  fill_uniform(a, 71);
  fill_uniform(b, 72);
  DeviceMemory d_a(n * n * sizeof(float)), d_b(n * n * sizeof(float)), d_c(n * n * sizeof(float));
  upload(d_a, a);
  upload(d_b, b);
  REQUIRE_CUDA_OK(cudaMemset(d_c.get(), 0xff, n * n * sizeof(float)));  // NaN
  REQUIRE_CUDA_OK(cudaDeviceSynchronize());
  Handle handle;
  REQUIRE_FG_OK(fg_set_stream(handle.get(), cudaStreamPerThread));
  cudaEvent_t done = nullptr;
  REQUIRE_CUDA_OK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  fg_status_t status = FG_STATUS_INTERNAL_ERROR;
  cudaError_t recorded = cudaErrorUnknown;
  std::thread([&] {
    for (int call = 0; call < calls; ++call) {
      status = fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, n, n, n, 1.0f, d_a.as<float>(), n,
                        d_b.as<float>(), n, 0.0f, d_c.as<float>(), n);
      if (status != FG_STATUS_SUCCESS) break;
    }
    recorded = cudaEventRecord(done, cudaStreamPerThread);
  }).join();
  const cudaError_t after_exit = cudaEventQuery(done);
  REQUIRE(status == FG_STATUS_SUCCESS);
  REQUIRE(recorded == cudaSuccess);
  CHECK(after_exit == cudaSuccess);
  REQUIRE_CUDA_OK(cudaEventSynchronize(done));
  REQUIRE_CUDA_OK(cudaEventDestroy(done));
  // The products themselves are right: a sample of C against a double-precision reference.
  const std::vector<float> c = download<float>(d_c, n * n);
  double worst = 0;
  for (int64_t sample = 0; sample < 64; ++sample) {
    const int64_t row = (sample * 977) % n, col = (sample * 1531 + 7) % n;
    double exact = 0, magnitude = 0;
    for (int64_t i = 0; i < n; ++i) {
      exact += double(a[row * n + i]) * b[i * n + col];
      magnitude += std::fabs(double(a[row * n + i]) * b[i * n + col]);
    }
    worst = std::max(worst, std::fabs(c[row * n + col] - exact) / magnitude);
  }
  CHECK(worst < 1e-5);  // NaN (an unwritten element) fails too
  require_no_pending_fault();
}

TEST_CASE("a call from a thread that chose no device leaves that thread without a current context", "[probe]") {
  Handle handle;
  void *function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  REQUIRE_CUDA_OK(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &function, 12000, cudaEnableDefault, &found));
  REQUIRE(found == cudaDriverEntryPointSuccess);
  const auto get_current = reinterpret_cast<int (*)(void **)>(function);
  RowmeanData data(32, 8, 4, 71);
  int before = -1, after = -1;
  void *context_before = &before, *context_after = &after;
  fg_status_t status = FG_STATUS_INTERNAL_ERROR;
  std::thread([&] {
    before = get_current(&context_before);
    status = data.run(handle.get());
    after = get_current(&context_after);
  }).join();
  INFO(fg_status_name(status));
  CHECK(status == FG_STATUS_SUCCESS);
  CHECK(before == 0);
  CHECK(after == 0);
  CHECK(context_before == nullptr);
  CHECK(context_after == nullptr);  // the handle's context was pushed for the call and popped after
  CHECK(data.error(nullptr) < 1e-12);
}
