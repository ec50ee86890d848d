// SPDX-License-Identifier: Apache-2.0
// Programs as a user writes them against the public header: graphs captured after stream changes, streams
// that die before the handle, caller-owned workspaces, the per-thread default stream from two threads,
// operands off their element boundary or past their allocation, C sharing memory with A, memory of every
// kind, non-finite values, and m past the grid's row-tile limit.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <thread>

#include "gpu/gemm_harness.hpp"

using namespace fgtest;

namespace {

std::vector<fg_rowmean_algo_t> rowmean_algos(fg_handle_t handle) {
  std::vector<fg_rowmean_algo_t> algos{FG_ROWMEAN_AUTO};
  for (fg_rowmean_algo_t algo : carried_rowmean_algos(handle)) algos.push_back(algo);
  return algos;
}

// An f64 rowmean problem in device memory with its extended-precision reference.
struct RowmeanData {
  int64_t L, M, N;
  std::vector<double> input, matrix;
  std::vector<long double> reference;
  DeviceMemory d_input, d_matrix, d_output;

  RowmeanData(int64_t L_, int64_t M_, int64_t N_, uint64_t seed)
      : L(L_),
        M(M_),
        N(N_),
        input(N_ * L_ * M_),
        matrix(L_ * L_),
        d_input(N_ * L_ * M_ * sizeof(double)),
        d_matrix(L_ * L_ * sizeof(double)),
        d_output(L_ * N_ * sizeof(double)) {
    fill_uniform(input, seed);
    fill_uniform(matrix, seed + 1);
    upload(d_input, input);
    upload(d_matrix, matrix);
    reference = reference_rowmean(input, matrix, L, M, N);
  }
  fg_status_t run(fg_handle_t handle) const {
    return fg_rowmean_matvec(handle, FG_F64, d_input.get(), d_matrix.get(), d_output.get(), L, M, N);
  }
  void poison(cudaStream_t stream) const {
    REQUIRE_CUDA_OK(cudaMemsetAsync(d_output.get(), 0xff, L * N * sizeof(double), stream));  // NaN
  }
  double error(cudaStream_t stream) const {
    REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
    return relative_error(download<double>(d_output, L * N), reference);
  }
};

std::vector<unsigned char> read_bytes(const DeviceMemory &memory, size_t bytes) {
  std::vector<unsigned char> host(bytes);
  REQUIRE_CUDA_OK(cudaMemcpy(host.data(), memory.get(), bytes, cudaMemcpyDeviceToHost));
  return host;
}

void require_no_pending_fault() {
  REQUIRE_CUDA_OK(cudaDeviceSynchronize());
  REQUIRE_CUDA_OK(cudaGetLastError());
}

}  // namespace

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
    REQUIRE_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const fg_status_t captured = data.run(handle.get());
    cudaGraph_t graph = nullptr;
    REQUIRE_CUDA_OK(cudaStreamEndCapture(stream, &graph));
    INFO(fg_last_error_message());
    REQUIRE(captured == FG_STATUS_SUCCESS);
    cudaGraphExec_t exec = nullptr;
    REQUIRE_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 4; ++replay) {
      data.poison(stream);
      REQUIRE_CUDA_OK(cudaGraphLaunch(exec, stream));
      CHECK(data.error(stream) < 1e-12);
    }
    REQUIRE_CUDA_OK(cudaGraphExecDestroy(exec));
    REQUIRE_CUDA_OK(cudaGraphDestroy(graph));
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
// the stream-ordered allocator (every earlier test's handle has), that exit hung in the CUDA driver (580, H100) until
// fastgemm made a thread that called it on cudaStreamPerThread wait for that stream when it exits. Each algorithm
// runs on a fresh handle, so that the first thread's call also allocates the workspace.
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

TEST_CASE("a caller's workspace: no allocation, any capture; too small is NOT_SUPPORTED naming the bytes",
          "[workspace]") {
  Handle handle;
  RowmeanData data(200, 30, 9, 11);
  DeviceMemory workspace(size_t{64} << 20);
  CHECK(fg_set_workspace(handle.get(), nullptr, 16) == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).find("workspace is NULL") != std::string::npos);
  CHECK(fg_set_workspace(handle.get(), workspace.as<char>() + 16, 1024) == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).find("256 bytes") != std::string::npos);
  CHECK(fg_set_workspace(handle.get(), workspace.get(), (size_t{64} << 20) + 256) == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).find("runs past the end of its allocation") != std::string::npos);
  REQUIRE_FG_OK(fg_set_workspace(handle.get(), workspace.get(), size_t{64} << 20));
  cudaStream_t stream;
  REQUIRE_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  REQUIRE_FG_OK(fg_set_stream(handle.get(), stream));
  for (fg_rowmean_algo_t algo : rowmean_algos(handle.get())) {
    INFO("algorithm " << fg_rowmean_algo_name(algo));
    REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), algo));
    // No warm-up: with the caller's workspace even the first call allocates nothing.
    REQUIRE_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const fg_status_t captured = data.run(handle.get());
    cudaGraph_t graph = nullptr;
    REQUIRE_CUDA_OK(cudaStreamEndCapture(stream, &graph));
    INFO(fg_last_error_message());
    REQUIRE(captured == FG_STATUS_SUCCESS);
    cudaGraphExec_t exec = nullptr;
    REQUIRE_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 3; ++replay) {
      data.poison(stream);
      REQUIRE_CUDA_OK(cudaGraphLaunch(exec, stream));
      CHECK(data.error(stream) < 1e-12);
    }
    REQUIRE_CUDA_OK(cudaGraphExecDestroy(exec));
    REQUIRE_CUDA_OK(cudaGraphDestroy(graph));
  }
  // cuBLAS SGEMM inside a global-mode capture, on the caller's workspace only.
  {
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_CUBLAS));
    GemmCase gc;
    gc.m = 70, gc.n = 50, gc.k = 90;
    std::vector<float> a(gc.m * gc.k), b(gc.k * gc.n), c(gc.m * gc.n, 0.0f);
    fill_uniform(a, 5);
    fill_uniform(b, 6);
    DeviceMemory da(a.size() * 4), db(b.size() * 4), dc(c.size() * 4);
    upload(da, a);
    upload(db, b);
    const std::vector<double> reference = reference_gemm(gc.resolved(), a, b, c);
    REQUIRE_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const fg_status_t captured = fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, gc.m, gc.n, gc.k, 1.0f,
                                          da.as<float>(), gc.k, db.as<float>(), gc.n, 0.0f, dc.as<float>(), gc.n);
    cudaGraph_t graph = nullptr;
    REQUIRE_CUDA_OK(cudaStreamEndCapture(stream, &graph));
    INFO(fg_last_error_message());
    REQUIRE(captured == FG_STATUS_SUCCESS);
    cudaGraphExec_t exec = nullptr;
    REQUIRE_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 3; ++replay) {
      REQUIRE_CUDA_OK(cudaMemsetAsync(dc.get(), 0xff, c.size() * 4, stream));
      REQUIRE_CUDA_OK(cudaGraphLaunch(exec, stream));
      REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
      CHECK(relative_error(download<float>(dc, c.size()), reference) < gemm_tolerance(gc.k));
    }
    REQUIRE_CUDA_OK(cudaGraphExecDestroy(exec));
    REQUIRE_CUDA_OK(cudaGraphDestroy(graph));
  }
  // A workspace too small for an algorithm that needs one.
  REQUIRE_FG_OK(fg_set_workspace(handle.get(), workspace.get(), 256));
  REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), FG_ROWMEAN_TWO_PASS));
  data.poison(stream);
  CHECK(data.run(handle.get()) == FG_STATUS_NOT_SUPPORTED);
  CHECK(std::string(fg_last_error_message()).find("bytes of workspace") != std::string::npos);
  CHECK(std::isnan(data.error(stream)));  // nothing written
  // Back to a handle-owned workspace.
  REQUIRE_FG_OK(fg_set_workspace(handle.get(), nullptr, 0));
  REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), FG_ROWMEAN_TWO_PASS));
  data.poison(stream);
  REQUIRE_FG_OK(data.run(handle.get()));
  CHECK(data.error(stream) < 1e-12);
  REQUIRE_FG_OK(fg_set_stream(handle.get(), nullptr));
  REQUIRE_CUDA_OK(cudaStreamDestroy(stream));
  require_no_pending_fault();
}

TEST_CASE("rowmean operands off their element boundary are INVALID_VALUE naming them, never a fault", "[probe]") {
  Handle handle;
  const int64_t L = 8, M = 5, N = 3;
  for (fg_dtype_t dtype : {FG_F64, FG_F32}) {
    const size_t element = dtype == FG_F64 ? 8 : 4, off = element / 2;
    DeviceMemory input(N * L * M * element + 16), matrix(L * L * element + 16), output(L * N * element + 16);
    std::vector<double> values(N * L * M + 2);
    fill_uniform(values, 9);
    REQUIRE_CUDA_OK(cudaMemcpy(input.get(), values.data(), N * L * M * element, cudaMemcpyHostToDevice));
    REQUIRE_CUDA_OK(cudaMemcpy(matrix.get(), values.data(), L * L * element, cudaMemcpyHostToDevice));
    const char *names[] = {"input", "matrix", "output"};
    for (int which = 0; which < 3; ++which) {
      for (fg_rowmean_algo_t algo : rowmean_algos(handle.get())) {
        INFO((dtype == FG_F64 ? "f64 " : "f32 ")
             << names[which] << " + " << off << " bytes, " << fg_rowmean_algo_name(algo));
        REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), algo));
        REQUIRE_CUDA_OK(cudaMemset(output.get(), 0x7f, L * N * element + 16));
        const char *in = input.as<char>() + (which == 0 ? off : 0);
        const char *mat = matrix.as<char>() + (which == 1 ? off : 0);
        char *out = output.as<char>() + (which == 2 ? off : 0);
        CHECK(fg_rowmean_matvec(handle.get(), dtype, in, mat, out, L, M, N) == FG_STATUS_INVALID_VALUE);
        const std::string message = fg_last_error_message();
        INFO(message);
        CHECK(message.find(std::string("fg_rowmean_matvec: ") + names[which] + " = ") == 0);
        CHECK(message.find("not aligned") != std::string::npos);
        const std::vector<unsigned char> untouched = read_bytes(output, L * N * element + 16);
        CHECK(std::all_of(untouched.begin(), untouched.end(), [](unsigned char v) { return v == 0x7f; }));
      }
    }
  }
  require_no_pending_fault();
}

TEST_CASE("operands past the end of their allocation, a short C and C sharing memory with A are refused", "[probe]") {
  Handle handle;
  const int64_t m = 16, n = 12, k = 20;
  DeviceMemory a(m * k * 4), b(k * n * 4), c(m * n * 4);
  // Operands that end one element past a 2 MiB allocation, whatever granularity the allocator rounds to.
  constexpr size_t kAllocation = size_t{2} << 20;
  DeviceMemory block(kAllocation);
  const auto one_short = [&](int64_t elements) {
    return reinterpret_cast<float *>(block.as<char>() + kAllocation - (elements - 1) * 4);
  };
  std::vector<float> values(m * k);
  fill_uniform(values, 2);
  upload(a, values);
  const auto call = [&](const float *A, const float *B, float *C) {
    return fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, A, k, B, n, 0.0f, C, n);
  };
  const auto refused = [&](fg_status_t status, const std::string &start, const std::string &part) {
    const std::string message = fg_last_error_message();
    INFO(message);
    CHECK(status == FG_STATUS_INVALID_VALUE);
    CHECK(message.find(start) == 0);
    CHECK(message.find(part) != std::string::npos);
  };
  refused(call(one_short(m * k), b.as<float>(), c.as<float>()),
          "fg_sgemm: A = ", "runs past the end of its allocation");
  refused(call(a.as<float>() + 1, b.as<float>(), c.as<float>()),
          "fg_sgemm: A = ", "runs past the end of its allocation");
  refused(call(a.as<float>(), one_short(k * n), c.as<float>()),
          "fg_sgemm: B = ", "runs past the end of its allocation");
  refused(call(a.as<float>(), b.as<float>(), one_short(m * n)),
          "fg_sgemm: C = ", "runs past the end of its allocation");
  // C aliasing A (A is m x k, k >= n: C fits inside it).
  REQUIRE_CUDA_OK(cudaMemset(b.get(), 0, k * n * 4));
  refused(call(a.as<float>(), b.as<float>(), a.as<float>()), "fg_sgemm: C = ", "shares memory with A");
  CHECK(download<float>(a, m * k) == values);  // nothing written
  refused(call(a.as<float>(), b.as<float>(), b.as<float>() + 3), "fg_sgemm: C = ", "shares memory with B");
  // rowmean input past its allocation.
  DeviceMemory matrix(8 * 8 * 4), output(8 * 3 * 4);
  CHECK(fg_rowmean_matvec(handle.get(), FG_F32, one_short(8 * 5 * 3), matrix.get(), output.get(), 8, 5, 3) ==
        FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).find("fg_rowmean_matvec: input = ") == 0);
  // A refused pointer query leaves the caller's pending CUDA error alone.
  int host_value = 0;
  CHECK(cudaSetDevice(-1) == cudaErrorInvalidDevice);  // now pending for this thread
  refused(call(a.as<float>(), reinterpret_cast<const float *>(&host_value), c.as<float>()),
          "fg_sgemm: B = ", "pageable host memory");
  CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
  require_no_pending_fault();
}

// The handle caches what the driver said of an allocation, keyed by the driver's id of it: memory freed and
// allocated again (at the same address, as the allocator tends to give it back) is queried anew.
TEST_CASE("memory freed and allocated again smaller: an operand past its new end is refused", "[probe]") {
  Handle handle;
  const int64_t m = 2048, n = 1024, k = 8;  // C: 8 MiB
  const size_t c_bytes = m * n * 4, smaller = c_bytes / 2;
  std::vector<float> a(m * k), b(k * n);
  fill_uniform(a, 41);
  fill_uniform(b, 42);
  DeviceMemory da(a.size() * 4), db(b.size() * 4);
  upload(da, a);
  upload(db, b);
  const auto call = [&](void *C) {
    return fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, da.as<float>(), k, db.as<float>(), n,
                    0.0f, static_cast<float *>(C), n);
  };
  void *first = nullptr;
  REQUIRE_CUDA_OK(cudaMalloc(&first, c_bytes));
  REQUIRE_FG_OK(call(first));
  REQUIRE_FG_OK(call(first));  // now from the cache
  REQUIRE_CUDA_OK(cudaDeviceSynchronize());
  REQUIRE_CUDA_OK(cudaFree(first));
  // Half-size allocations until one lands where the first was (the allocator tends to hand freed address
  // ranges back); the refusal is checked on that one, or on the last if none did.
  std::vector<void *> candidates;
  void *second = nullptr;
  for (int attempt = 0; attempt < 8 && second != first; ++attempt) {
    REQUIRE_CUDA_OK(cudaMalloc(&second, smaller));
    candidates.push_back(second);
  }
  if (second != first) WARN("no allocation landed at the freed address; the refusal is checked at another");
  REQUIRE_CUDA_OK(cudaMemset(second, 0x7f, smaller));
  const fg_status_t status = call(second);
  INFO(fg_last_error_message());
  CHECK(status == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).find("C = ") != std::string::npos);
  CHECK(std::string(fg_last_error_message()).find("runs past the end of its allocation") != std::string::npos);
  std::vector<unsigned char> untouched(smaller);
  REQUIRE_CUDA_OK(cudaMemcpy(untouched.data(), second, smaller, cudaMemcpyDeviceToHost));
  CHECK(std::all_of(untouched.begin(), untouched.end(), [](unsigned char byte) { return byte == 0x7f; }));
  for (void *candidate : candidates) REQUIRE_CUDA_OK(cudaFree(candidate));
  require_no_pending_fault();
}

TEST_CASE("managed, pinned and host-registered operands", "[operands]") {
  Handle handle;
  const int64_t m = 33, n = 29, k = 41;
  std::vector<float> a(m * k), b(k * n), c(m * n);
  fill_uniform(a, 21);
  fill_uniform(b, 22);
  fill_uniform(c, 23);
  GemmCase gc;
  gc.m = m, gc.n = n, gc.k = k, gc.alpha = 1.5f, gc.beta = -0.5f;
  const std::vector<double> reference = reference_gemm(gc.resolved(), a, b, c);
  float *managed = nullptr, *pinned = nullptr;
  REQUIRE_CUDA_OK(cudaMallocManaged(reinterpret_cast<void **>(&managed), a.size() * 4));
  REQUIRE_CUDA_OK(cudaMallocHost(reinterpret_cast<void **>(&pinned), b.size() * 4));
  std::vector<float> registered(c.size() + 1024);
  REQUIRE_CUDA_OK(cudaHostRegister(registered.data(), registered.size() * 4, cudaHostRegisterDefault));
  for (fg_sgemm_algo_t algo : algos_under_test(handle.get())) {
    INFO("algorithm " << fg_sgemm_algo_name(algo));
    std::memcpy(managed, a.data(), a.size() * 4);
    std::memcpy(pinned, b.data(), b.size() * 4);
    std::memcpy(registered.data(), c.data(), c.size() * 4);
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), algo));
    const fg_status_t status = fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.5f, managed, k, pinned,
                                        n, -0.5f, registered.data(), n);
    INFO(fg_last_error_message());
    if (status == FG_STATUS_NOT_SUPPORTED && algo != FG_SGEMM_AUTO) continue;
    REQUIRE(status == FG_STATUS_SUCCESS);
    REQUIRE_CUDA_OK(cudaDeviceSynchronize());
    CHECK(relative_error(std::vector<float>(registered.begin(), registered.begin() + c.size()), reference) <
          gemm_tolerance(k));
  }
  // rowmean from managed input into pinned output.
  const int64_t L = 24, M = 7, N = 5;
  std::vector<float> input(N * L * M), matrix(L * L);
  fill_uniform(input, 31);
  fill_uniform(matrix, 32);
  std::memcpy(managed, input.data(), std::min(input.size(), a.size()) * 4);
  REQUIRE(input.size() <= a.size());
  DeviceMemory d_matrix(matrix.size() * 4);
  upload(d_matrix, matrix);
  const std::vector<long double> expected = reference_rowmean(input, matrix, L, M, N);
  REQUIRE(static_cast<int64_t>(b.size()) >= L * N);
  for (fg_rowmean_algo_t algo : rowmean_algos(handle.get())) {
    INFO("algorithm " << fg_rowmean_algo_name(algo));
    std::fill(pinned, pinned + L * N, std::numeric_limits<float>::quiet_NaN());
    REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), algo));
    REQUIRE_FG_OK(fg_rowmean_matvec(handle.get(), FG_F32, managed, d_matrix.get(), pinned, L, M, N));
    REQUIRE_CUDA_OK(cudaDeviceSynchronize());
    CHECK(relative_error(std::vector<float>(pinned, pinned + L * N), expected) < 1e-5);
  }
  REQUIRE_CUDA_OK(cudaHostUnregister(registered.data()));
  REQUIRE_CUDA_OK(cudaFreeHost(pinned));
  REQUIRE_CUDA_OK(cudaFree(managed));
}

TEST_CASE("NaN and Inf in A, B, alpha and beta follow FP32 semantics in every algorithm", "[sgemm-nonfinite]") {
  Handle handle;
  const int64_t m = 37, n = 45, k = 29;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  struct Case {
    const char *what;
    int64_t a_at, b_at;  // where a NaN/Inf goes in A / B (-1: none)
    float a_value, b_value, alpha, beta, c_value;
  };
  const Case cases[] = {
      {"NaN in A", 5 * k + 3, -1, nan, 0, 1.0f, 0.0f, 0.0f},
      {"Inf in B", -1, 7 * n + 11, 0, inf, 1.0f, 0.0f, 0.0f},
      {"Inf in A meets -Inf in B", 2 * k + 4, 4 * n + 9, inf, -inf, 1.0f, 0.0f, 0.0f},
      {"alpha NaN", -1, -1, 0, 0, nan, 0.0f, 0.0f},
      {"alpha Inf", -1, -1, 0, 0, inf, 0.0f, 0.0f},
      {"beta Inf over C", -1, -1, 0, 0, 1.0f, inf, 0.5f},
      {"beta NaN", -1, -1, 0, 0, 1.0f, nan, 0.5f},
      {"beta 0 over NaN C", -1, -1, 0, 0, 1.0f, 0.0f, nan},
  };
  std::vector<float> a(m * k), b(k * n);
  fill_uniform(a, 41);
  fill_uniform(b, 42);
  for (const Case &cs : cases) {
    std::vector<float> ca = a, cb = b, cc(m * n, cs.c_value);
    if (cs.a_at >= 0) ca[cs.a_at] = cs.a_value;
    if (cs.b_at >= 0) cb[cs.b_at] = cs.b_value;
    // The reference: each element in double, as IEEE arithmetic does it; beta == 0 never reads C.
    std::vector<double> expected(m * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) sum += double(ca[i * k + p]) * double(cb[p * n + j]);
        expected[i * n + j] = double(cs.alpha) * sum + (cs.beta == 0.0f ? 0.0 : double(cs.beta) * cc[i * n + j]);
      }
    DeviceMemory da(ca.size() * 4), db(cb.size() * 4), dc(cc.size() * 4);
    upload(da, ca);
    upload(db, cb);
    for (fg_sgemm_algo_t algo : algos_under_test(handle.get())) {
      INFO(cs.what << ", algorithm " << fg_sgemm_algo_name(algo));
      upload(dc, cc);
      REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), algo));
      const fg_status_t status = fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, cs.alpha,
                                          da.as<float>(), k, db.as<float>(), n, cs.beta, dc.as<float>(), n);
      if (status == FG_STATUS_NOT_SUPPORTED && algo != FG_SGEMM_AUTO) continue;
      REQUIRE_FG_OK(status);
      const std::vector<float> got = download<float>(dc, cc.size());
      int64_t mismatches = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        const double e = expected[i];
        const bool same_class = std::isnan(e) ? std::isnan(got[i])
                                : std::isinf(e)
                                    ? (std::isinf(got[i]) && std::signbit(got[i]) == std::signbit(e))
                                    : (std::isfinite(got[i]) && std::fabs(got[i] - e) <= 1e-4 * (1 + std::fabs(e)));
        mismatches += same_class ? 0 : 1;
      }
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("m past the grid's row-tile limit: m = 9,000,000, n = 3, k = 5 in every algorithm", "[tall]") {
  Handle handle;
  GemmCase gc;
  gc.m = 9000000, gc.n = 3, gc.k = 5, gc.alpha = 1.25f, gc.beta = 0.0f;
  check_gemm_case(handle.get(), algos_under_test(handle.get()), gc, 77);
}

TEST_CASE("k past 2^30: every algorithm sums all of k", "[huge]") {
  Handle handle;
  const int64_t tail = 4096, k = (int64_t{1} << 30) + tail;
  DeviceMemory a(k * 4), b(k * 4), c(4);
  REQUIRE_CUDA_OK(cudaMemset(a.get(), 0, k * 4));
  const std::vector<float> ones(tail, 1.0f);
  REQUIRE_CUDA_OK(cudaMemcpy(a.as<float>() + (k - tail), ones.data(), tail * 4, cudaMemcpyHostToDevice));
  // B all ones: 1.0f is 0x3f800000, so fill through a 32-bit pattern.
  std::vector<float> chunk(size_t{1} << 24, 1.0f);
  for (int64_t done = 0; done < k; done += static_cast<int64_t>(chunk.size())) {
    const int64_t count = std::min<int64_t>(chunk.size(), k - done);
    REQUIRE_CUDA_OK(cudaMemcpy(b.as<float>() + done, chunk.data(), count * 4, cudaMemcpyHostToDevice));
  }
  // The ladder's one-block kernels would take minutes over 2^30 steps of k; the tiled pipelines, the
  // split-k kernel, cuBLAS and AUTO are those whose k bookkeeping this checks.
  for (fg_sgemm_algo_t algo :
       {FG_SGEMM_AUTO, FG_SGEMM_PIPELINED, FG_SGEMM_SMALL_TILE, FG_SGEMM_SPLIT_K, FG_SGEMM_CUBLAS}) {
    if (fg_set_sgemm_algo(handle.get(), algo) != FG_STATUS_SUCCESS) continue;
    INFO("algorithm " << fg_sgemm_algo_name(algo));
    REQUIRE_CUDA_OK(cudaMemset(c.get(), 0xff, 4));
    REQUIRE_FG_OK(fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 1, 1, k, 1.0f, a.as<float>(), k, b.as<float>(),
                           1, 0.0f, c.as<float>(), 1));
    CHECK(download<float>(c, 1)[0] == static_cast<float>(tail));
  }
}

TEST_CASE("the size queries give a workspace every algorithm runs in; AUTO fits a small caller workspace",
          "[workspace]") {
  Handle handle;
  RowmeanData data(160, 24, 20, 51);
  DeviceMemory workspace(size_t{256} << 20);
  for (fg_rowmean_algo_t algo : rowmean_algos(handle.get())) {
    INFO("algorithm " << fg_rowmean_algo_name(algo));
    REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), algo));
    size_t bytes = 0;
    REQUIRE_FG_OK(fg_rowmean_workspace_size(handle.get(), FG_F64, data.L, data.M, data.N, &bytes));
    REQUIRE(bytes <= (size_t{256} << 20));
    REQUIRE_FG_OK(fg_set_workspace(handle.get(), workspace.get(), bytes));
    data.poison(nullptr);
    REQUIRE_FG_OK(data.run(handle.get()));
    CHECK(data.error(nullptr) < 1e-12);
    if (bytes > 0 && algo != FG_ROWMEAN_AUTO) {
      REQUIRE_FG_OK(fg_set_workspace(handle.get(), workspace.get(), bytes - 1));
      data.poison(nullptr);
      CHECK(data.run(handle.get()) == FG_STATUS_NOT_SUPPORTED);
      CHECK(std::string(fg_last_error_message()).find(std::to_string(bytes) + " bytes") != std::string::npos);
      CHECK(std::isnan(data.error(nullptr)));
    }
    REQUIRE_FG_OK(fg_set_workspace(handle.get(), nullptr, 0));
  }
  // AUTO with 256 bytes runs an algorithm that needs no more.
  REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), FG_ROWMEAN_AUTO));
  REQUIRE_FG_OK(fg_set_workspace(handle.get(), workspace.get(), 256));
  data.poison(nullptr);
  REQUIRE_FG_OK(data.run(handle.get()));
  CHECK(data.error(nullptr) < 1e-12);
  fg_rowmean_algo_t ran = FG_ROWMEAN_AUTO;
  REQUIRE_FG_OK(fg_get_last_rowmean_algo(handle.get(), &ran));
  REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), ran));
  size_t needed = 0;
  REQUIRE_FG_OK(fg_rowmean_workspace_size(handle.get(), FG_F64, data.L, data.M, data.N, &needed));
  CHECK(needed <= 256);
  // SGEMM: split-K asks for its partial sums; every algorithm runs within what the query says.
  const int64_t m = 64, n = 64, k = 8192;
  for (fg_sgemm_algo_t algo : algos_under_test(handle.get())) {
    INFO("algorithm " << fg_sgemm_algo_name(algo));
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), algo));
    size_t bytes = 0;
    REQUIRE_FG_OK(fg_sgemm_workspace_size(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1, &bytes));
    REQUIRE(bytes <= (size_t{256} << 20));
    REQUIRE_FG_OK(fg_set_workspace(handle.get(), workspace.get(), bytes));
    GemmCase gc;
    gc.m = m, gc.n = n, gc.k = k;
    check_gemm_case(handle.get(), {algo}, gc, 61);
  }
  CHECK(fg_sgemm_workspace_size(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, -1, 1, 1, 1, &needed) ==
        FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).find("fg_sgemm_workspace_size: m = -1") == 0);
  CHECK(fg_rowmean_workspace_size(handle.get(), FG_F32, 4, 0, 4, &needed) == FG_STATUS_INVALID_VALUE);
  CHECK(fg_rowmean_workspace_size(handle.get(), FG_F32, 4, 3, 4, nullptr) == FG_STATUS_INVALID_VALUE);
  REQUIRE_FG_OK(fg_set_workspace(handle.get(), nullptr, 0));
}

TEST_CASE("AUTO in a caller's workspace too small for staged runs coalesced, beyond L = 1024 too", "[workspace]") {
  Handle handle;
  DeviceMemory workspace(256);
  REQUIRE_FG_OK(fg_set_workspace(handle.get(), workspace.get(), 256));
  // The first used to run single_block (the table's first rung that fitted), the second to be refused.
  const int64_t shapes[][3] = {{512, 128, 64}, {2048, 64, 32}};
  for (const auto &shape : shapes) {
    const RowmeanData data(shape[0], shape[1], shape[2], 71);
    INFO("L " << data.L << " M " << data.M << " N " << data.N);
    data.poison(nullptr);
    const fg_status_t status = data.run(handle.get());
    INFO(fg_last_error_message());
    REQUIRE(status == FG_STATUS_SUCCESS);
    CHECK(data.error(nullptr) < 1e-12);
    fg_rowmean_algo_t ran = FG_ROWMEAN_AUTO;
    REQUIRE_FG_OK(fg_get_last_rowmean_algo(handle.get(), &ran));
    CHECK(ran == FG_ROWMEAN_COALESCED);
  }
  REQUIRE_FG_OK(fg_set_workspace(handle.get(), nullptr, 0));
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
