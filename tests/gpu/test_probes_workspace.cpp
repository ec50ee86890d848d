// SPDX-License-Identifier: Apache-2.0
// Programs as a user writes them against the public header, on workspaces: a caller-owned one (no
// allocation, any capture, too small refused), the size queries, and AUTO within a small one.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "gpu/probe_support.hpp"

using namespace fgtest;

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
  // Host memory is no workspace, pinned or pageable, whatever the bytes.
  void *pinned = nullptr;
  REQUIRE_CUDA_OK(cudaMallocHost(&pinned, 4096));
  for (size_t bytes : {size_t{0}, size_t{4096}}) {
    INFO("bytes " << bytes);
    CHECK(fg_set_workspace(handle.get(), pinned, bytes) == FG_STATUS_INVALID_VALUE);
    CHECK(std::string(fg_last_error_message()).find("pinned host memory") != std::string::npos);
  }
  REQUIRE_CUDA_OK(cudaFreeHost(pinned));
  alignas(256) static char pageable[4096];
  CHECK(fg_set_workspace(handle.get(), pageable, 0) == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).find("pageable host memory") != std::string::npos);
  REQUIRE_FG_OK(fg_set_workspace(handle.get(), workspace.get(), size_t{64} << 20));
  cudaStream_t stream;
  REQUIRE_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  REQUIRE_FG_OK(fg_set_stream(handle.get(), stream));
  for (fg_rowmean_algo_t algo : rowmean_algos(handle.get())) {
    INFO("algorithm " << fg_rowmean_algo_name(algo));
    REQUIRE_FG_OK(fg_set_rowmean_algo(handle.get(), algo));
    // No warm-up: with the caller's workspace even the first call allocates nothing.
    cudaGraphExec_t exec = capture_call(stream, [&] { return data.run(handle.get()); });
    for (int replay = 0; replay < 3; ++replay) {
      data.poison(stream);
      REQUIRE_CUDA_OK(cudaGraphLaunch(exec, stream));
      CHECK(data.error(stream) < 1e-12);
    }
    REQUIRE_CUDA_OK(cudaGraphExecDestroy(exec));
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
    cudaGraphExec_t exec = capture_call(stream, [&] {
      return fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, gc.m, gc.n, gc.k, 1.0f, da.as<float>(), gc.k,
                      db.as<float>(), gc.n, 0.0f, dc.as<float>(), gc.n);
    });
    for (int replay = 0; replay < 3; ++replay) {
      REQUIRE_CUDA_OK(cudaMemsetAsync(dc.get(), 0xff, c.size() * 4, stream));
      REQUIRE_CUDA_OK(cudaGraphLaunch(exec, stream));
      REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
      CHECK(relative_error(download<float>(dc, c.size()), reference) < gemm_tolerance(gc.k));
    }
    REQUIRE_CUDA_OK(cudaGraphExecDestroy(exec));
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
  // The first is a shape the slow single_block fits; the second is past L = 1024, where the one-thread-per-row rungs
  // refuse.
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
