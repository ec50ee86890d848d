// SPDX-License-Identifier: Apache-2.0
// The emulated mode's own INT8 product on Hopper (lib/sgemm/ozaki_int8/wgmma_products.hpp), an internal function:
// three pairs in one launch, on products whose sizes are no multiples of its tiles (so that tiles reach into the
// next pair's lines), with a pitch wider than the product: every element of every pair equal to cuBLAS's INT32
// product and, on a sample, to exact integer sums, and each residue byte to the residue of cuBLAS's sum modulo its
// pair's modulus; nothing written past the product's columns. With two sets of lines a pair (the plan's codes and
// their half-depth set), the set the device-side counts choose; and the device's half-depth codes of every two codes.
// It runs on devices of compute capability 9.0, and only there (elsewhere cuBLAS's product runs). Skipped (exit
// 77) without a CUDA device.
#define CATCH_CONFIG_RUNNER
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "sgemm/ozaki_int8/wgmma_products.hpp"

using fastgemm::detail::ozaki::own_int8_products;
using fastgemm::detail::ozaki::own_int8_residues;
using fastgemm::detail::ozaki::residue_pitch;

namespace {

#define REQUIRE_CUDA(call) REQUIRE((call) == cudaSuccess)

template <typename T>
struct Device {
  T *data = nullptr;
  explicit Device(size_t count) { REQUIRE_CUDA(cudaMalloc(reinterpret_cast<void **>(&data), count * sizeof(T))); }
  ~Device() { (void)cudaFree(data); }
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;
};

// The first `count` elements of device memory, on the host.
template <typename T>
std::vector<T> on_host(const Device<T> &memory, int64_t count) {
  std::vector<T> values(static_cast<size_t>(count));
  REQUIRE_CUDA(cudaMemcpy(values.data(), memory.data, values.size() * sizeof(T), cudaMemcpyDeviceToHost));
  return values;
}

// The products' shapes: rows x cols of each pair's product, pitch elements a row of the output, depth.
struct Shape {
  int64_t rows, cols, pitch, depth;
};

// A cuBLAS handle bound to a non-blocking stream of its own, both released at the end.
struct CublasOnStream {
  cublasHandle_t cublas = nullptr;
  cudaStream_t stream = nullptr;
  CublasOnStream() {
    REQUIRE(cublasCreate(&cublas) == CUBLAS_STATUS_SUCCESS);
    REQUIRE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    REQUIRE(cublasSetStream(cublas, stream) == CUBLAS_STATUS_SUCCESS);
  }
  ~CublasOnStream() {
    (void)cublasDestroy(cublas);
    (void)cudaStreamDestroy(stream);
  }
  CublasOnStream(const CublasOnStream &) = delete;
  CublasOnStream &operator=(const CublasOnStream &) = delete;
};

// Pair `pair` of the products (rows x pitch INT32 each, c_size apart) against the reference: every element of its
// columns equal, and nothing written past them (the poison 0x7f7f7f7f still there).
void check_pair(const std::vector<int32_t> &mine, const std::vector<int32_t> &theirs, int pair, int64_t c_size,
                const Shape &s) {
  INFO("pair " << pair);
  int64_t differ = 0, written_past = 0;
  for (int64_t row = 0; row < s.rows; ++row)
    for (int64_t col = 0; col < s.pitch; ++col) {
      const int64_t at = pair * c_size + row * s.pitch + col;
      if (col < s.cols)
        differ += mine[at] != theirs[at];
      else
        written_past += mine[at] != 0x7f7f7f7f;
    }
  CHECK(differ == 0);
  CHECK(written_past == 0);
}

}  // namespace

TEST_CASE("own INT8 product: ready exactly on devices of compute capability 9.0", "[own-int8]") {
  int device = 0, major = 0, minor = 0;
  REQUIRE_CUDA(cudaGetDevice(&device));
  REQUIRE_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  REQUIRE_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  INFO("compute capability " << major << "." << minor);
  CHECK(fastgemm::detail::ozaki::own_products_ready() == (major == 9 && minor == 0));
}

TEST_CASE("own INT8 product: every element of odd shapes equals cuBLAS's and exact sums; nothing past the columns",
          "[own-int8]") {
  if (!fastgemm::detail::ozaki::own_products_ready()) {
    WARN("not a device of compute capability 9.0: cuBLAS's product runs here (the test above checks that)");
    return;
  }
  constexpr int kPairs = 3;
  const CublasOnStream on;
  cublasHandle_t cublas = on.cublas;
  cudaStream_t stream = on.stream;
  for (const Shape s : {Shape{128, 256, 256, 128}, Shape{132, 260, 272, 144}, Shape{1000, 4100, 4100, 4112},
                        Shape{2052, 1028, 1040, 16400}, Shape{3000, 300, 300, 1040}, Shape{4096, 4096, 4096, 4096}}) {
    INFO(s.rows << " x " << s.cols << " (pitch " << s.pitch << ") x " << s.depth << ", " << kPairs << " pairs");
    const int64_t a_size = s.rows * s.depth, b_size = s.cols * s.depth, c_size = s.rows * s.pitch;
    std::vector<int8_t> a(kPairs * a_size), b(kPairs * b_size);
    std::mt19937_64 random(static_cast<uint64_t>(s.rows * 31 + s.cols * 7 + s.depth));
    for (int8_t &x : a) x = static_cast<int8_t>(static_cast<int>(random() % 256) - 128);  // -128 included
    for (int8_t &x : b) x = static_cast<int8_t>(static_cast<int>(random() % 256) - 128);
    Device<int8_t> da(a.size()), db(b.size());
    Device<int32_t> own(kPairs * c_size), reference(kPairs * c_size);
    REQUIRE_CUDA(cudaMemcpy(da.data, a.data(), a.size(), cudaMemcpyHostToDevice));
    REQUIRE_CUDA(cudaMemcpy(db.data, b.data(), b.size(), cudaMemcpyHostToDevice));
    REQUIRE_CUDA(cudaMemset(own.data, 0x7f, kPairs * c_size * 4));  // poison: 0x7f7f7f7f is no possible sum
    // The uploads and the poison ran on the legacy stream, which the products' non-blocking stream does not wait for.
    REQUIRE_CUDA(cudaDeviceSynchronize());
    const int32_t one = 1, zero = 0;
    REQUIRE(cublasGemmStridedBatchedEx(cublas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(s.cols),
                                       static_cast<int>(s.rows), static_cast<int>(s.depth), &one, db.data, CUDA_R_8I,
                                       static_cast<int>(s.depth), b_size, da.data, CUDA_R_8I, static_cast<int>(s.depth),
                                       a_size, &zero, reference.data, CUDA_R_32I, static_cast<int>(s.pitch), c_size,
                                       kPairs, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    const auto status = own_int8_products(da.data, db.data, own.data, s.rows, s.cols, s.pitch, s.depth, kPairs, stream);
    REQUIRE(status.ok());
    REQUIRE_CUDA(cudaStreamSynchronize(stream));
    const std::vector<int32_t> mine = on_host(own, kPairs * c_size), theirs = on_host(reference, kPairs * c_size);
    for (int pair = 0; pair < kPairs; ++pair) {
      check_pair(mine, theirs, pair, c_size, s);
      INFO("pair " << pair);
      // Exact sums on a sample (the corners included).
      int64_t inexact = 0;
      for (int i = 0; i < 400; ++i) {
        const int64_t row = i == 0 ? 0 : i == 1 ? s.rows - 1 : static_cast<int64_t>(random() % s.rows);
        const int64_t col = i == 0 ? 0 : i == 1 ? s.cols - 1 : static_cast<int64_t>(random() % s.cols);
        int64_t sum = 0;
        for (int64_t l = 0; l < s.depth; ++l)
          sum += int64_t{a[pair * a_size + row * s.depth + l]} * b[pair * b_size + col * s.depth + l];
        inexact += mine[pair * c_size + row * s.pitch + col] != sum;
      }
      CHECK(inexact == 0);
    }

    // Each sum's residue, one byte, as the reconstruction reduces it: s - q rint(s / q), 128 written as -128, q
    // the pair's modulus (the moduli taken in turn).
    for (const int moduli_count : {1, 2, 3}) {
      const double moduli[] = {256.0, 251.0, 211.0};
      INFO(moduli_count << " moduli in turn");
      const int64_t pitch = residue_pitch(s.cols) + 16;  // 16 bytes a row that nothing may write
      Device<int8_t> bytes(kPairs * s.rows * pitch);
      REQUIRE_CUDA(cudaMemset(bytes.data, 0x7f, kPairs * s.rows * pitch));
      REQUIRE_CUDA(cudaDeviceSynchronize());  // the poison is done before the product on the other stream writes
      REQUIRE(own_int8_residues(da.data, db.data, bytes.data, s.rows, s.cols, pitch, s.depth, kPairs, moduli,
                                moduli_count, stream)
                  .ok());
      REQUIRE_CUDA(cudaStreamSynchronize(stream));
      std::vector<int8_t> got(kPairs * s.rows * pitch);
      REQUIRE_CUDA(cudaMemcpy(got.data(), bytes.data, got.size(), cudaMemcpyDeviceToHost));
      int64_t wrong = 0, past = 0;
      for (int pair = 0; pair < kPairs; ++pair) {
        const double modulus = moduli[pair % moduli_count];
        for (int64_t row = 0; row < s.rows; ++row) {
          const int8_t *line = got.data() + (pair * s.rows + row) * pitch;
          for (int64_t col = 0; col < s.cols; ++col) {
            const double v = theirs[pair * c_size + row * s.pitch + col];
            const int residue = static_cast<int>(std::fma(-std::rint(v * (1.0 / modulus)), modulus, v));
            wrong += line[col] != static_cast<int8_t>(residue);
          }
          for (int64_t col = residue_pitch(s.cols); col < pitch; ++col) past += line[col] != 0x7f;
        }
      }
      CHECK(wrong == 0);
      CHECK(past == 0);
    }
    // The epilogue's arithmetic (math.hpp's sum_residue_byte) takes 256 and odd moduli: an even one other than 256,
    // or one that is not an integer, is refused before anything runs.
    for (const double modulus : {254.0, 2.0, 250.5, 257.0}) {
      INFO("modulus " << modulus);
      const int64_t pitch = residue_pitch(s.cols);
      Device<int8_t> bytes(kPairs * s.rows * pitch);
      CHECK_FALSE(
          own_int8_residues(da.data, db.data, bytes.data, s.rows, s.cols, pitch, s.depth, kPairs, &modulus, 1, stream)
              .ok());
    }
  }
}

TEST_CASE("own INT8 product: two sets of lines a pair, the half-depth set taken where the counts choose it",
          "[own-int8]") {
  if (!fastgemm::detail::ozaki::own_products_ready()) {
    WARN("not a device of compute capability 9.0: cuBLAS's product runs here");
    return;
  }
  using fastgemm::detail::ozaki::CodeChunks;
  using fastgemm::detail::ozaki::kCodeSets;
  using fastgemm::detail::ozaki::kHalfSetStep;
  constexpr int kPairs = 2;
  const CublasOnStream on;
  cublasHandle_t cublas = on.cublas;
  cudaStream_t stream = on.stream;
  // counted 256, lost 1: the half-depth sets (one piece in 256 lost); lost 2: the first sets.
  for (const unsigned long long lost : {1ull, 2ull}) {
    const CodeChunks counts{256, lost};
    const int set = lost == 1 ? 1 : 0;
    Device<CodeChunks> device_counts(1);
    REQUIRE_CUDA(cudaMemcpy(device_counts.data, &counts, sizeof counts, cudaMemcpyHostToDevice));
    for (const Shape s : {Shape{132, 260, 272, 192}, Shape{1000, 4100, 4100, 4160}, Shape{2052, 1028, 1040, 16448}}) {
      INFO(s.rows << " x " << s.cols << " x " << s.depth << ", set " << set);
      const int64_t a_size = s.rows * s.depth, b_size = s.cols * s.depth, c_size = s.rows * s.pitch;
      // [pair][set][line][depth]; the half-depth sets zero from depth / 2 to the next multiple of kHalfSetStep, as
      // the codes' kernel writes them, and other codes past that, which the product must not read.
      const int64_t half_read = (s.depth / 2 + kHalfSetStep - 1) / kHalfSetStep * kHalfSetStep;
      std::vector<int8_t> a(kPairs * kCodeSets * a_size), b(kPairs * kCodeSets * b_size);
      std::mt19937_64 random(static_cast<uint64_t>(s.rows + s.depth + lost));
      const auto fill = [&](std::vector<int8_t> &x, int64_t size) {
        for (int64_t at = 0; at < static_cast<int64_t>(x.size()); ++at) {
          const int64_t l = at % s.depth;
          const bool zero = at / size % kCodeSets == 1 && l >= s.depth / 2 && l < half_read;
          x[at] = zero ? 0 : static_cast<int8_t>(random() % 128);  // codes: 0..127
        }
      };
      fill(a, a_size);
      fill(b, b_size);
      Device<int8_t> da(a.size()), db(b.size());
      Device<int32_t> own(kPairs * c_size), reference(kPairs * c_size);
      REQUIRE_CUDA(cudaMemcpy(da.data, a.data(), a.size(), cudaMemcpyHostToDevice));
      REQUIRE_CUDA(cudaMemcpy(db.data, b.data(), b.size(), cudaMemcpyHostToDevice));
      REQUIRE_CUDA(cudaMemset(own.data, 0x7f, kPairs * c_size * 4));
      REQUIRE_CUDA(cudaDeviceSynchronize());  // the uploads and the poison are done before the products' stream runs
      const int32_t one = 1, zero = 0;
      const int64_t depth_read = set == 1 ? half_read : s.depth;  // the half-depth set over its steps only
      REQUIRE(cublasGemmStridedBatchedEx(
                  cublas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(s.cols), static_cast<int>(s.rows),
                  static_cast<int>(depth_read), &one, db.data + set * b_size, CUDA_R_8I, static_cast<int>(s.depth),
                  kCodeSets * b_size, da.data + set * a_size, CUDA_R_8I, static_cast<int>(s.depth), kCodeSets * a_size,
                  &zero, reference.data, CUDA_R_32I, static_cast<int>(s.pitch), c_size, kPairs, CUBLAS_COMPUTE_32I,
                  CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
      REQUIRE(own_int8_products(da.data, db.data, own.data, s.rows, s.cols, s.pitch, s.depth, kPairs, stream,
                                device_counts.data)
                  .ok());
      REQUIRE_CUDA(cudaStreamSynchronize(stream));
      const std::vector<int32_t> mine = on_host(own, kPairs * c_size), theirs = on_host(reference, kPairs * c_size);
      for (int pair = 0; pair < kPairs; ++pair) check_pair(mine, theirs, pair, c_size, s);
    }
  }
}

std::vector<int> device_half_codes();  // half_codes.cu

TEST_CASE("own INT8 product's inputs: the device's codes at half depth are exact integer roots", "[own-int8]") {
  const std::vector<int> codes = device_half_codes();
  REQUIRE(codes.size() == 128 * 128);
  int64_t wrong = 0;
  for (int a = 0; a < 128; ++a)
    for (int b = 0; b < 128; ++b) {
      const int code = codes[a * 128 + b];
      wrong += !(code >= 0 && code * code <= a * b && (code + 1) * (code + 1) > a * b);
    }
  CHECK(wrong == 0);
}

int main(int argc, char **argv) {
  int devices = 0;
  const cudaError_t error = cudaGetDeviceCount(&devices);
  if (error != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device; GPU tests need one\n");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
