// SPDX-License-Identifier: Apache-2.0
// The parts of the C ABI that need no GPU: version, status and algorithm names, NULL handles, and
// fg_create's answer on the machine at hand; with a GPU, fg_last_cuda_error after a CUDA failure the test
// provokes.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "fastgemm/fastgemm.h"

TEST_CASE("version: library and header agree", "[abi]") {
  CHECK(fg_version() == FG_VERSION);
  CHECK(FG_VERSION == FG_VERSION_MAJOR * 10000 + FG_VERSION_MINOR * 100 + FG_VERSION_PATCH);
}

TEST_CASE("status: every value has its name and a sentence", "[abi]") {
  const std::pair<fg_status_t, const char *> names[] = {{FG_STATUS_SUCCESS, "FG_STATUS_SUCCESS"},
                                                        {FG_STATUS_INVALID_VALUE, "FG_STATUS_INVALID_VALUE"},
                                                        {FG_STATUS_INVALID_HANDLE, "FG_STATUS_INVALID_HANDLE"},
                                                        {FG_STATUS_NOT_SUPPORTED, "FG_STATUS_NOT_SUPPORTED"},
                                                        {FG_STATUS_NO_DEVICE, "FG_STATUS_NO_DEVICE"},
                                                        {FG_STATUS_ALLOC_FAILED, "FG_STATUS_ALLOC_FAILED"},
                                                        {FG_STATUS_CUDA_ERROR, "FG_STATUS_CUDA_ERROR"},
                                                        {FG_STATUS_CUBLAS_ERROR, "FG_STATUS_CUBLAS_ERROR"},
                                                        {FG_STATUS_INTERNAL_ERROR, "FG_STATUS_INTERNAL_ERROR"}};
  std::set<std::string> sentences;
  int expected_value = 0;
  for (const auto &entry : names) {
    CHECK(static_cast<int>(entry.first) == expected_value++);  // values are pinned: 0..8 in this order
    CHECK(std::string(fg_status_name(entry.first)) == entry.second);
    const std::string sentence = fg_status_string(entry.first);
    CHECK(sentence.size() > 10);
    CHECK(sentence.back() == '.');
    sentences.insert(sentence);
  }
  CHECK(sentences.size() == 9);
  CHECK(std::string(fg_status_name(static_cast<fg_status_t>(9))) == "FG_STATUS_UNKNOWN");
  CHECK(std::string(fg_status_name(static_cast<fg_status_t>(-1))) == "FG_STATUS_UNKNOWN");
  CHECK(sentences.count(fg_status_string(static_cast<fg_status_t>(42))) == 0);
}

TEST_CASE("enumerations carry the CBLAS and API values", "[abi]") {
  CHECK(FG_ROW_MAJOR == 101);
  CHECK(FG_COL_MAJOR == 102);
  CHECK(FG_OP_N == 111);
  CHECK(FG_OP_T == 112);
  CHECK(FG_OP_C == 113);
  CHECK(FG_SGEMM_AUTO == 0);
  CHECK(FG_SGEMM_DOUBLE_BUFFER == 5);
  CHECK(FG_SGEMM_PIPELINED == 6);
  CHECK(FG_SGEMM_SMALL_TILE == 7);
  CHECK(FG_SGEMM_SPLIT_K == 8);
  CHECK(FG_SGEMM_CUBLAS == 100);
  CHECK(FG_ROWMEAN_COALESCED == 3);
  CHECK(FG_ROWMEAN_RELAY == 7);
  CHECK(FG_ROWMEAN_PIPELINED == FG_ROWMEAN_RELAY);  // the relay's former name, kept as an alias
  CHECK(FG_ROWMEAN_CUBLAS == 100);
  CHECK(FG_F32 == 0);
  CHECK(FG_F64 == 1);
  CHECK(FG_REPRODUCIBLE_RUN == 0);
  CHECK(FG_REPRODUCIBLE_SHAPE == 1);
}

TEST_CASE("algorithm names", "[abi]") {
  CHECK(std::string(fg_sgemm_algo_name(FG_SGEMM_AUTO)) == "auto");
  CHECK(std::string(fg_sgemm_algo_name(FG_SGEMM_NAIVE)) == "naive");
  CHECK(std::string(fg_sgemm_algo_name(FG_SGEMM_CUBLAS)) == "cublas");
  CHECK(std::string(fg_sgemm_algo_name(static_cast<fg_sgemm_algo_t>(77))) == "unknown");
  CHECK(std::string(fg_sgemm_algo_name(static_cast<fg_sgemm_algo_t>(-5))) == "unknown");
  CHECK(std::string(fg_rowmean_algo_name(FG_ROWMEAN_AUTO)) == "auto");
  CHECK(std::string(fg_rowmean_algo_name(FG_ROWMEAN_TWO_PASS)) == "two_pass");
  CHECK(std::string(fg_rowmean_algo_name(FG_ROWMEAN_RELAY)) == "relay");
  CHECK(std::string(fg_rowmean_algo_name(FG_ROWMEAN_PIPELINED)) == "relay");
  CHECK(std::string(fg_sgemm_algo_name(FG_SGEMM_PIPELINED)) == "pipelined");  // another algorithm, not renamed
  CHECK(std::string(fg_rowmean_algo_name(FG_ROWMEAN_CUBLAS)) == "cublas");
  CHECK(std::string(fg_rowmean_algo_name(static_cast<fg_rowmean_algo_t>(1000))) == "unknown");
}

namespace {
void check_null_handle(fg_status_t status, const char *function) {
  INFO(function);
  CHECK(status == FG_STATUS_INVALID_HANDLE);
  const std::string message = fg_last_error_message();
  CHECK(message == std::string(function) + ": handle is NULL");
}
}  // namespace

TEST_CASE("every entry point given a NULL handle returns FG_STATUS_INVALID_HANDLE", "[abi]") {
  float value = 0;
  cudaStream_t stream = nullptr;
  fg_sgemm_algo_t sgemm_algo;
  fg_rowmean_algo_t rowmean_algo;
  check_null_handle(fg_set_stream(nullptr, nullptr), "fg_set_stream");
  check_null_handle(fg_get_stream(nullptr, &stream), "fg_get_stream");
  size_t bytes = 0;
  check_null_handle(fg_set_workspace(nullptr, nullptr, 0), "fg_set_workspace");
  check_null_handle(fg_sgemm_workspace_size(nullptr, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 1, 1, 1, 1, &bytes),
                    "fg_sgemm_workspace_size");
  check_null_handle(fg_rowmean_workspace_size(nullptr, FG_F32, 1, 1, 1, &bytes), "fg_rowmean_workspace_size");
  check_null_handle(
      fg_sgemm(nullptr, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 1, 1, 1, 1.0f, &value, 1, &value, 1, 0.0f, &value, 1),
      "fg_sgemm");
  check_null_handle(fg_sgemm_strided_batched(nullptr, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 1, 1, 1, 1.0f, &value, 1, 1,
                                             &value, 1, 1, 0.0f, &value, 1, 1, 1),
                    "fg_sgemm_strided_batched");
  check_null_handle(fg_set_sgemm_algo(nullptr, FG_SGEMM_NAIVE), "fg_set_sgemm_algo");
  check_null_handle(fg_get_sgemm_algo(nullptr, &sgemm_algo), "fg_get_sgemm_algo");
  check_null_handle(fg_get_last_sgemm_algo(nullptr, &sgemm_algo), "fg_get_last_sgemm_algo");
  int moduli = -1;
  int64_t fp32_elements = -1;
  check_null_handle(fg_get_last_sgemm_emulation(nullptr, &moduli, &fp32_elements), "fg_get_last_sgemm_emulation");
  CHECK((moduli == -1 && fp32_elements == -1));  // nothing written on failure
  check_null_handle(fg_rowmean_matvec(nullptr, FG_F32, &value, &value, &value, 1, 1, 1), "fg_rowmean_matvec");
  check_null_handle(fg_set_rowmean_algo(nullptr, FG_ROWMEAN_AUTO), "fg_set_rowmean_algo");
  check_null_handle(fg_get_rowmean_algo(nullptr, &rowmean_algo), "fg_get_rowmean_algo");
  check_null_handle(fg_get_last_rowmean_algo(nullptr, &rowmean_algo), "fg_get_last_rowmean_algo");
  fg_reproducibility_t level = FG_REPRODUCIBLE_RUN;
  check_null_handle(fg_set_reproducibility(nullptr, FG_REPRODUCIBLE_SHAPE), "fg_set_reproducibility");
  check_null_handle(fg_get_reproducibility(nullptr, &level), "fg_get_reproducibility");
  CHECK(fg_destroy(nullptr) == FG_STATUS_SUCCESS);
  CHECK(value == 0.0f);
}

TEST_CASE("fg_create reports the machine's device, or its absence", "[abi]") {
  CHECK(fg_create(nullptr) == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()) == "fg_create: handle is NULL");
  int devices = 0;
  const bool has_device = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  fg_handle_t handle = reinterpret_cast<fg_handle_t>(&devices);
  const fg_status_t status = fg_create(&handle);
  if (has_device) {
    CHECK(status == FG_STATUS_SUCCESS);
    CHECK(handle != nullptr);
    CHECK(fg_destroy(handle) == FG_STATUS_SUCCESS);
  } else {
    CHECK(status == FG_STATUS_NO_DEVICE);
    CHECK(handle == nullptr);
    const std::string message = fg_last_error_message();
    INFO(message);
    // What it means first, then CUDA's own words as the detail. Without any driver it says so, not that
    // the driver is too old.
    int driver = -1;
    const bool no_driver = cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0;
    CHECK(message.find("fg_create: ") == 0);
    CHECK(message.find(" cudaGetDeviceCount failed: ") != std::string::npos);
    if (no_driver) {
      CHECK(message.find("fg_create: no NVIDIA driver found (no libcuda.so.1 is installed): ") == 0);
      CHECK(message.find("update the driver") == std::string::npos);
    }
    CHECK(fg_last_cuda_error() != 0);
  }
}

namespace {

// A CUDA failure on a machine with a device, one that leaves the device usable: while a blocking stream is
// being captured, CUDA refuses any use of the legacy stream (cudaErrorStreamCaptureImplicit, in every capture
// mode), so a call on a handle whose stream is the legacy stream fails as it enqueues. Once the capture has
// ended the same call succeeds. Returns fg_last_cuda_error() as the failure left it.
int provoke_cuda_failure_on_device() {
  fg_handle_t created = nullptr;
  REQUIRE(fg_create(&created) == FG_STATUS_SUCCESS);
  const std::unique_ptr<fg_context, decltype(&fg_destroy)> handle(created, fg_destroy);
  // The naive kernel needs no workspace and no cuBLAS, whatever the math mode: the stream's first use in the
  // call is fastgemm's own, and the failure is a CUDA error, not cuBLAS's status.
  REQUIRE(fg_set_sgemm_algo(handle.get(), FG_SGEMM_NAIVE) == FG_STATUS_SUCCESS);
  REQUIRE(fg_set_stream(handle.get(), cudaStreamLegacy) == FG_STATUS_SUCCESS);
  constexpr int kSize = 4;
  constexpr size_t kElements = kSize * kSize;
  void *allocated = nullptr;
  REQUIRE(cudaMalloc(&allocated, 3 * kElements * sizeof(float)) == cudaSuccess);
  const std::unique_ptr<void, decltype(&cudaFree)> memory(allocated, cudaFree);
  float *a = static_cast<float *>(allocated), *b = a + kElements, *c = b + kElements;
  const std::vector<float> ones(2 * kElements, 1.0f);
  REQUIRE(cudaMemcpy(a, ones.data(), ones.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
  REQUIRE(cudaMemset(c, 0, kElements * sizeof(float)) == cudaSuccess);
  const auto product = [&] {
    return fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, kSize, kSize, kSize, 1.0f, a, kSize, b, kSize, 0.0f,
                    c, kSize);
  };

  cudaStream_t made = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&made, cudaStreamDefault) == cudaSuccess);  // blocking: synchronizes with legacy
  const std::unique_ptr<CUstream_st, decltype(&cudaStreamDestroy)> blocking(made, cudaStreamDestroy);
  REQUIRE(cudaStreamBeginCapture(blocking.get(), cudaStreamCaptureModeRelaxed) == cudaSuccess);
  const fg_status_t status = product();
  const std::string message = fg_last_error_message();
  const int error = fg_last_cuda_error();
  // The refused use has invalidated the capture (or, refused at a query, left it empty): either way it ends
  // here, before anything can leave the test with the stream still capturing.
  cudaGraph_t graph = nullptr;
  (void)cudaStreamEndCapture(blocking.get(), &graph);
  if (graph != nullptr) (void)cudaGraphDestroy(graph);
  (void)cudaGetLastError();

  INFO(fg_status_name(status) << ": " << message);
  CHECK(status == FG_STATUS_CUDA_ERROR);
  // Which of the call's CUDA calls meets the refusal first (a query of the stream, or the launch) is the runtime's
  // business; the error it returns is the one fg_last_cuda_error tells, and the message names it.
  CHECK(error != 0);
  CHECK(message.find("fg_sgemm: ") == 0);
  CHECK(message.find(cudaGetErrorName(static_cast<cudaError_t>(error))) != std::string::npos);
  // A call that succeeds leaves the error as it is, as it leaves the message: both tell of the last failure.
  CHECK(product() == FG_STATUS_SUCCESS);
  CHECK(fg_last_cuda_error() == error);
  CHECK(std::string(fg_last_error_message()) == message);
  std::vector<float> result(kElements, 0.0f);
  CHECK(cudaMemcpy(result.data(), c, kElements * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(std::all_of(result.begin(), result.end(), [](float x) { return x == float(kSize); }));
  return error;
}

}  // namespace

TEST_CASE("fg_last_cuda_error: the last CUDA failure's error, kept by later calls, per thread", "[abi]") {
  int devices = 0;
  const bool has_device = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  int error = 0;
  if (has_device) {
    error = provoke_cuda_failure_on_device();
  } else {
    fg_handle_t handle = nullptr;
    REQUIRE(fg_create(&handle) == FG_STATUS_NO_DEVICE);
    error = fg_last_cuda_error();
  }
  REQUIRE(error != 0);
  float value = 0;
  CHECK(fg_sgemm(nullptr, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 1, 1, 1, 1.0f, &value, 1, &value, 1, 0.0f, &value, 1) ==
        FG_STATUS_INVALID_HANDLE);
  CHECK(fg_last_cuda_error() == error);
  CHECK(fg_create(nullptr) == FG_STATUS_INVALID_VALUE);
  CHECK(fg_last_cuda_error() == error);
  CHECK(std::string(fg_last_error_message()).find("fg_create: handle is NULL") == 0);
  std::string other_message = "unset";
  int other_error = -1;
  std::thread([&] {
    other_message = fg_last_error_message();
    other_error = fg_last_cuda_error();
  }).join();
  CHECK(other_message.empty());
  CHECK(other_error == 0);
}

// A thread_local whose destructor calls the library while its thread ends. It is used first, so it is destroyed
// last, after the library's own per-thread text (its last error message): libfastgemm_blas destroys each thread's
// handles from such a destructor, and so may any program.
struct CallsWhileEnding {
  std::string *message = nullptr;
  fg_status_t *status = nullptr;
  ~CallsWhileEnding() {
    if (message == nullptr) return;
    *status = fg_set_stream(nullptr, nullptr);
    *message = fg_last_error_message();
  }
};
thread_local CallsWhileEnding t_calls_while_ending;

TEST_CASE("a call from another thread_local's destructor, after the thread's message is gone, writes no freed memory",
          "[abi]") {
  std::string message = "unset";
  fg_status_t status = FG_STATUS_SUCCESS;
  std::thread([&] {
    t_calls_while_ending.message = &message;
    t_calls_while_ending.status = &status;
    // The library's message, made now, long enough to live in a buffer of its own.
    (void)fg_set_stream(nullptr, nullptr);
  }).join();
  // The call still answers; its message is not kept (the thread's text is gone), and reading it gives "".
  CHECK(status == FG_STATUS_INVALID_HANDLE);
  CHECK(message.empty());
}

// Run by the unit.stub_driver CTest entry, with the toolkit's stub libcuda first on the loader path.
TEST_CASE("fg_create with the driver's stub library: FG_STATUS_NO_DEVICE", "[.stub]") {
  int devices = 0;
  REQUIRE(cudaGetDeviceCount(&devices) == cudaErrorStubLibrary);
  fg_handle_t handle = reinterpret_cast<fg_handle_t>(&devices);
  CHECK(fg_create(&handle) == FG_STATUS_NO_DEVICE);
  CHECK(handle == nullptr);
  CHECK(fg_last_cuda_error() == static_cast<int>(cudaErrorStubLibrary));
  CHECK(std::string(fg_last_error_message()).find("cudaErrorStubLibrary") != std::string::npos);
}

// Run by the log.* CTest entries, which read what it prints with and without FASTGEMM_LOG=1.
TEST_CASE("log: calls to trace", "[.log]") {
  float value = 0;
  CHECK(fg_sgemm(nullptr, FG_ROW_MAJOR, FG_OP_T, FG_OP_N, 3, 4, 5, 1.5f, &value, 3, &value, 4, 0.0f, &value, 4) ==
        FG_STATUS_INVALID_HANDLE);
  CHECK(fg_rowmean_matvec(nullptr, FG_F64, &value, &value, &value, 7, 8, 9) == FG_STATUS_INVALID_HANDLE);
  // A line past 320 characters, which the log once cut short: its end (C's stride, the batch count and
  // the algorithm) must reach stderr whole.
  constexpr int64_t kLong = 1234567890123;
  CHECK(fg_sgemm_strided_batched(nullptr, FG_COL_MAJOR, FG_OP_T, FG_OP_T, kLong, kLong, kLong, 1.5f, &value, kLong,
                                 kLong, &value, kLong, kLong, 0.25f, &value, kLong, kLong + 1,
                                 kLong + 2) == FG_STATUS_INVALID_HANDLE);
}
