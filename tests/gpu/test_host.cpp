// SPDX-License-Identifier: Apache-2.0
// fg_sgemm_host: operands in pageable, pinned, managed or device memory, every layout and transpose,
// leading dimensions, scalars, misaligned pointers, and products cut into many tiles and k chunks
// (FASTGEMM_HOST_TILE), staged through few device buffers (FASTGEMM_HOST_STAGING) and shared by several
// workers per device (FASTGEMM_HOST_WORKERS_PER_DEVICE), against the double reference with C's window
// poisoned where beta == 0; and, hidden, one product larger than the device.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <sys/mman.h>
#include <unistd.h>

#include "fastgemm/fastgemm.hpp"
#include "gpu/gemm_harness.hpp"

using namespace fgtest;

namespace {

enum class Memory { pageable, pinned, managed, device };

const char *memory_name(Memory memory) {
  switch (memory) {
    case Memory::pageable: return "pageable";
    case Memory::pinned: return "pinned";
    case Memory::managed: return "managed";
    case Memory::device: return "device";
  }
  return "?";
}

// An operand's allocation of the given kind, filled from and read back to host vectors.
class Operand {
 public:
  Operand(Memory memory, size_t count) : memory_(memory), count_(count) {
    const size_t bytes = count * sizeof(float);
    switch (memory) {
      case Memory::pageable:
        pageable_.resize(count);
        data_ = pageable_.data();
        break;
      case Memory::pinned: REQUIRE_CUDA_OK(cudaMallocHost(reinterpret_cast<void **>(&data_), bytes)); break;
      case Memory::managed: REQUIRE_CUDA_OK(cudaMallocManaged(reinterpret_cast<void **>(&data_), bytes)); break;
      case Memory::device: REQUIRE_CUDA_OK(cudaMalloc(reinterpret_cast<void **>(&data_), bytes)); break;
    }
  }
  ~Operand() {
    if (memory_ == Memory::pinned) (void)cudaFreeHost(data_);
    if (memory_ == Memory::managed || memory_ == Memory::device) (void)cudaFree(data_);
  }
  Operand(const Operand &) = delete;
  Operand &operator=(const Operand &) = delete;

  float *data() const { return data_; }
  void set(const std::vector<float> &values) {
    REQUIRE_CUDA_OK(cudaDeviceSynchronize());
    REQUIRE_CUDA_OK(cudaMemcpy(data_, values.data(), count_ * sizeof(float), cudaMemcpyDefault));
  }
  std::vector<float> get() const {
    std::vector<float> values(count_);
    REQUIRE_CUDA_OK(cudaMemcpy(values.data(), data_, count_ * sizeof(float), cudaMemcpyDefault));
    return values;
  }

 private:
  Memory memory_;
  size_t count_;
  std::vector<float> pageable_;
  float *data_ = nullptr;
};

// Sets an environment variable the host path reads on every call to a positive value for its lifetime
// (a value <= 0 leaves it as it is), then restores what the environment had.
class ScopedVariable {
 public:
  ScopedVariable(const char *name, int64_t value) {
    if (value > 0) guard_.emplace(name, std::to_string(value).c_str());
  }

 private:
  std::optional<ScopedEnvironment> guard_;
};

// The tile edge and k chunk cap (FASTGEMM_HOST_TILE).
struct TileLimit : ScopedVariable {
  explicit TileLimit(int64_t edge) : ScopedVariable("FASTGEMM_HOST_TILE", edge) {}
};
// The device memory of the staging buffers, in bytes (FASTGEMM_HOST_STAGING).
struct StagingLimit : ScopedVariable {
  explicit StagingLimit(int64_t bytes) : ScopedVariable("FASTGEMM_HOST_STAGING", bytes) {}
};
// Workers per listed device (FASTGEMM_HOST_WORKERS_PER_DEVICE; gpu.host.two_workers sets it for every test).
struct WorkersPerDevice : ScopedVariable {
  explicit WorkersPerDevice(int64_t workers) : ScopedVariable("FASTGEMM_HOST_WORKERS_PER_DEVICE", workers) {}
};

bool same_bits(const std::vector<float> &x, const std::vector<float> &y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

bool same_bits_where(const std::vector<float> &x, const std::vector<float> &y, const std::vector<char> &mask,
                     bool inside) {
  for (size_t i = 0; i < x.size(); ++i)
    if (static_cast<bool>(mask[i]) == inside && std::memcmp(&x[i], &y[i], sizeof(float)) != 0) return false;
  return true;
}

// Runs gc through fg_sgemm_host with each operand in the given memory; returns C's whole allocation.
std::vector<float> check_host_case(fg_handle_t handle, const GemmCase &raw, Memory a_memory, Memory b_memory,
                                   Memory c_memory, uint64_t seed) {
  const GemmCase gc = raw.resolved();
  INFO(gc.describe() << " A " << memory_name(a_memory) << ", B " << memory_name(b_memory) << ", C "
                     << memory_name(c_memory));
  std::vector<float> a(gc.a_elements()), b(gc.b_elements()), c(gc.c_elements());
  fill_uniform(a, seed * 3 + 1);
  fill_uniform(b, seed * 3 + 2);
  fill_uniform(c, seed * 3 + 3);
  const std::vector<char> window = c_window_mask(gc);
  if (gc.beta == 0.0f)
    for (size_t i = 0; i < c.size(); ++i)
      if (window[i]) c[i] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<double> reference = reference_gemm(gc, a, b, c);

  Operand a_operand(a_memory, a.size()), b_operand(b_memory, b.size()), c_operand(c_memory, c.size());
  a_operand.set(a);
  b_operand.set(b);
  c_operand.set(c);
  const fg_status_t status = fg_sgemm_host(handle, gc.layout, gc.transa, gc.transb, gc.m, gc.n, gc.k, gc.alpha,
                                           gc.null_ab ? nullptr : a_operand.data() + gc.offset_a, gc.lda,
                                           gc.null_ab ? nullptr : b_operand.data() + gc.offset_b, gc.ldb, gc.beta,
                                           c_operand.data() + gc.offset_c, gc.ldc);
  INFO("status " << fg_status_name(status) << ": " << fg_last_error_message());
  REQUIRE(status == FG_STATUS_SUCCESS);
  // Synchronous: C is complete without any synchronization by the caller (a pageable C is read at once).
  const std::vector<float> result = c_operand.get();
  CHECK(same_bits_where(result, c, window, false));
  const double error = relative_error(result, reference, &window);
  INFO("relative error " << error);
  CHECK(error <= gemm_tolerance(gc.k));
  return result;
}

GemmCase make_case(fg_layout_t layout, fg_op_t transa, fg_op_t transb, int64_t m, int64_t n, int64_t k, float alpha,
                   float beta) {
  GemmCase gc;
  gc.layout = layout, gc.transa = transa, gc.transb = transb;
  gc.m = m, gc.n = n, gc.k = k, gc.alpha = alpha, gc.beta = beta;
  return gc;
}

}  // namespace

TEST_CASE("host: every layout, transpose and beta, pageable operands, many tiles", "[host]") {
  Handle handle;
  const TileLimit limit(32);  // 67 x 45 x 83 becomes 3 x 2 tiles of 3 k chunks each
  uint64_t seed = 100;
  for (fg_layout_t layout : {FG_ROW_MAJOR, FG_COL_MAJOR})
    for (fg_op_t transa : {FG_OP_N, FG_OP_T, FG_OP_C})
      for (fg_op_t transb : {FG_OP_N, FG_OP_T})
        for (float beta : {0.0f, 1.0f, -0.75f})
          check_host_case(handle.get(), make_case(layout, transa, transb, 67, 45, 83, 1.25f, beta), Memory::pageable,
                          Memory::pageable, Memory::pageable, ++seed);
}

TEST_CASE("host: one row of tiles, where B's panels take turns in two slots", "[host]") {
  Handle handle;
  const TileLimit limit(32);  // 20 x 150 x 83: 1 x 5 tiles of 3 k chunks; B panels are not all kept
  uint64_t seed = 150;
  for (fg_op_t transb : {FG_OP_N, FG_OP_T})
    for (Memory b : {Memory::pageable, Memory::pinned})
      check_host_case(handle.get(), make_case(FG_ROW_MAJOR, FG_OP_T, transb, 20, 150, 83, 0.5f, 1.5f), Memory::pageable,
                      b, Memory::pageable, ++seed);
}

TEST_CASE("host: a call whose B panels take turns in two slots after one that kept every panel", "[host]") {
  Handle handle;
  const TileLimit limit(16);
  uint64_t seed = 170;
  // 64 x 64 x 16: 4 x 4 tiles, every B panel kept in a slot of its own (the last one used is the fourth);
  // then 1 x 65 x 1: one row of 5 tiles, B's panels taking turns in two slots.
  for (int round = 0; round < 2; ++round) {
    check_host_case(handle.get(), make_case(FG_COL_MAJOR, FG_OP_N, FG_OP_N, 64, 64, 16, 1.0f, 0.0f), Memory::pageable,
                    Memory::pageable, Memory::pageable, ++seed);
    check_host_case(handle.get(), make_case(FG_COL_MAJOR, FG_OP_N, FG_OP_N, 1, 65, 1, 1.0f, 1.0f), Memory::pageable,
                    Memory::pageable, Memory::pageable, ++seed);
  }
}

TEST_CASE("host: leading dimensions beyond the minimum, and misaligned pointers", "[host]") {
  Handle handle;
  const TileLimit limit(24);
  uint64_t seed = 200;
  for (fg_layout_t layout : {FG_ROW_MAJOR, FG_COL_MAJOR})
    for (fg_op_t transa : {FG_OP_N, FG_OP_T})
      for (fg_op_t transb : {FG_OP_N, FG_OP_T})
        for (int offset : {0, 1, 3}) {
          GemmCase gc = make_case(layout, transa, transb, 50, 61, 47, -0.5f, 0.25f).resolved();
          gc.lda += 5, gc.ldb += 2, gc.ldc += 7;
          gc.offset_a = offset, gc.offset_b = (offset * 2) % 4, gc.offset_c = offset;
          check_host_case(handle.get(), gc, Memory::pageable, Memory::pageable, Memory::pageable, ++seed);
          check_host_case(handle.get(), gc, Memory::device, Memory::managed, Memory::pinned, ++seed);
        }
}

TEST_CASE("host: every mix of pageable, pinned, managed and device operands", "[host]") {
  Handle handle;
  const TileLimit limit(40);
  const Memory kinds[] = {Memory::pageable, Memory::pinned, Memory::managed, Memory::device};
  uint64_t seed = 300;
  for (Memory a : kinds)
    for (Memory b : kinds)
      for (Memory c : kinds)
        for (float beta : {0.0f, 0.5f})
          check_host_case(handle.get(), make_case(FG_COL_MAJOR, FG_OP_N, FG_OP_T, 90, 70, 100, 0.75f, beta), a, b, c,
                          ++seed);
}

TEST_CASE("host: alpha == 0 and k == 0 scale C, in tiles, without reading A and B", "[host]") {
  Handle handle;
  const TileLimit limit(16);
  uint64_t seed = 400;
  for (Memory c : {Memory::pageable, Memory::pinned, Memory::device})
    for (float beta : {0.0f, 2.0f}) {
      GemmCase zero_alpha = make_case(FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 40, 33, 20, 0.0f, beta);
      zero_alpha.null_ab = true;
      check_host_case(handle.get(), zero_alpha, Memory::pageable, Memory::pageable, c, ++seed);
      GemmCase zero_k = make_case(FG_COL_MAJOR, FG_OP_T, FG_OP_N, 40, 33, 0, 1.0f, beta);
      zero_k.null_ab = true;
      check_host_case(handle.get(), zero_k, Memory::pageable, Memory::pageable, c, ++seed);
    }
}

TEST_CASE("host: one-step products in host memory (the short way), every layout, transpose, beta and memory",
          "[host]") {
  // Products of one tile whose operands fit 4 MiB go through the calling thread's short way: every form of
  // them, against the double reference, C poisoned where beta == 0 and untouched outside its window.
  Handle handle;
  uint64_t seed = 900;
  for (fg_layout_t layout : {FG_ROW_MAJOR, FG_COL_MAJOR})
    for (fg_op_t transa : {FG_OP_N, FG_OP_T})
      for (fg_op_t transb : {FG_OP_N, FG_OP_T})
        for (float beta : {0.0f, -0.75f}) {
          GemmCase gc = make_case(layout, transa, transb, 37, 53, 29, 1.25f, beta);
          check_host_case(handle.get(), gc, Memory::pageable, Memory::pageable, Memory::pageable, ++seed);
          // Leading dimensions past the minimum and pointers off their 16-byte boundary.
          gc.lda = (transa == FG_OP_N) == (layout == FG_ROW_MAJOR) ? 31 : 41;
          gc.ldb = (transb == FG_OP_N) == (layout == FG_ROW_MAJOR) ? 57 : 33;
          gc.ldc = layout == FG_ROW_MAJOR ? 59 : 43;
          gc.offset_a = 1, gc.offset_b = 3, gc.offset_c = 2;
          check_host_case(handle.get(), gc, Memory::pinned, Memory::pageable, Memory::pinned, ++seed);
        }
  // One row, one column, one element, and the largest square that fits (3 x 590^2 floats < 4 MiB).
  struct Shape {
    int64_t m, n, k;
  };
  for (const Shape &shape : {Shape{1, 300, 200}, Shape{300, 1, 200}, Shape{1, 1, 1}, Shape{590, 590, 590}})
    check_host_case(handle.get(), make_case(FG_ROW_MAJOR, FG_OP_N, FG_OP_T, shape.m, shape.n, shape.k, 1.0f, 0.5f),
                    Memory::pageable, Memory::pageable, Memory::pageable, ++seed);
  // C := beta * C without A and B.
  for (float beta : {0.0f, 3.0f}) {
    GemmCase zero_alpha = make_case(FG_COL_MAJOR, FG_OP_N, FG_OP_N, 21, 17, 9, 0.0f, beta);
    zero_alpha.null_ab = true;
    check_host_case(handle.get(), zero_alpha, Memory::pageable, Memory::pageable, Memory::pageable, ++seed);
  }
}

TEST_CASE("host: the short way gives the tile path's bits, and every device path's in FG_REPRODUCIBLE_SHAPE",
          "[host]") {
  Handle handle;
  const GemmCase gc = make_case(FG_ROW_MAJOR, FG_OP_N, FG_OP_T, 200, 170, 150, 1.0f, 0.5f);
  const std::vector<float> short_way =
      check_host_case(handle.get(), gc, Memory::pageable, Memory::pageable, Memory::pageable, 31);
  {
    // A staging budget (a testing knob) sends the same one-tile product through the tile path.
    const StagingLimit budget(int64_t(1) << 30);
    const std::vector<float> tiled =
        check_host_case(handle.get(), gc, Memory::pageable, Memory::pageable, Memory::pageable, 31);
    CHECK(same_bits(short_way, tiled));
  }
  REQUIRE_FG_OK(fg_set_reproducibility(handle.get(), FG_REPRODUCIBLE_SHAPE));
  const std::vector<float> shape_short =
      check_host_case(handle.get(), gc, Memory::pageable, Memory::pageable, Memory::pageable, 31);
  const TileLimit limit(32);  // many tiles, k whole
  const std::vector<float> shape_tiled =
      check_host_case(handle.get(), gc, Memory::pageable, Memory::pageable, Memory::pageable, 31);
  CHECK(same_bits(shape_short, shape_tiled));
}

TEST_CASE("host: the default tiling on a product of several tiles, with a forced algorithm", "[host][host_large]") {
  Handle handle;
  uint64_t seed = 500;
  // 4100 x 4500 is 5 x 5 tiles of 1024, the last row and column partial.
  check_host_case(handle.get(), make_case(FG_ROW_MAJOR, FG_OP_N, FG_OP_T, 4100, 4500, 300, 1.0f, 0.5f),
                  Memory::pageable, Memory::pageable, Memory::pageable, ++seed);
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_PIPELINED));
  const TileLimit limit(128);
  check_host_case(handle.get(), make_case(FG_COL_MAJOR, FG_OP_T, FG_OP_N, 300, 260, 530, 1.0f, 0.0f), Memory::pageable,
                  Memory::pinned, Memory::pageable, ++seed);
  fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
  REQUIRE_FG_OK(fg_get_last_sgemm_algo(handle.get(), &ran));
  CHECK(ran == FG_SGEMM_PIPELINED);
}

TEST_CASE("host: bitwise the same C whatever the memory of host operands, run after run", "[host]") {
  Handle handle;
  const TileLimit limit(64);
  const GemmCase gc = make_case(FG_ROW_MAJOR, FG_OP_T, FG_OP_N, 150, 130, 200, 1.0f, 0.0f);
  const std::vector<float> pageable =
      check_host_case(handle.get(), gc, Memory::pageable, Memory::pageable, Memory::pageable, 7);
  const std::vector<float> pinned =
      check_host_case(handle.get(), gc, Memory::pinned, Memory::managed, Memory::pinned, 7);
  const std::vector<float> again =
      check_host_case(handle.get(), gc, Memory::pageable, Memory::pageable, Memory::pageable, 7);
  CHECK(same_bits(pageable, pinned));
  CHECK(same_bits(pageable, again));
  // The device list of one device, given explicitly, is the default one.
  int device = -1;
  REQUIRE_CUDA_OK(cudaGetDevice(&device));
  REQUIRE_FG_OK(fg_set_devices(handle.get(), &device, 1));
  const std::vector<float> listed =
      check_host_case(handle.get(), gc, Memory::pageable, Memory::pageable, Memory::pageable, 7);
  CHECK(same_bits(pageable, listed));
}

TEST_CASE("host: bitwise the same C whatever the order of steps and the device buffers at hand", "[host]") {
  Handle handle;
  // 40 x 40 x 400 in tiles of 16: 3 x 3 tiles of 25 k chunks, pieces of 1 KiB. With room for every piece
  // the tiles go one by one, each B panel kept; with 100 000 bytes chunk by chunk over C's tiles, all
  // kept; with 45 000 tile by tile, pieces uploaded again; with 20 000 and 1 000 in two buffers each.
  // Each plan with one worker per device and with two (their own contexts, streams and buffers, B's
  // pageable pieces shared), against the first result, of one worker.
  const TileLimit limit(16);
  for (float beta : {0.0f, 0.5f}) {
    const GemmCase gc = make_case(FG_ROW_MAJOR, FG_OP_N, FG_OP_T, 40, 40, 400, 1.0f, beta);
    std::vector<float> first;
    {
      const WorkersPerDevice one(1);
      first = check_host_case(handle.get(), gc, Memory::pageable, Memory::pageable, Memory::pageable, 21);
    }
    for (int workers : {1, 2})
      for (int64_t bytes : {100000, 45000, 20000, 1000}) {
        INFO(workers << " workers per device, FASTGEMM_HOST_STAGING=" << bytes);
        const WorkersPerDevice per_device(workers);
        const StagingLimit staging(bytes);
        CHECK(same_bits(first,
                        check_host_case(handle.get(), gc, Memory::pageable, Memory::pageable, Memory::pageable, 21)));
        CHECK(same_bits(first, check_host_case(handle.get(), gc, Memory::pinned, Memory::managed, Memory::pinned, 21)));
      }
  }
}

TEST_CASE("host: bitwise the same C with several workers per device, sharing B's pieces and helping", "[host]") {
  // Each worker has its own streams, buffers and context, as on a device of its own: the bands of tile
  // rows, a worker helping another band once its own is done, and B's pageable pieces packed once for all
  // of them run on one device. 100 x 90 x 70 in tiles of 16 is 7 x 6 tiles of 5 k chunks.
  Handle handle;
  const TileLimit limit(16);
  uint64_t seed = 600;
  for (float beta : {0.0f, 0.5f}) {
    const GemmCase gc = make_case(FG_ROW_MAJOR, FG_OP_N, FG_OP_T, 100, 90, 70, 1.0f, beta);
    std::vector<float> one;
    {
      const WorkersPerDevice single(1);
      one = check_host_case(handle.get(), gc, Memory::pageable, Memory::pageable, Memory::pageable, seed);
    }
    for (int count : {2, 3}) {
      INFO(count << " workers per device");
      const WorkersPerDevice workers(count);
      for (int round = 0; round < 2; ++round)
        CHECK(same_bits(one,
                        check_host_case(handle.get(), gc, Memory::pageable, Memory::pageable, Memory::pageable, seed)));
      CHECK(same_bits(one, check_host_case(handle.get(), gc, Memory::pinned, Memory::pageable, Memory::device, seed)));
    }
    ++seed;
  }
}

// Operands in pageable host memory that the device cannot hold together (A and B of 43 GB each, C of 1 GB:
// 87 GB against the H100's 80), so that every piece of A and B streams through. Needs about 90 GB of host
// memory: hidden, run as test_gpu "[.host_beyond_device]". C's elements are checked on a sample.
TEST_CASE("host: a product larger than the device's memory", "[.host_beyond_device]") {
  const int64_t m = 16384, n = 16384, k = 655360;
  size_t free_bytes = 0, total_bytes = 0;
  REQUIRE_CUDA_OK(cudaMemGetInfo(&free_bytes, &total_bytes));
  REQUIRE(4.0 * (m * k + k * n + m * n) > static_cast<double>(total_bytes));
  std::unique_ptr<float[]> a(new float[static_cast<size_t>(m * k)]), b(new float[static_cast<size_t>(k * n)]);
  std::unique_ptr<float[]> c(new float[static_cast<size_t>(m * n)]);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const auto fill = [&](float *data, size_t count, uint64_t seed) {
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t)
      workers.emplace_back([=] {
        uint64_t state = seed * 0x9E3779B97F4A7C15ull + (t + 1) * 0xBF58476D1CE4E5B9ull;
        for (size_t i = count / threads * t; i < (t + 1 == threads ? count : count / threads * (t + 1)); ++i) {
          state ^= state << 13;
          state ^= state >> 7;
          state ^= state << 17;
          data[i] = static_cast<float>(static_cast<double>(state >> 11) * 0x1.0p-52 - 1.0);
        }
      });
    for (std::thread &worker : workers) worker.join();
  };
  fill(a.get(), static_cast<size_t>(m * k), 1);
  fill(b.get(), static_cast<size_t>(k * n), 2);
  for (int64_t i = 0; i < m * n; ++i) c[i] = std::numeric_limits<float>::quiet_NaN();
  Handle handle;
  REQUIRE_FG_OK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, a.get(), k, b.get(), n, 0.0f,
                              c.get(), n));
  constexpr int samples = 64;
  double errors[samples] = {};
  std::vector<std::thread> checkers;
  for (int sample = 0; sample < samples; ++sample)
    checkers.emplace_back([&, sample] {
      const int64_t i = (sample * 7919 + 13) % m, j = (sample * 104729 + 7) % n;
      double sum = 0.0, absolute = 0.0;
      for (int64_t l = 0; l < k; ++l) {
        const double term = static_cast<double>(a[i * k + l]) * b[l * n + j];
        sum += term;
        absolute += std::fabs(term);
      }
      errors[sample] = std::fabs(c[i * n + j] - sum) / absolute;
    });
  for (std::thread &checker : checkers) checker.join();
  for (int sample = 0; sample < samples; ++sample) {
    INFO("sample " << sample << ": error " << errors[sample]);
    CHECK(errors[sample] <= gemm_tolerance(k));
  }
}

TEST_CASE("host: devices are listed, checked, and the caller's device is left alone", "[host]") {
  Handle handle;
  // The list a handle starts with, whatever FASTGEMM_TEST_DEVICES made of this one.
  REQUIRE_FG_OK(fg_set_devices(handle.get(), nullptr, 0));
  int current = -1, available = 0;
  REQUIRE_CUDA_OK(cudaGetDevice(&current));
  REQUIRE_CUDA_OK(cudaGetDeviceCount(&available));
  int listed[4] = {-1, -1, -1, -1};
  int count = 0;
  REQUIRE_FG_OK(fg_get_devices(handle.get(), listed, 4, &count));
  CHECK(count == 1);
  CHECK(listed[0] == current);
  const int twice[2] = {current, current};
  CHECK(fg_set_devices(handle.get(), twice, 2) == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).find("devices[1]") != std::string::npos);
  const int missing = available;
  CHECK(fg_set_devices(handle.get(), &missing, 1) == FG_STATUS_INVALID_VALUE);
  CHECK(fg_set_devices(handle.get(), nullptr, 1) == FG_STATUS_INVALID_VALUE);
  CHECK(fg_get_devices(handle.get(), nullptr, 1, &count) == FG_STATUS_INVALID_VALUE);
  CHECK(fg_get_devices(handle.get(), listed, 4, nullptr) == FG_STATUS_INVALID_VALUE);
  REQUIRE_FG_OK(fg_get_devices(handle.get(), nullptr, 0, &count));
  CHECK(count == 1);  // the refused lists changed nothing

  std::vector<int> all(static_cast<size_t>(available));
  for (int i = 0; i < available; ++i) all[static_cast<size_t>(i)] = available - 1 - i;
  REQUIRE_FG_OK(fg_set_devices(handle.get(), all.data(), available));
  REQUIRE_FG_OK(fg_get_devices(handle.get(), listed, 4, &count));
  CHECK(count == available);
  CHECK(listed[0] == available - 1);
  const TileLimit limit(32);
  check_host_case(handle.get(), make_case(FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 100, 90, 70, 1.0f, 0.5f), Memory::pageable,
                  Memory::device, Memory::pageable, 9);
  int after = -1;
  REQUIRE_CUDA_OK(cudaGetDevice(&after));
  CHECK(after == current);
  REQUIRE_FG_OK(fg_set_devices(handle.get(), nullptr, 0));
  REQUIRE_FG_OK(fg_get_devices(handle.get(), listed, 4, &count));
  CHECK(count == 1);
  CHECK(listed[0] == current);
  // An empty list is the handle's own device wherever it points (an empty Fortran array, a vector's data()).
  REQUIRE_FG_OK(fg_set_devices(handle.get(), all.data(), available));
  REQUIRE_FG_OK(fg_set_devices(handle.get(), all.data(), 0));
  REQUIRE_FG_OK(fg_get_devices(handle.get(), listed, 4, &count));
  CHECK(count == 1);
  CHECK(listed[0] == current);
}

TEST_CASE("host: bad arguments are refused before C is touched, NULL pointers named", "[host]") {
  Handle handle;
  std::vector<float> a(64, 1.0f), b(64, 2.0f), c(64, 3.0f);
  CHECK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 8, 8, 8, 1.0f, a.data(), 7, b.data(), 8, 0.0f,
                      c.data(), 8) == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).rfind("fg_sgemm_host: lda = 7", 0) == 0);
  CHECK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 8, 8, 8, 1.0f, a.data(), 8, nullptr, 8, 0.0f,
                      c.data(), 8) == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).find("B is NULL") != std::string::npos);
  CHECK(fg_sgemm_host(nullptr, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 8, 8, 8, 1.0f, a.data(), 8, b.data(), 8, 0.0f, c.data(),
                      8) == FG_STATUS_INVALID_HANDLE);
  for (float value : c) CHECK(value == 3.0f);
}

TEST_CASE("host: an operand in device or pinned memory shorter than its extents is refused, named", "[host]") {
  // fg_sgemm_host validates as fg_sgemm does: an allocation the driver records must hold every element the
  // call reaches. The short operands hold 8 x 8 floats, the calls reach 16 x 16.
  Handle handle;
  constexpr int64_t kSize = 16;
  DeviceMemory short_device(8 * 8 * sizeof(float)), whole_device(kSize * kSize * sizeof(float));
  REQUIRE_CUDA_OK(cudaMemset(short_device.get(), 0, 8 * 8 * sizeof(float)));
  REQUIRE_CUDA_OK(cudaMemset(whole_device.get(), 0, kSize * kSize * sizeof(float)));
  float *short_pinned = nullptr;
  REQUIRE_CUDA_OK(cudaMallocHost(reinterpret_cast<void **>(&short_pinned), 8 * 8 * sizeof(float)));
  std::vector<float> a(kSize * kSize, 1.0f), b(kSize * kSize, 2.0f), c(kSize * kSize, std::nanf(""));
  const auto call = [&](const float *A, const float *B, float *C) {
    return fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, kSize, kSize, kSize, 1.0f, A, kSize, B, kSize,
                         0.0f, C, kSize);
  };
  const struct {
    const float *A, *B;
    float *C;
    const char *named;
  } cases[] = {{short_device.as<float>(), b.data(), c.data(), "fg_sgemm_host: A = "},
               {a.data(), short_device.as<float>(), c.data(), "fg_sgemm_host: B = "},
               {a.data(), short_pinned, c.data(), "fg_sgemm_host: B = "},
               {short_pinned, b.data(), c.data(), "fg_sgemm_host: A = "}};
  for (const auto &bad : cases) {
    INFO(bad.named);
    CHECK(call(bad.A, bad.B, bad.C) == FG_STATUS_INVALID_VALUE);
    const std::string message = fg_last_error_message();
    INFO(message);
    CHECK(message.rfind(bad.named, 0) == 0);
    CHECK(message.find("runs past the end of its allocation") != std::string::npos);
    for (float value : c) CHECK(std::isnan(value));  // nothing was written
  }
  CHECK(call(a.data(), b.data(), short_device.as<float>()) == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).rfind("fg_sgemm_host: C = ", 0) == 0);
  // Operands that hold their extents, in device memory too, are computed.
  REQUIRE_FG_OK(call(a.data(), whole_device.as<float>(), c.data()));
  for (float value : c) CHECK(value == 0.0f);
  REQUIRE_CUDA_OK(cudaFreeHost(short_pinned));
}

TEST_CASE("host: the caller's pending CUDA error is left as it was, for every memory of the operands", "[host]") {
  Handle handle;
  const TileLimit limit(32);
  // One of the project's kernels, launched with cudaLaunchKernelEx, which returns its own error and leaves the
  // runtime's alone: what is tested is the engine's own calls.
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_SMEM));
  for (Memory memory : {Memory::pageable, Memory::pinned, Memory::device}) {
    INFO("operands in " << memory_name(memory) << " memory");
    // An error that is not sticky: pending for this thread until it asks for it.
    void *absurd = nullptr;
    REQUIRE(cudaMalloc(&absurd, size_t{1} << 62) == cudaErrorMemoryAllocation);
    check_host_case(handle.get(), make_case(FG_ROW_MAJOR, FG_OP_N, FG_OP_T, 70, 50, 40, 1.0f, 0.0f), memory, memory,
                    memory, 21);
    CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
    CHECK(cudaGetLastError() == cudaSuccess);
  }
}

TEST_CASE("host: a pageable operand shorter than its extents is refused, named, before C is touched", "[host]") {
  Handle handle;
  const TileLimit limit(32);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  // Four pages of floats, then one the process may not touch; a fifth, read-only, page for C.
  constexpr int64_t m = 64, n = 64, k = 64;  // B is 16 KiB: four pages of 4 KiB
  char *pages =
      static_cast<char *>(mmap(nullptr, 6 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(pages != MAP_FAILED);
  const size_t b_bytes = static_cast<size_t>(k * n) * sizeof(float);
  REQUIRE(b_bytes % page == 0);
  char *const fence = pages + b_bytes;
  REQUIRE(mprotect(fence, page, PROT_NONE) == 0);
  std::vector<float> a(m * k, 1.0f), c(m * n, std::numeric_limits<float>::quiet_NaN());
  const auto fill_b = [&](float *b) {
    for (int64_t i = 0; i < k * n; ++i) b[i] = 1.0f;
  };
  char address[32];
  std::snprintf(address, sizeof address, "%p", static_cast<void *>(fence));
  INFO("the fence page at " << address);

  // B ending exactly where its pages end: the product runs.
  float *exact = reinterpret_cast<float *>(pages);
  fill_b(exact);
  REQUIRE_FG_OK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, a.data(), k, exact, n, 0.0f,
                              c.data(), n));
  for (float value : c) CHECK(value == static_cast<float>(k));

  // One float later, B's last float lies in the fence page: refused, naming B and the fence page, C untouched.
  float *shifted = reinterpret_cast<float *>(pages + sizeof(float));
  std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());
  for (fg_layout_t layout : {FG_ROW_MAJOR, FG_COL_MAJOR}) {
    INFO("layout " << layout);
    const fg_status_t status = fg_sgemm_host(handle.get(), layout, FG_OP_N, FG_OP_N, m, n, k, 1.0f, a.data(), k,
                                             shifted, n, 0.0f, c.data(), n);
    const std::string message = fg_last_error_message();
    INFO(message);
    CHECK(status == FG_STATUS_INVALID_VALUE);
    CHECK(message.find("fg_sgemm_host: B = ") == 0);
    CHECK(message.find(std::string("cannot read at ") + address) != std::string::npos);
    for (float value : c) CHECK(std::isnan(value));
  }
  // A transposed B of the same extents, and A in its place.
  CHECK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_T, m, n, k, 1.0f, a.data(), k, shifted, k, 0.0f,
                      c.data(), n) == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).find("fg_sgemm_host: B = ") == 0);
  CHECK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, shifted, k, a.data(), n, 0.0f,
                      c.data(), n) == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).find("fg_sgemm_host: A = ") == 0);
  for (float value : c) CHECK(std::isnan(value));

  // C in a read-only page: refused as unwritable, and left as it was.
  char *read_only = pages + 5 * page;
  float *c_page = reinterpret_cast<float *>(read_only);
  const int64_t small = 16;  // 16 x 16 floats: one 1 KiB C
  for (int64_t i = 0; i < small * small; ++i) c_page[i] = 7.0f;
  REQUIRE(mprotect(read_only, page, PROT_READ) == 0);
  CHECK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, small, small, small, 1.0f, a.data(), small, exact,
                      small, 1.0f, c_page, small) == FG_STATUS_INVALID_VALUE);
  CHECK(std::string(fg_last_error_message()).find("fg_sgemm_host: C = ") == 0);
  CHECK(std::string(fg_last_error_message()).find("cannot write") != std::string::npos);
  for (int64_t i = 0; i < small * small; ++i) CHECK(c_page[i] == 7.0f);
  REQUIRE(munmap(pages, 6 * page) == 0);
}

namespace {

// What one thread of the test below found, checked on the main thread (Catch2's assertions are not thread-safe).
struct ThreadFindings {
  int calls = 0, failed_calls = 0, wrong = 0, guards_hit = 0, changed_after_return = 0;
  double worst = 0.0;
  std::string first_failure;
};

// One thread's life: its own handle, products of many tiles (the caller sets FASTGEMM_HOST_TILE) on pageable
// operands allocated afresh for each, the handle destroyed on the thread before it ends. Each C has guard elements
// on both sides, and is read again a while after the call returned: the call must write exactly C's elements, and
// all of them before it returns.
void host_thread(int index, ThreadFindings *found) {
  fg_handle_t handle = nullptr;
  if (fg_create(&handle) != FG_STATUS_SUCCESS) {
    found->first_failure = "fg_create failed";
    return;
  }
  constexpr int64_t guard = 256;
  uint64_t state = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(index + 1);
  const auto next = [&state](int64_t low, int64_t high) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return low + static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(high - low + 1));
  };
  for (int round = 0; round < 12; ++round) {
    const int64_t m = next(65, 199), n = next(65, 199), k = next(65, 199), ldc = m + next(0, 3);
    std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
    std::vector<float> c(static_cast<size_t>(ldc * n + 2 * guard), std::numeric_limits<float>::quiet_NaN());
    fill_uniform(a, state + 1);
    fill_uniform(b, state + 2);
    for (int64_t i = 0; i < guard; ++i) c[static_cast<size_t>(i)] = c[c.size() - 1 - static_cast<size_t>(i)] = 7.0f;
    float *window = c.data() + guard;
    ++found->calls;
    const fg_status_t status = fg_sgemm_host(handle, FG_COL_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, a.data(), m,
                                             b.data(), k, 0.0f, window, ldc);
    if (status != FG_STATUS_SUCCESS) {
      ++found->failed_calls;
      if (found->first_failure.empty()) found->first_failure = fg_last_error_message();
      continue;
    }
    const std::vector<float> returned = c;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        double sum = 0.0, scale = 0.0;
        for (int64_t l = 0; l < k; ++l) {
          const double term =
              static_cast<double>(a[static_cast<size_t>(i + l * m)]) * b[static_cast<size_t>(l + j * k)];
          sum += term;
          scale += std::fabs(term);
        }
        const double got = window[i + j * ldc];
        const double error = std::isfinite(got) ? std::fabs(got - sum) / (scale > 0 ? scale : 1.0) : 1.0;
        found->worst = std::max(found->worst, error);
        if (!(error <= gemm_tolerance(k))) ++found->wrong;
      }
    for (int64_t i = 0; i < guard; ++i)
      if (c[static_cast<size_t>(i)] != 7.0f || c[c.size() - 1 - static_cast<size_t>(i)] != 7.0f) ++found->guards_hit;
    for (int64_t j = 0; j < n; ++j)  // the rows between C's columns (ldc > m) stay as they were, NaN
      for (int64_t i = m; i < ldc; ++i)
        if (!std::isnan(window[i + j * ldc])) ++found->guards_hit;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (std::memcmp(returned.data(), c.data(), c.size() * sizeof(float)) != 0) ++found->changed_after_return;
  }
  if (fg_destroy(handle) != FG_STATUS_SUCCESS && found->first_failure.empty())
    found->first_failure = std::string("fg_destroy: ") + fg_last_error_message();
}

}  // namespace

TEST_CASE("host: several threads at once, each with a handle of its own made and destroyed there, many tiles",
          "[host]") {
  const TileLimit tiles(64);
  constexpr int threads = 4;
  ThreadFindings found[threads];
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t) running.emplace_back(host_thread, t, &found[t]);
  for (std::thread &thread : running) thread.join();
  for (int t = 0; t < threads; ++t) {
    INFO("thread " << t << ": " << found[t].calls << " calls, worst relative error " << found[t].worst << "; "
                   << found[t].first_failure);
    CHECK(found[t].first_failure.empty());
    CHECK(found[t].calls == 12);
    CHECK(found[t].failed_calls == 0);
    CHECK(found[t].wrong == 0);
    CHECK(found[t].guards_hit == 0);
    CHECK(found[t].changed_after_return == 0);
  }
}

TEST_CASE("host: the C++ wrapper", "[host][cpp]") {
  fastgemm::Handle handle;
  const TileLimit limit(16);
  const int64_t m = 33, n = 21, k = 40;
  std::vector<float> a(m * k), b(k * n), c(m * n, std::numeric_limits<float>::quiet_NaN());
  fill_uniform(a, 11);
  fill_uniform(b, 12);
  GemmCase gc = make_case(FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, 0.0f).resolved();
  const std::vector<double> reference = reference_gemm(gc, a, b, c);
  handle.sgemm_host(FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
  CHECK(relative_error(c, reference) <= gemm_tolerance(k));
  CHECK(handle.devices().size() == 1);
  CHECK_THROWS_AS(handle.set_devices({-1}), fastgemm::Error);
}
