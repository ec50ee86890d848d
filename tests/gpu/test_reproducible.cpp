// SPDX-License-Identifier: Apache-2.0
// FG_REPRODUCIBLE_SHAPE: one product computed whole, then blocks of its rows and columns computed as products
// of their own, in every layout and transpose, with padded leading dimensions, pointers off their 16-byte
// boundary, at some position of a strided batch, on another stream, by AUTO and by every algorithm AUTO may
// pick in this setting (forced one by one), and through fg_sgemm_host with several tilings and workers: every
// element must be bitwise the whole product's. The whole product is checked against a double reference, C is
// poisoned with NaN where beta == 0, and one row times one column underflows to a sum of -0 (which must come
// out as +0 from every kernel, padded k or not).
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gpu/gemm_harness.hpp"

using namespace fgtest;

namespace {

// The algorithms FG_REPRODUCIBLE_SHAPE's AUTO chooses among; each must give the same bits.
const fg_sgemm_algo_t kShapeAlgos[] = {FG_SGEMM_NAIVE,        FG_SGEMM_SMEM,      FG_SGEMM_SMEM_VEC4,
                                       FG_SGEMM_BANK_FREE,    FG_SGEMM_PIPELINED, FG_SGEMM_SMALL_TILE,
                                       FG_SGEMM_DOUBLE_BUFFER};

// A row-major rows x cols matrix of the test's logical operands (op(A), op(B), C).
struct Logical {
  int64_t rows = 0, cols = 0;
  std::vector<float> values;
  float at(int64_t r, int64_t c) const { return values[static_cast<size_t>(r * cols + c)]; }
  Logical block(int64_t r0, int64_t c0, int64_t block_rows, int64_t block_cols) const {
    Logical out{block_rows, block_cols, std::vector<float>(static_cast<size_t>(block_rows * block_cols))};
    for (int64_t r = 0; r < block_rows; ++r)
      for (int64_t c = 0; c < block_cols; ++c) out.values[static_cast<size_t>(r * block_cols + c)] = at(r0 + r, c0 + c);
    return out;
  }
};

Logical random_logical(int64_t rows, int64_t cols, uint64_t seed) {
  Logical x{rows, cols, std::vector<float>(static_cast<size_t>(rows * cols))};
  fill_uniform(x.values, seed);
  return x;
}

// How a call stores its operands: the layout, the transposes, extra leading-dimension elements, the offset of
// every matrix from a 256-byte aligned allocation, and which of `batch` strided products is the one checked.
struct Placement {
  fg_layout_t layout = FG_ROW_MAJOR;
  fg_op_t transa = FG_OP_N, transb = FG_OP_N;
  int64_t pad = 0, offset = 0, batch = 1, position = 0;
  bool other_stream = false;
  std::string describe() const {
    return std::string(layout == FG_ROW_MAJOR ? "row" : "col") + (transa == FG_OP_N ? " N" : " T") +
           (transb == FG_OP_N ? "N" : "T") + " pad " + std::to_string(pad) + " offset " + std::to_string(offset) +
           " batch " + std::to_string(position) + "/" + std::to_string(batch) + (other_stream ? " stream" : "");
  }
};

// One logical matrix stored for a call: element (r, c) at offset + position * stride + (by_rows ? r * ld + c :
// c * ld + r); everything else holds unrelated values.
struct Stored {
  int64_t ld = 0, stride = 0, elements = 0;
  std::vector<float> host;
  int64_t index(const Placement &p, bool by_rows, int64_t r, int64_t c) const {
    return p.offset + p.position * stride + (by_rows ? r * ld + c : c * ld + r);
  }
};

Stored store(const Logical &x, const Placement &p, bool by_rows, uint64_t seed, bool poison) {
  Stored s;
  const int64_t lines = by_rows ? x.rows : x.cols;
  s.ld = (by_rows ? x.cols : x.rows) + p.pad;
  if (s.ld < 1) s.ld = 1;
  s.stride = lines * s.ld + p.pad;
  s.elements = p.offset + (p.batch - 1) * s.stride + lines * s.ld;
  s.host.resize(static_cast<size_t>(s.elements));
  fill_uniform(s.host, seed);
  for (int64_t r = 0; r < x.rows; ++r)
    for (int64_t c = 0; c < x.cols; ++c)
      s.host[static_cast<size_t>(s.index(p, by_rows, r, c))] =
          poison ? std::numeric_limits<float>::quiet_NaN() : x.at(r, c);
  return s;
}

// C := alpha op(A) op(B) + beta C for the logical operands, stored as `p` says, with the handle's settings.
// Returns the call's status; *out receives the checked product's C (row-major) on success.
fg_status_t run_placed(fg_handle_t handle, const Placement &p, const Logical &a, const Logical &b, const Logical &c0,
                       float alpha, float beta, Logical *out) {
  const bool a_rows = (p.layout == FG_ROW_MAJOR) == (p.transa == FG_OP_N);
  const bool b_rows = (p.layout == FG_ROW_MAJOR) == (p.transb == FG_OP_N);
  const bool c_rows = p.layout == FG_ROW_MAJOR;
  const Stored sa = store(a, p, a_rows, 11, false), sb = store(b, p, b_rows, 12, false);
  const Stored sc = store(c0, p, c_rows, 13, beta == 0.0f);
  DeviceMemory da(sa.host.size() * sizeof(float)), db(sb.host.size() * sizeof(float)),
      dc(sc.host.size() * sizeof(float));
  upload(da, sa.host);
  upload(db, sb.host);
  upload(dc, sc.host);
  cudaStream_t stream = nullptr;
  if (p.other_stream) {
    REQUIRE_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    REQUIRE_FG_OK(fg_set_stream(handle, stream));
  }
  const float *A = da.as<float>() + p.offset, *B = db.as<float>() + p.offset;
  float *C = dc.as<float>() + p.offset;
  const int64_t m = c0.rows, n = c0.cols, k = a.cols;
  const fg_status_t status =
      p.batch == 1 ? fg_sgemm(handle, p.layout, p.transa, p.transb, m, n, k, alpha, A, sa.ld, B, sb.ld, beta, C, sc.ld)
                   : fg_sgemm_strided_batched(handle, p.layout, p.transa, p.transb, m, n, k, alpha, A, sa.ld, sa.stride,
                                              B, sb.ld, sb.stride, beta, C, sc.ld, sc.stride, p.batch);
  const std::string message = fg_last_error_message();
  if (p.other_stream) {
    REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
    REQUIRE_FG_OK(fg_set_stream(handle, nullptr));
    REQUIRE_CUDA_OK(cudaStreamDestroy(stream));
  }
  const std::vector<float> result = download<float>(dc, sc.host.size());
  if (status != FG_STATUS_SUCCESS) {
    INFO(message);
    // Refused: nothing was written.
    CHECK(std::memcmp(result.data(), sc.host.data(), result.size() * sizeof(float)) == 0);
    return status;
  }
  *out = Logical{m, n, std::vector<float>(static_cast<size_t>(m * n))};
  for (int64_t r = 0; r < m; ++r)
    for (int64_t col = 0; col < n; ++col)
      out->values[static_cast<size_t>(r * n + col)] = result[static_cast<size_t>(sc.index(p, c_rows, r, col))];
  return status;
}

uint32_t bits(float value) {
  uint32_t word;
  std::memcpy(&word, &value, sizeof(word));
  return word;
}

// Counts, and reports the first few of, the elements of `got` whose bits differ from `whole`'s block at
// (r0, c0).
int64_t differing_bits(const Logical &whole, int64_t r0, int64_t c0, const Logical &got) {
  int64_t differ = 0;
  for (int64_t r = 0; r < got.rows; ++r)
    for (int64_t c = 0; c < got.cols; ++c) {
      const float expected = whole.at(r0 + r, c0 + c), actual = got.at(r, c);
      if (bits(expected) == bits(actual)) continue;
      if (++differ <= 3)
        UNSCOPED_INFO("element (" << r0 + r << ", " << c0 + c << "): " << actual << " (0x" << std::hex << bits(actual)
                                  << ") where the whole product has " << expected << " (0x" << bits(expected)
                                  << std::dec << ")");
    }
  return differ;
}

// The operands of one test product: op(A) rows x depth, op(B) depth x cols, C0. Row kTinyRow of op(A) and
// column kTinyCol of op(B) hold values whose products all round to -0.
constexpr int64_t kTinyRow = 3, kTinyCol = 5;

struct Operands {
  Logical a, b, c0;
};

Operands make_operands(int64_t m, int64_t n, int64_t k, uint64_t seed) {
  Operands o{random_logical(m, k, seed), random_logical(k, n, seed + 1), random_logical(m, n, seed + 2)};
  for (int64_t l = 0; l < k; ++l) {
    o.a.values[static_cast<size_t>(kTinyRow * k + l)] = 1e-30f;
    o.b.values[static_cast<size_t>(l * n + kTinyCol)] = -1e-30f;
  }
  return o;
}

// The whole product, checked against the double reference.
void check_whole(const Operands &o, float alpha, float beta, const Logical &whole) {
  const int64_t m = o.c0.rows, n = o.c0.cols, k = o.a.cols;
  std::vector<double> worst(static_cast<size_t>(m), 0.0);
  parallel_for(m, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double sum = 0.0, magnitude = 0.0;
        for (int64_t l = 0; l < k; ++l) {
          sum += static_cast<double>(o.a.at(r, l)) * o.b.at(l, c);
          magnitude += std::fabs(static_cast<double>(o.a.at(r, l)) * o.b.at(l, c));
        }
        const double expected = alpha * sum + (beta != 0.0f ? beta * static_cast<double>(o.c0.at(r, c)) : 0.0);
        const double scale = std::fabs(alpha) * magnitude + std::fabs(beta * static_cast<double>(o.c0.at(r, c)));
        // Below FP32's normal range the error is absolute: the tiny row and column's sum underflows to 0.
        const double floor = std::numeric_limits<float>::min();
        const double error = std::fabs(whole.at(r, c) - expected) / std::max(scale, floor);
        worst[static_cast<size_t>(r)] = std::isnan(error) ? INFINITY : std::max(worst[static_cast<size_t>(r)], error);
      }
  });
  double largest = 0.0;
  for (double error : worst) largest = std::max(largest, error);
  INFO("largest elementwise error relative to |alpha||A||B| + |beta C|: " << largest);
  CHECK(largest <= 1e-5);
  // Every product of the tiny row and column rounds to -0, and so does their sum: +0 once alpha is applied.
  if (beta == 0.0f) CHECK(bits(whole.at(kTinyRow, kTinyCol)) == 0u);
}

struct Block {
  int64_t r0, c0, rows, cols;
};

// The placements the blocks are computed in: every layout and transpose pair, with paddings, offsets (most
// off the 16-byte boundary), batch positions and streams mixed among them.
std::vector<Placement> placements() {
  std::vector<Placement> out;
  for (int i = 0; i < 12; ++i) {
    Placement p;
    p.layout = i % 2 == 0 ? FG_ROW_MAJOR : FG_COL_MAJOR;
    p.transa = (i / 2) % 2 == 0 ? FG_OP_N : FG_OP_T;
    p.transb = (i / 4) % 2 == 0 ? FG_OP_N : FG_OP_T;
    p.pad = i % 3 == 0 ? 0 : (i % 3 == 1 ? 4 : 3);
    p.offset = i % 4 == 0 ? 0 : (i % 4 == 1 ? 1 : (i % 4 == 2 ? 4 : 3));
    p.batch = i % 3 == 2 ? 3 : 1;
    p.position = p.batch > 1 ? (i / 3) % p.batch : 0;  // first, middle and last of the batch
    p.other_stream = i % 5 == 4;
    out.push_back(p);
  }
  return out;
}

bool carried(fg_handle_t handle, fg_sgemm_algo_t algo) {
  fg_sgemm_algo_t before = FG_SGEMM_AUTO;
  REQUIRE_FG_OK(fg_get_sgemm_algo(handle, &before));
  const bool ok = fg_set_sgemm_algo(handle, algo) == FG_STATUS_SUCCESS;
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle, before));
  return ok;
}

}  // namespace

TEST_CASE("FG_REPRODUCIBLE_SHAPE: blocks of a product are bitwise the product's, whatever the call's shape",
          "[reproducible]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_reproducibility(handle.get(), FG_REPRODUCIBLE_SHAPE));
  // Wide enough that AUTO picks a large-tile kernel for the whole product and small_tile for the blocks; k
  // both a whole number of every kernel's k-tiles and not.
  const int64_t m = 1600, n = 1552;
  const Block blocks[] = {{0, 0, m, n},         {37, 101, 33, 17},    {0, 0, 1, n},     {0, 5, m, 1},
                          {m - 1, n - 1, 1, 1}, {200, 300, 700, 650}, {1, 2, 130, 129}, {kTinyRow, kTinyCol, 16, 16}};
  for (int64_t k : {int64_t{777}, int64_t{64}})
    for (const auto &scalars : {std::pair<float, float>{1.0f, 0.0f}, std::pair<float, float>{1.5f, -0.75f}}) {
      const float alpha = scalars.first, beta = scalars.second;
      const Operands o = make_operands(m, n, k, 100 + static_cast<uint64_t>(k));
      Logical whole;
      REQUIRE_FG_OK(run_placed(handle.get(), Placement{}, o.a, o.b, o.c0, alpha, beta, &whole));
      fg_sgemm_algo_t whole_algo = FG_SGEMM_AUTO;
      REQUIRE_FG_OK(fg_get_last_sgemm_algo(handle.get(), &whole_algo));
      INFO("k " << k << " alpha " << alpha << " beta " << beta << ", whole product by "
                << fg_sgemm_algo_name(whole_algo));
      check_whole(o, alpha, beta, whole);

      std::map<fg_sgemm_algo_t, int> ran, auto_ran;
      const std::vector<Placement> places = placements();
      std::vector<fg_sgemm_algo_t> algos{FG_SGEMM_AUTO};
      for (fg_sgemm_algo_t algo : kShapeAlgos)
        if (carried(handle.get(), algo)) algos.push_back(algo);
      for (fg_sgemm_algo_t algo : algos) {
        REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), algo));
        for (size_t i = 0; i < places.size(); ++i)
          for (size_t j = 0; j < sizeof(blocks) / sizeof(blocks[0]); ++j) {
            // Every placement with the small blocks; the two large ones with a few placements each.
            const Block &blk = blocks[j];
            if (blk.rows * blk.cols > 100000 && (i + j) % 5 != 0) continue;
            const Placement &p = places[i];
            INFO("algorithm " << fg_sgemm_algo_name(algo) << ", block (" << blk.r0 << ", " << blk.c0 << ") " << blk.rows
                              << " x " << blk.cols << ", " << p.describe());
            Logical got;
            const fg_status_t status =
                run_placed(handle.get(), p, o.a.block(blk.r0, 0, blk.rows, k), o.b.block(0, blk.c0, k, blk.cols),
                           o.c0.block(blk.r0, blk.c0, blk.rows, blk.cols), alpha, beta, &got);
            if (algo != FG_SGEMM_AUTO && status == FG_STATUS_NOT_SUPPORTED) continue;  // 128-bit loads, say
            REQUIRE(status == FG_STATUS_SUCCESS);
            fg_sgemm_algo_t last = FG_SGEMM_AUTO;
            REQUIRE_FG_OK(fg_get_last_sgemm_algo(handle.get(), &last));
            ++(algo == FG_SGEMM_AUTO ? auto_ran : ran)[last];
            CHECK(differing_bits(whole, blk.r0, blk.c0, got) == 0);
          }
      }
      REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_AUTO));
      // Every algorithm ran some of the blocks; AUTO itself chose more than one (small_tile for the small
      // blocks, a large-tile kernel for the large ones on the H100), and only among them.
      for (fg_sgemm_algo_t algo : algos)
        if (algo != FG_SGEMM_AUTO) CHECK(ran[algo] > 0);
      std::string auto_choices;
      for (const auto &entry : auto_ran) {
        auto_choices += std::string(" ") + fg_sgemm_algo_name(entry.first);
        CHECK(ran.count(entry.first) == 1);
      }
      INFO("AUTO chose" << auto_choices);
      CHECK(auto_ran.size() >= 2);
    }
}

TEST_CASE("FG_REPRODUCIBLE_SHAPE: forced algorithms outside the FMA chain are refused; emulated mode runs FP32",
          "[reproducible]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_reproducibility(handle.get(), FG_REPRODUCIBLE_SHAPE));
  const Operands o = make_operands(300, 200, 2048, 7);
  for (fg_sgemm_algo_t algo : {FG_SGEMM_SPLIT_K, FG_SGEMM_CUBLAS, FG_SGEMM_OZAKI_INT8}) {
    if (!carried(handle.get(), algo)) continue;
    INFO("algorithm " << fg_sgemm_algo_name(algo));
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), algo));
    Logical got;
    CHECK(run_placed(handle.get(), Placement{}, o.a, o.b, o.c0, 1.0f, 0.0f, &got) == FG_STATUS_NOT_SUPPORTED);
    const std::string message = fg_last_error_message();
    INFO(message);
    CHECK(message.find("FG_REPRODUCIBLE_SHAPE") != std::string::npos);
    size_t bytes = 0;
    CHECK(fg_sgemm_workspace_size(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 300, 200, 2048, 1, &bytes) ==
          FG_STATUS_NOT_SUPPORTED);
  }
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_AUTO));
  // In the emulated mode AUTO keeps to the FP32 kernels: the same bits, in a larger product too.
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
  const Operands wide = make_operands(3072, 3072, 2048, 7);
  Logical got;
  REQUIRE_FG_OK(run_placed(handle.get(), Placement{}, wide.a, wide.b, wide.c0, 1.0f, 0.0f, &got));
  fg_sgemm_algo_t last = FG_SGEMM_AUTO;
  REQUIRE_FG_OK(fg_get_last_sgemm_algo(handle.get(), &last));
  INFO("emulated mode ran " << fg_sgemm_algo_name(last));
  CHECK(last != FG_SGEMM_OZAKI_INT8);
  CHECK(last != FG_SGEMM_CUBLAS);
  CHECK(last != FG_SGEMM_SPLIT_K);
  // The first 300 rows and 200 columns of `wide` are not `o`'s, so the comparison is with the FP32 mode's
  // product of the same operands.
  REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32));
  Logical fp32;
  REQUIRE_FG_OK(run_placed(handle.get(), Placement{}, wide.a, wide.b, wide.c0, 1.0f, 0.0f, &fp32));
  CHECK(differing_bits(fp32, 0, 0, got) == 0);
  // And the default setting is untouched by all this.
  REQUIRE_FG_OK(fg_set_reproducibility(handle.get(), FG_REPRODUCIBLE_RUN));
  REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_CUBLAS));
  CHECK(run_placed(handle.get(), Placement{}, o.a, o.b, o.c0, 1.0f, 0.0f, &got) == FG_STATUS_SUCCESS);
}

namespace {

// fg_sgemm_host over pageable copies of the operands stored as `p` says (batch 1).
Logical host_product(fg_handle_t handle, const Placement &p, const Logical &a, const Logical &b, const Logical &c0,
                     float alpha, float beta) {
  const bool a_rows = (p.layout == FG_ROW_MAJOR) == (p.transa == FG_OP_N);
  const bool b_rows = (p.layout == FG_ROW_MAJOR) == (p.transb == FG_OP_N);
  const bool c_rows = p.layout == FG_ROW_MAJOR;
  const Stored sa = store(a, p, a_rows, 21, false), sb = store(b, p, b_rows, 22, false);
  Stored sc = store(c0, p, c_rows, 23, beta == 0.0f);
  const int64_t m = c0.rows, n = c0.cols, k = a.cols;
  REQUIRE_FG_OK(fg_sgemm_host(handle, p.layout, p.transa, p.transb, m, n, k, alpha, sa.host.data() + p.offset, sa.ld,
                              sb.host.data() + p.offset, sb.ld, beta, sc.host.data() + p.offset, sc.ld));
  Logical out{m, n, std::vector<float>(static_cast<size_t>(m * n))};
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c)
      out.values[static_cast<size_t>(r * n + c)] = sc.host[static_cast<size_t>(sc.index(p, c_rows, r, c))];
  return out;
}

}  // namespace

// Tag [host]: the host-path suites run it again with two workers a device and over every device.
TEST_CASE("FG_REPRODUCIBLE_SHAPE: fg_sgemm_host gives fg_sgemm's bits, whatever its tiles and workers",
          "[reproducible][host]") {
  Handle handle;
  REQUIRE_FG_OK(fg_set_reproducibility(handle.get(), FG_REPRODUCIBLE_SHAPE));
  const int64_t m = 700, n = 530;
  // k deeper than the default setting's chunks of 2048, so that the default grid would cut it.
  for (int64_t k : {int64_t{777}, int64_t{4500}}) {
    const float alpha = 1.5f, beta = -0.75f;
    const Operands o = make_operands(m, n, k, 300 + static_cast<uint64_t>(k));
    Logical whole;
    REQUIRE_FG_OK(run_placed(handle.get(), Placement{}, o.a, o.b, o.c0, alpha, beta, &whole));
    check_whole(o, alpha, beta, whole);
    Placement column_major;
    column_major.layout = FG_COL_MAJOR, column_major.transa = FG_OP_T, column_major.transb = FG_OP_T;
    column_major.pad = 3, column_major.offset = 1;
    // FASTGEMM_HOST_TILE: the default grid, then tiles (and, in the default setting, k chunks) of 256, 100, 37.
    for (const char *tile : {static_cast<const char *>(nullptr), "256", "100", "37"})
      for (const Placement &p : {Placement{}, column_major}) {
        ScopedEnvironment variable("FASTGEMM_HOST_TILE", tile);
        INFO("k " << k << ", FASTGEMM_HOST_TILE=" << (tile != nullptr ? tile : "(unset)") << ", " << p.describe());
        CHECK(differing_bits(whole, 0, 0, host_product(handle.get(), p, o.a, o.b, o.c0, alpha, beta)) == 0);
        const Block blk{101, 77, 150, 333};
        const Logical got =
            host_product(handle.get(), p, o.a.block(blk.r0, 0, blk.rows, k), o.b.block(0, blk.c0, k, blk.cols),
                         o.c0.block(blk.r0, blk.c0, blk.rows, blk.cols), alpha, beta);
        CHECK(differing_bits(whole, blk.r0, blk.c0, got) == 0);
      }
  }
  // k in one chunk has a limit: past it the call is refused, and C is left alone.
  const int64_t deep = int64_t{1} << 22;
  std::vector<float> a(static_cast<size_t>(deep) + 1, 1.0f), b(static_cast<size_t>(deep) + 1, 1.0f), c(1, 5.0f);
  CHECK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 1, 1, deep + 1, 1.0f, a.data(), deep + 1, b.data(),
                      1, 0.0f, c.data(), 1) == FG_STATUS_NOT_SUPPORTED);
  const std::string message = fg_last_error_message();
  INFO(message);
  CHECK(message.find("FG_REPRODUCIBLE_SHAPE") != std::string::npos);
  CHECK(c[0] == 5.0f);
  REQUIRE_FG_OK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, 1, 1, deep, 1.0f, a.data(), deep, b.data(),
                              1, 0.0f, c.data(), 1));
  CHECK(c[0] == static_cast<float>(deep));  // 2^22 ones: exact in FP32
}
