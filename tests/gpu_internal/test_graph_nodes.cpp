// SPDX-License-Identifier: Apache-2.0
// The emulation's comparison of two captured FP32 products (lib/sgemm/ozaki_int8/graph_nodes.hpp, same_kernels), on
// which a kept graph's FP32 product reads the operands' addresses at launch: two captures of one cublasSgemm are the
// same, products of other shapes are not, and where cuBLAS's batched entry point over one product (its pointers read
// on the device) captures the same kernels as cublasSgemm, it gives cublasSgemm's bits, also for addresses published
// after the capture.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "sgemm/ozaki_int8/graph_nodes.hpp"
#include "support/test_support.hpp"

namespace {

using fgtest::DeviceMemory;

#define REQUIRE_CUBLAS(call) REQUIRE((call) == CUBLAS_STATUS_SUCCESS)

// What the batched call reads on the device: arrays of one pointer each, and the scalars.
struct Published {
  const float *b = nullptr, *a = nullptr;
  float *c = nullptr;
  float alpha = 1.0f, beta = 0.0f;
};

class Products {
 public:
  Products() {
    REQUIRE_CUBLAS(cublasCreate(&handle_));
    REQUIRE_CUDA_OK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    REQUIRE_CUBLAS(cublasSetStream(handle_, stream_));
    REQUIRE_CUDA_OK(cudaMalloc(&workspace_, kWorkspace));
    REQUIRE_CUBLAS(cublasSetWorkspace(handle_, workspace_, kWorkspace));
  }
  ~Products() {
    (void)cublasDestroy(handle_);
    (void)cudaStreamDestroy(stream_);
    (void)cudaFree(workspace_);
  }
  Products(const Products &) = delete;
  Products &operator=(const Products &) = delete;

  // Row-major C (m x n) = A (m x k) B (k x n), as cuBLAS's column-major C^T = B^T A^T, captured.
  cudaGraph_t plain(int m, int n, int k, const float *a, const float *b, float *c) {
    const float one = 1.0f, zero = 0.0f;
    return captured(
        [&] { return cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n); });
  }
  cudaGraph_t batched(int m, int n, int k, const Published *published) {
    return captured([&] {
      REQUIRE_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_DEVICE));
      const cublasStatus_t status =
          cublasSgemmBatched(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &published->alpha, &published->b, n,
                             &published->a, k, &published->beta, &published->c, n, 1);
      REQUIRE_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST));
      return status;
    });
  }
  void run(cudaGraph_t graph) {
    cudaGraphExec_t exec = nullptr;
    REQUIRE_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    REQUIRE_CUDA_OK(cudaGraphLaunch(exec, stream_));
    REQUIRE_CUDA_OK(cudaStreamSynchronize(stream_));
    REQUIRE_CUDA_OK(cudaGraphExecDestroy(exec));
  }

 private:
  static constexpr size_t kWorkspace = size_t{32} << 20;
  template <typename Call>
  cudaGraph_t captured(const Call &call) {
    cudaGraph_t graph = nullptr;
    REQUIRE_CUDA_OK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed));
    const cublasStatus_t status = call();
    REQUIRE_CUDA_OK(cudaStreamEndCapture(stream_, &graph));
    REQUIRE_CUBLAS(status);
    return graph;
  }
  cublasHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  void *workspace_ = nullptr;
};

bool same(cudaGraph_t first, cudaGraph_t second) {
  bool result = false;
  REQUIRE(fastgemm::detail::ozaki::same_kernels(first, second, &result).ok());
  return result;
}

}  // namespace

TEST_CASE("emulation's graphs: captured FP32 products compared by their kernels", "[graph_nodes]") {
  Products products;
  struct Shape {
    int m, n, k;
  };
  for (const Shape &shape : {Shape{4096, 4096, 4096}, Shape{1024, 2048, 8192}, Shape{1024, 16384, 1024}}) {
    INFO("shape " << shape.m << " x " << shape.n << " x " << shape.k);
    const size_t size_a = size_t(shape.m) * shape.k, size_b = size_t(shape.k) * shape.n,
                 size_c = size_t(shape.m) * shape.n;
    DeviceMemory a(size_a * 4), b(size_b * 4), c(size_c * 4), other_c(size_c * 4), published_memory(sizeof(Published));
    std::vector<float> host_a(size_a), host_b(size_b);
    std::mt19937 random(static_cast<unsigned>(shape.n));
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (std::vector<float> *host : {&host_a, &host_b})
      for (float &x : *host) x = uniform(random);
    fgtest::upload(a, host_a);
    fgtest::upload(b, host_b);

    // One call captured twice, for two outputs: the same kernels. Another shape: not.
    cudaGraph_t first = products.plain(shape.m, shape.n, shape.k, a.as<float>(), b.as<float>(), c.as<float>());
    cudaGraph_t again = products.plain(shape.m, shape.n, shape.k, a.as<float>(), b.as<float>(), other_c.as<float>());
    CHECK(same(first, again));
    cudaGraph_t smaller =
        products.plain(shape.m / 2, shape.n / 4, shape.k, a.as<float>(), b.as<float>(), other_c.as<float>());
    CHECK_FALSE(same(first, smaller));

    // The batched call, captured before its addresses are published: where it runs the same kernels, it gives
    // cublasSgemm's bits, into the C published at launch (C poisoned first).
    auto *published = published_memory.as<Published>();
    cudaGraph_t batched = products.batched(shape.m, shape.n, shape.k, published);
    if (same(first, batched)) {
      products.run(first);
      const std::vector<float> expected = fgtest::download<float>(c, size_c);
      REQUIRE_CUDA_OK(cudaMemset(other_c.as<float>(), 0xff, size_c * 4));
      const Published given{b.as<float>(), a.as<float>(), other_c.as<float>(), 1.0f, 0.0f};
      REQUIRE_CUDA_OK(cudaMemcpy(published, &given, sizeof given, cudaMemcpyHostToDevice));
      REQUIRE_CUDA_OK(cudaDeviceSynchronize());  // the legacy stream's poison and copy, before the graph's stream
      products.run(batched);
      const std::vector<float> got = fgtest::download<float>(other_c, size_c);
      CHECK(std::memcmp(got.data(), expected.data(), size_c * 4) == 0);
    } else {
      WARN("the batched entry point captures other kernels here: the emulation holds the addresses in its product");
    }
    for (cudaGraph_t graph : {first, again, smaller, batched}) REQUIRE_CUDA_OK(cudaGraphDestroy(graph));
  }
}
