// SPDX-License-Identifier: Apache-2.0
// fg_sgemm and fg_sgemm_strided_batched against a double-precision CPU reference, for every algorithm the
// build carries and AUTO, across the whole contract.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>

#include "gpu/gemm_harness.hpp"

using namespace fgtest;

namespace {

const fg_layout_t kLayouts[] = {FG_ROW_MAJOR, FG_COL_MAJOR};
const fg_op_t kOps[] = {FG_OP_N, FG_OP_T};

struct Shape {
  int64_t m, n, k;
};

// Calls body(case) for all 8 layout x transpose combinations of `base`.
template <typename Body>
void for_each_layout_and_transpose(GemmCase base, Body body) {
  for (fg_layout_t layout : kLayouts)
    for (fg_op_t transa : kOps)
      for (fg_op_t transb : kOps) {
        base.layout = layout;
        base.transa = transa;
        base.transb = transb;
        body(base);
      }
}

}  // namespace

TEST_CASE("sgemm: small, prime and tile-edge shapes in every layout and transpose", "[sgemm][shapes]") {
  Handle handle;
  const auto algos = algos_under_test(handle.get());
  const Shape shapes[] = {{1, 1, 1},       {1, 37, 17},     {53, 1, 29},     {31, 37, 1}, {7, 13, 5},
                          {127, 128, 129}, {129, 127, 128}, {128, 129, 127}, {2, 300, 3}, {257, 3, 130}};
  const float scalars[][2] = {{1.0f, 0.0f}, {-0.5f, 2.25f}, {2.25f, 1.0f}, {1.0f, -0.5f}};
  uint64_t seed = 1;
  for (const Shape &shape : shapes)
    for_each_layout_and_transpose(GemmCase{}, [&](GemmCase gc) {
      gc.m = shape.m;
      gc.n = shape.n;
      gc.k = shape.k;
      gc.alpha = scalars[seed % 4][0];
      gc.beta = scalars[seed % 4][1];
      check_gemm_case(handle.get(), algos, gc, seed++);
    });
}

TEST_CASE("sgemm: large and rectangular shapes", "[sgemm][large]") {
  Handle handle;
  const auto algos = algos_under_test(handle.get());
  GemmCase square;
  square.m = square.n = square.k = 1000;
  check_gemm_case(handle.get(), algos, square, 11);
  GemmCase tall;
  tall.layout = FG_COL_MAJOR;
  tall.transa = FG_OP_T;
  tall.m = 1000, tall.n = 17, tall.k = 300;
  tall.beta = 2.25f;
  check_gemm_case(handle.get(), algos, tall, 12);
  GemmCase wide;
  wide.transb = FG_OP_T;
  wide.m = 255, wide.n = 1000, wide.k = 513;
  wide.alpha = -0.5f;
  check_gemm_case(handle.get(), algos, wide, 13);
}

TEST_CASE("sgemm: long k over a small C, cut into slices of k", "[sgemm][split]") {
  // 68 x 36 is two 64 x 64 tiles: split_k cuts k = 3000 into 11 slices (ragged last one) on any device of
  // 11 SMs or more, and sums them with alpha and beta applied.
  Handle handle;
  const auto algos = algos_under_test(handle.get());
  const float scalars[][2] = {{1.0f, 0.0f}, {-0.5f, 2.25f}};
  uint64_t seed = 700;
  for_each_layout_and_transpose(GemmCase{}, [&](GemmCase gc) {
    gc.m = 68, gc.n = 36, gc.k = 3000;
    gc.alpha = scalars[seed % 2][0];
    gc.beta = scalars[seed % 2][1];
    check_gemm_case(handle.get(), algos, gc, seed++);
  });
  GemmCase batched;
  batched.m = 40, batched.n = 20, batched.k = 1000, batched.batch = 3, batched.beta = 1.0f;
  check_gemm_case(handle.get(), algos, batched, seed++);
}

TEST_CASE("sgemm: leading dimensions above the minimum", "[sgemm][ld]") {
  Handle handle;
  const auto algos = algos_under_test(handle.get());
  uint64_t seed = 100;
  for (int64_t padding : {1, 5, 64})
    for_each_layout_and_transpose(GemmCase{}, [&](GemmCase gc) {
      gc.m = 67, gc.n = 45, gc.k = 133;
      gc.beta = 1.0f;
      const GemmCase minimal = gc.resolved();
      gc.lda = minimal.lda + padding;
      gc.ldb = minimal.ldb + padding + 1;
      gc.ldc = minimal.ldc + padding + 2;
      check_gemm_case(handle.get(), algos, gc, seed++);
    });
}

TEST_CASE("sgemm: pointers offset by one float", "[sgemm][alignment]") {
  Handle handle;
  const auto algos = algos_under_test(handle.get());
  uint64_t seed = 200;
  for_each_layout_and_transpose(GemmCase{}, [&](GemmCase gc) {
    gc.m = 130, gc.n = 66, gc.k = 35;
    gc.offset_a = 1, gc.offset_b = 1, gc.offset_c = 1;
    gc.alpha = 2.25f, gc.beta = -0.5f;
    check_gemm_case(handle.get(), algos, gc, seed++);
  });
  GemmCase only_c;
  only_c.m = 128, only_c.n = 128, only_c.k = 64;
  only_c.offset_c = 3;
  check_gemm_case(handle.get(), algos, only_c, seed++);
}

TEST_CASE("sgemm: alpha and beta in {0, 1, -0.5, 2.25}", "[sgemm][scalars]") {
  Handle handle;
  const auto algos = algos_under_test(handle.get());
  const float values[] = {0.0f, 1.0f, -0.5f, 2.25f};
  uint64_t seed = 300;
  for (float alpha : values)
    for (float beta : values)
      for (fg_layout_t layout : kLayouts) {
        GemmCase gc;
        gc.layout = layout;
        gc.transa = layout == FG_ROW_MAJOR ? FG_OP_N : FG_OP_T;
        gc.transb = layout == FG_ROW_MAJOR ? FG_OP_T : FG_OP_N;
        gc.m = 33, gc.n = 65, gc.k = 40;
        gc.alpha = alpha, gc.beta = beta;
        check_gemm_case(handle.get(), algos, gc, seed++);
      }
}

TEST_CASE("sgemm: alpha == 0 or k == 0 reads neither A nor B", "[sgemm][scalars]") {
  Handle handle;
  const auto algos = algos_under_test(handle.get());
  uint64_t seed = 400;
  for (float beta : {0.0f, 1.0f, -0.5f}) {
    GemmCase zero_alpha;
    zero_alpha.m = 20, zero_alpha.n = 30, zero_alpha.k = 10;
    zero_alpha.alpha = 0.0f, zero_alpha.beta = beta, zero_alpha.null_ab = true;
    check_gemm_case(handle.get(), algos, zero_alpha, seed++);
    GemmCase zero_k = zero_alpha;
    zero_k.alpha = 2.25f, zero_k.k = 0;
    zero_k.layout = FG_COL_MAJOR;
    check_gemm_case(handle.get(), algos, zero_k, seed++);
    zero_k.batch = 3;
    check_gemm_case(handle.get(), algos, zero_k, seed++);
  }
}

TEST_CASE("sgemm: m, n or batch_count 0 touches nothing", "[sgemm][scalars]") {
  Handle handle;
  float sentinel = 7.0f;
  DeviceMemory c(sizeof(float));
  upload(c, std::vector<float>{sentinel});
  REQUIRE_FG_OK(fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 0, 5, 5, 1.0f, nullptr, 5, nullptr, 5, 0.0f,
                         c.as<float>(), 5));
  REQUIRE_FG_OK(
      fg_sgemm(handle.get(), FG_COL_MAJOR, FG_OP_T, FG_OP_N, 5, 0, 5, 1.0f, nullptr, 5, nullptr, 5, 0.0f, nullptr, 5));
  REQUIRE_FG_OK(fg_sgemm_strided_batched(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 4, 4, 4, 1.0f, nullptr, 4, 16,
                                         nullptr, 4, 16, 0.0f, c.as<float>(), 4, 16, 0));
  CHECK(download<float>(c, 1)[0] == sentinel);
}

TEST_CASE("sgemm: strided batches, broadcast and interleaved", "[sgemm][batched]") {
  Handle handle;
  const auto algos = algos_under_test(handle.get());
  uint64_t seed = 500;
  for_each_layout_and_transpose(GemmCase{}, [&](GemmCase gc) {
    gc.m = 37, gc.n = 29, gc.k = 41, gc.batch = 5, gc.beta = 0.5f;
    check_gemm_case(handle.get(), algos, gc, seed++);  // dense batches
    GemmCase broadcast_a = gc;
    broadcast_a.stride_a = 0;
    check_gemm_case(handle.get(), algos, broadcast_a, seed++);
    GemmCase broadcast_b = gc;
    broadcast_b.stride_b = 0;
    broadcast_b.beta = 0.0f;
    check_gemm_case(handle.get(), algos, broadcast_b, seed++);
  });
  GemmCase interleaved;  // C as m x (batch * n): the products side by side within each row
  interleaved.m = 16, interleaved.n = 24, interleaved.k = 33, interleaved.batch = 4;
  interleaved.ldc = 4 * 24 + 3, interleaved.stride_c = 24;
  check_gemm_case(handle.get(), algos, interleaved, seed++);
  GemmCase many;
  many.m = many.n = many.k = 8;
  many.batch = 70000;  // more batches than one grid dimension holds
  many.transa = FG_OP_T;
  check_gemm_case(handle.get(), algos, many, seed++);
  GemmCase single;
  single.m = 40, single.n = 50, single.k = 60, single.batched_api = true;
  check_gemm_case(handle.get(), algos, single, seed++);
}

TEST_CASE("sgemm: the handle's stream carries the work", "[sgemm][stream]") {
  Handle handle;
  cudaStream_t stream = nullptr;
  REQUIRE_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  REQUIRE_FG_OK(fg_set_stream(handle.get(), stream));
  cudaStream_t got = nullptr;
  REQUIRE_FG_OK(fg_get_stream(handle.get(), &got));
  CHECK(got == stream);
  const auto algos = algos_under_test(handle.get());
  GemmCase gc;
  gc.m = 300, gc.n = 200, gc.k = 100, gc.beta = 1.0f;
  check_gemm_case(handle.get(), algos, gc, 600);
  REQUIRE_FG_OK(fg_set_stream(handle.get(), nullptr));
  REQUIRE_CUDA_OK(cudaStreamDestroy(stream));
}
