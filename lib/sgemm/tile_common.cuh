// SPDX-License-Identifier: Apache-2.0
// What the tiled SGEMM kernels (smem, smem_vec4, bank_free, double_buffer) share: the 128 x 128 x 8 block
// tile and the way 256 threads split it, the copies of operand tiles from global into shared memory for
// either orientation, the inner product over one shared tile, the alpha/beta epilogue, the walk over
// output tiles and batches, the check that 128-bit accesses are possible, and the one launcher.
//
// Operand tiles are handled in (mn, k) coordinates: for A, mn is the row of op(A); for B, the column of
// op(B). A 128 x 8 tile of either is then the same shape, and one copy routine serves both operands.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "core/launch.cuh"
#include "core/problem.hpp"
#include "core/status.hpp"
#include "sgemm/variant.hpp"

namespace fastgemm::detail::tiled {

constexpr int kTileM = 128;  // rows of C a block computes
constexpr int kTileN = 128;  // columns of C a block computes
constexpr int kTileK = 8;    // depth of one shared-memory tile
constexpr int kTileMN = kTileM;
static_assert(kTileM == kTileN, "A's and B's tiles share one shape, and with it the copy routines");

constexpr int kThreads = 256;
constexpr int kThreadTile = 8;  // each thread computes 8 x 8 outputs
// A thread's 8 rows are two bands of 4, half a tile apart, and so are its 8 columns: the 16 threads of a
// half-warp then read 16 consecutive 128-bit words of a shared line, which no two of them share a bank for.
constexpr int kBand = 4;
constexpr int kBandGap = kTileMN / 2;
constexpr int kThreadsAlongN = kTileN / kThreadTile;
static_assert(kThreads == (kTileM / kThreadTile) * kThreadsAlongN, "one thread per 8 x 8 block of the C tile");
static_assert(kTileMN * kTileK == 4 * kThreads, "each thread moves 4 elements of each operand tile");

// 64 accumulators a thread: at most 128 registers keeps two blocks on an SM.
constexpr int kMinBlocksPerSm = 2;

// How a tile's elements lie, in global or shared memory: consecutive along k, or along mn.
enum class Order { k_contiguous, mn_contiguous };

// op(A)[r][c] lies at c * lda + r when transposed: consecutive rows, that is consecutive mn.
constexpr Order a_order(bool transposed) { return transposed ? Order::mn_contiguous : Order::k_contiguous; }
// op(B)[r][c] lies at r * ldb + c when not transposed: consecutive columns, that is consecutive mn.
constexpr Order b_order(bool transposed) { return transposed ? Order::k_contiguous : Order::mn_contiguous; }

// B's tile is always stored along n, so a thread's 8 columns are two 128-bit reads.
constexpr Order kBShared = Order::mn_contiguous;

// A shared tile stored along mn is 8 lines of 128, each padded by 4 words: a warp that copies from a
// k-contiguous source writes several of these lines at once, and the padding shifts each line by 4 banks,
// which puts those writes on distinct banks while keeping every line 16-byte aligned. Stored along k, it
// is 128 unpadded lines of 8.
constexpr int kLinePitch = kTileMN + 4;

constexpr int shared_tile_words(Order order) {
  return order == Order::mn_contiguous ? kTileK * kLinePitch : kTileMN * kTileK;
}

template <Order kShared>
__host__ __device__ constexpr int shared_index(int mn, int k) {
  return kShared == Order::mn_contiguous ? k * kLinePitch + mn : mn * kTileK + k;
}

// The thread's index, read afresh at each use. With threadIdx.x the compiler computes every offset that
// depends on the thread once, ahead of the loop over output tiles, and keeps them all in registers through
// the main loop: more than the 128 a thread has at two blocks per SM, so they would spill.
__device__ __forceinline__ int thread_index() {
  unsigned index;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(index));
  __builtin_assume(index < kThreads);  // non-negative: divisions by powers of two are shifts
  return static_cast<int>(index);
}

// The first of a thread's rows (or columns) in the tile, and its i-th, i in [0, 8).
__device__ __forceinline__ int thread_row0() { return thread_index() / kThreadsAlongN * kBand; }
__device__ __forceinline__ int thread_col0() { return thread_index() % kThreadsAlongN * kBand; }
__device__ __forceinline__ int owned_index(int first, int i) { return first + i / kBand * kBandGap + i % kBand; }

// The output tiles one block computes: blockIdx.x fixes its column of tiles; blockIdx.y and blockIdx.z
// stride over the tile rows and batches, since a grid's y and z stop at 65535.
struct OutputTile {
  int64_t batch, row0;

  __device__ static OutputTile first() {
    return {static_cast<int64_t>(blockIdx.z), static_cast<int64_t>(blockIdx.y) * kTileM};
  }
  __device__ static int64_t col0() { return static_cast<int64_t>(blockIdx.x) * kTileN; }
  __device__ void advance(const GemmProblem &p) {
    row0 += static_cast<int64_t>(gridDim.y) * kTileM;
    if (row0 < p.m) return;
    row0 = static_cast<int64_t>(blockIdx.y) * kTileM;
    batch += gridDim.z;
  }
};

__device__ __forceinline__ int tile_extent(int64_t total, int64_t first, int tile) {
  return total - first < tile ? static_cast<int>(total - first) : tile;
}

// 32-bit or 128-bit global memory accesses.
enum class Access { scalar, vector };

struct TilePosition {
  int mn, k;
};

// From one of a thread's 4 elements of an operand tile to the next (see TileLoader).
constexpr TilePosition element_step(Order source, bool along_mn, Access access) {
  if (access == Access::vector) return source == Order::k_contiguous ? TilePosition{0, 1} : TilePosition{1, 0};
  return along_mn ? TilePosition{0, kThreads / kTileMN} : TilePosition{kThreads / kTileK, 0};
}

// One thread's share of the k-tiles of one operand, for one output tile: 4 elements of each 128 x 8
// tile, read from global memory laid out as kSource says, zero outside the matrix, and stored into a
// shared tile laid out as kShared says.
//
// Scalar: element e of the tile is thread e % 256's, in an order where a warp-wide load covers 32
// consecutive mn of one k if source and shared tile both run along mn, else 4 mn by 8 k: whole 32-byte
// sectors of a k-contiguous source, and stores into a tile stored along k (8-word lines) on 32 distinct
// banks.
// Vector: the thread's elements are one chunk, consecutive along the source's contiguous direction. Along
// k, a warp reads 16 lines of 32 bytes. Along mn into a tile stored along mn, it reads 512 consecutive
// bytes of one k-line; into a tile stored along k, 64 bytes of each of 8 k-lines instead, so that the
// element-wise stores that transpose the chunk can be spread over all 32 banks (see store).
template <Order kSource, Order kShared, Access kAccess>
class TileLoader {
 public:
  __device__ TileLoader(const GemmOperand &x, int64_t batch, int64_t mn0, int64_t mn_total) : ld_(x.ld) {
    const TilePosition first = first_position();
    mn_inside_ = tile_extent(mn_total, mn0, kTileMN) - first.mn;
    first_k_ = first.k;
    shared_offset_ = shared_index<kShared>(first.mn, first.k);
    const int64_t first_line = kSource == Order::k_contiguous ? mn0 * x.ld : mn0;
    source_ = x.data + batch * x.stride + first_line + offset(first.mn, first.k);
  }

  // Whether the thread's elements of every full k-tile lie inside the matrix: known once per output tile,
  // so that interior tiles can skip the guards of load.
  __device__ bool inside_at_full_k() const { return inside(kLastOfFour.mn, kLastOfFour.k, kTileK); }

  // The thread's elements of a k-tile for which inside_at_full_k() holds.
  __device__ float4 load_inside() const {
    static_assert(kAccess == Access::vector, "unguarded loads are single 128-bit loads");
    return *reinterpret_cast<const float4 *>(source_);
  }

  __device__ float4 load(int k_extent) const {
    if constexpr (kAccess == Access::vector) {
      if (inside(kLastOfFour.mn, kLastOfFour.k, k_extent)) return load_inside();
    }
    // Element by element: every element of a scalar loader, and a chunk that straddles the matrix's edge.
    const int64_t source_step = offset(kStep.mn, kStep.k);
    float values[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      values[i] = inside(i * kStep.mn, i * kStep.k, k_extent) ? source_[i * source_step] : 0.0f;
    return make_float4(values[0], values[1], values[2], values[3]);
  }

  __device__ void store(float *shared, float4 values) const {
    float *destination = shared + shared_offset_;
    constexpr int kSharedStep = shared_index<kShared>(kStep.mn, kStep.k);
    if constexpr (kAccess == Access::vector && kSource == kShared) {
      *reinterpret_cast<float4 *>(destination) = values;
    } else if constexpr (kAccess == Access::vector && kShared == Order::k_contiguous) {
      // Element i of every chunk lies on the same 8 banks (its line is i modulo 4), so the 4 chunks of a
      // warp's k-column would take turns on them. Chunk c stores its element (i + c) % 4 at step i instead,
      // which spreads each step over 32 banks.
      static_assert(kSharedStep == kTileK && 4 * kTileK == 32, "a chunk's 4 lines cover the 32 banks once");
      const unsigned rotation = static_cast<unsigned>(shared_offset_) / (4 * kTileK) % 4;
      if (rotation & 1) values = make_float4(values.y, values.z, values.w, values.x);
      if (rotation & 2) values = make_float4(values.z, values.w, values.x, values.y);
      const float rotated[4] = {values.x, values.y, values.z, values.w};
#pragma unroll
      for (unsigned i = 0; i < 4; ++i) destination[(i + rotation) % 4 * kSharedStep] = rotated[i];
    } else {
      destination[0] = values.x;
      destination[kSharedStep] = values.y;
      destination[2 * kSharedStep] = values.z;
      destination[3 * kSharedStep] = values.w;
    }
  }

  __device__ void next_k_tile() { source_ += kSource == Order::k_contiguous ? kTileK : kTileK * ld_; }

 private:
  static constexpr bool kAlongMn = kSource == Order::mn_contiguous && kShared == Order::mn_contiguous;
  static constexpr TilePosition kStep = element_step(kSource, kAlongMn, kAccess);
  static constexpr TilePosition kLastOfFour = {3 * kStep.mn, 3 * kStep.k};

  __device__ static TilePosition first_position() {
    const int t = thread_index();
    if (kAccess == Access::vector) {
      if (kSource == Order::k_contiguous) return {t / 2, t % 2 * 4};
      if (kShared == Order::mn_contiguous) return {t % 32 * 4, t / 32};
      return {t / 8 * 4, t % 8};
    }
    if (kAlongMn) return {t % kTileMN, t / kTileMN};
    return {t / kTileK, t % kTileK};
  }

  // Memory distance of a step of (mn, k) elements.
  __device__ int64_t offset(int mn, int k) const {
    return kSource == Order::k_contiguous ? mn * ld_ + k : k * ld_ + mn;
  }
  // Whether the element (mn, k) elements past the thread's first lies inside the matrix.
  __device__ bool inside(int mn, int k, int k_extent) const { return mn < mn_inside_ && first_k_ + k < k_extent; }

  const float *source_;  // the thread's first element in the current k-tile
  int64_t ld_;
  int mn_inside_;      // how many mn from the thread's first element on lie inside the matrix
  int first_k_;        // the k of the thread's first element in the tile
  int shared_offset_;  // where the thread's first element goes in a shared tile
};

template <bool kTransposed, Order kShared, Access kAccess>
__device__ __forceinline__ TileLoader<a_order(kTransposed), kShared, kAccess> a_loader(const GemmProblem &p,
                                                                                       const OutputTile &tile) {
  return {p.a, tile.batch, tile.row0, p.m};
}

template <bool kTransposed, Access kAccess>
__device__ __forceinline__ TileLoader<b_order(kTransposed), kBShared, kAccess> b_loader(const GemmProblem &p,
                                                                                        const OutputTile &tile) {
  return {p.b, tile.batch, tile.col0(), p.n};
}

// Copies one k-tile of each operand into shared memory. Both loads are issued before either store waits
// for its data, so that the two latencies overlap rather than add up.
template <typename ALoader, typename BLoader>
__device__ __forceinline__ void copy_k_tiles(const ALoader &a, const BLoader &b, int k_extent, float *a_shared,
                                             float *b_shared) {
  const float4 a_values = a.load(k_extent);
  const float4 b_values = b.load(k_extent);
  a.store(a_shared, a_values);
  b.store(b_shared, b_values);
}

// The thread's 8 values of op(A)'s rows (or op(B)'s columns) at depth k of a shared tile. Stored along mn,
// each band is one 128-bit read; stored along k, the 8 values lie on 8 lines and are read line by line.
template <Order kShared>
__device__ __forceinline__ void load_fragment(const float *shared, int first, int k, float (&fragment)[kThreadTile]) {
  if constexpr (kShared == Order::mn_contiguous) {
    const float4 low = *reinterpret_cast<const float4 *>(&shared[shared_index<kShared>(first, k)]);
    const float4 high = *reinterpret_cast<const float4 *>(&shared[shared_index<kShared>(first + kBandGap, k)]);
    const float values[kThreadTile] = {low.x, low.y, low.z, low.w, high.x, high.y, high.z, high.w};
#pragma unroll
    for (int i = 0; i < kThreadTile; ++i) fragment[i] = values[i];
  } else {
#pragma unroll
    for (int i = 0; i < kThreadTile; ++i) fragment[i] = shared[shared_index<kShared>(owned_index(first, i), k)];
  }
}

// accumulators += a (the thread's 8 values of op(A) at one depth) times b (its 8 values of op(B)).
__device__ __forceinline__ void accumulate_outer_product(const float (&a)[kThreadTile], const float (&b)[kThreadTile],
                                                         float (&accumulators)[kThreadTile][kThreadTile]) {
#pragma unroll
  for (int i = 0; i < kThreadTile; ++i)
#pragma unroll
    for (int j = 0; j < kThreadTile; ++j) accumulators[i][j] = fmaf(a[i], b[j], accumulators[i][j]);
}

// accumulators += the thread's 8 x 8 share of one shared A tile times one shared B tile, k in order.
// With A stored along k, the compiler merges the reads of consecutive k of one line into one wide read.
// Two k per iteration keep 16 values of A in registers; unrolled over all 8, it merges four at a time and
// holds 32, which no longer fit beside the accumulators.
template <Order kAShared>
__device__ __forceinline__ void multiply_tile(const float *a_shared, const float *b_shared,
                                              float (&accumulators)[kThreadTile][kThreadTile]) {
  constexpr int kKPerIteration = kAShared == Order::k_contiguous ? 2 : kTileK;
  const int row0 = thread_row0(), col0 = thread_col0();
#pragma unroll kKPerIteration
  for (int k = 0; k < kTileK; ++k) {
    float a[kThreadTile], b[kThreadTile];
    load_fragment<kAShared>(a_shared, row0, k, a);
    load_fragment<kBShared>(b_shared, col0, k, b);
    accumulate_outer_product(a, b, accumulators);
  }
}

// A sum of -0 as +0, any other sum as it is. Kernels pad k to whole k-tiles with zeros, and fma(0, 0, -0) is
// +0: without this, a sum that rounds to -0 (products that underflow) would keep its sign in a kernel whose
// k-tiles fit k and lose it in one whose tiles pad it, and FG_REPRODUCIBLE_SHAPE's kernels would disagree.
// __fadd_rn: x + 0 may not be folded to x (IEEE keeps -0 + 0 = +0), nor merged into an FMA.
__device__ __forceinline__ float settled_sum(float sum) { return __fadd_rn(sum, 0.0f); }

// alpha * sum + beta * C; with beta == 0, C is not read, so NaN or Inf already there never reaches it.
__device__ __forceinline__ float epilogue_value(const GemmProblem &p, float sum, const float *c) {
  const float scaled = p.alpha * settled_sum(sum);
  return p.beta == 0.0f ? scaled : fmaf(p.beta, *c, scaled);
}

// epilogue_value for 4 consecutive outputs, C read (when beta != 0) as one 128-bit access.
__device__ __forceinline__ float4 epilogue_vector(const GemmProblem &p, const float *sums, const float *c) {
  float4 values = make_float4(p.alpha * settled_sum(sums[0]), p.alpha * settled_sum(sums[1]),
                              p.alpha * settled_sum(sums[2]), p.alpha * settled_sum(sums[3]));
  if (p.beta != 0.0f) {
    const float4 old = *reinterpret_cast<const float4 *>(c);
    values = make_float4(fmaf(p.beta, old.x, values.x), fmaf(p.beta, old.y, values.y), fmaf(p.beta, old.z, values.z),
                         fmaf(p.beta, old.w, values.w));
  }
  return values;
}

// Writes the thread's 8 x 8 outputs. kVector: 4 columns at a time as one 128-bit access where all 4 lie
// inside C, element by element at the right edge; otherwise element by element throughout.
template <bool kVector>
__device__ __forceinline__ void store_c_tile(const GemmProblem &p, const OutputTile &tile,
                                             const float (&accumulators)[kThreadTile][kThreadTile]) {
  const int row0 = thread_row0(), col0 = thread_col0();
  const int m_extent = tile_extent(p.m, tile.row0, kTileM);
  const int n_extent = tile_extent(p.n, tile.col0(), kTileN);
  // One pointer walks the thread's rows: an address per output would hold more registers than the
  // main loop leaves.
  float *c_row = p.c + tile.batch * p.stride_c + (tile.row0 + row0) * p.ldc + tile.col0();
#pragma unroll
  for (int i = 0; i < kThreadTile; ++i) {
    if (i > 0) c_row += (owned_index(row0, i) - owned_index(row0, i - 1)) * p.ldc;
    if (owned_index(row0, i) >= m_extent) break;  // rows only grow with i
#pragma unroll
    for (int band = 0; band < kThreadTile / kBand; ++band) {
      const int col = col0 + band * kBandGap;
      const int columns_inside = n_extent - col;
      const float *sums = &accumulators[i][band * kBand];
      float *out = c_row + col;
      if (kVector && columns_inside >= kBand) {
        *reinterpret_cast<float4 *>(out) = epilogue_vector(p, sums, out);
      } else {
#pragma unroll
        for (int j = 0; j < kBand; ++j)
          if (j < columns_inside) out[j] = epilogue_value(p, sums[j], out + j);
      }
    }
  }
}

// 128-bit accesses need the first element of every vector 16-byte aligned: the base pointers, and the
// distances between lines (leading dimensions) and between batches (strides) whole multiples of 4
// floats. Operands are named as the caller passed them; a column-major call swaps A and B.
inline Status check_vector_operand(const GemmOperand &x, int64_t batch, const char *name, const char *ld_name,
                                   const char *stride_name) {
  auto refuse = [](std::string condition) {
    return Status::failure(StatusCode::not_supported, std::move(condition) + " for 128-bit accesses");
  };
  if (reinterpret_cast<uintptr_t>(x.data) % 16 != 0) return refuse(std::string(name) + " must be 16-byte aligned");
  if (x.ld % 4 != 0) return refuse(std::string(ld_name) + " = " + std::to_string(x.ld) + " must be a multiple of 4");
  if (batch > 1 && x.stride % 4 != 0)
    return refuse(std::string(stride_name) + " = " + std::to_string(x.stride) + " must be a multiple of 4");
  return Status::success();
}

inline Status vector_access_supported(const GemmProblem &p, const DeviceInfo &) {
  FG_RETURN_IF_ERROR(check_vector_operand(p.a, p.batch, "A (B for FG_COL_MAJOR)", "lda (ldb for FG_COL_MAJOR)",
                                          "stride_a (stride_b for FG_COL_MAJOR)"));
  FG_RETURN_IF_ERROR(check_vector_operand(p.b, p.batch, "B (A for FG_COL_MAJOR)", "ldb (lda for FG_COL_MAJOR)",
                                          "stride_b (stride_a for FG_COL_MAJOR)"));
  const GemmOperand c{p.c, p.ldc, p.stride_c, false};
  return check_vector_operand(c, p.batch, "C", "ldc", "stride_c");
}

using TileKernel = void (*)(GemmProblem);

// The one place where the runtime transposes become template constants: `kernel_for` receives them as
// std::bool_constant and returns its kernel instantiated for them.
template <typename KernelFor>
TileKernel kernel_for_transposes(const GemmProblem &p, KernelFor &&kernel_for) {
  using Yes = std::true_type;
  using No = std::false_type;
  if (p.a.transposed) return p.b.transposed ? kernel_for(Yes{}, Yes{}) : kernel_for(Yes{}, No{});
  return p.b.transposed ? kernel_for(No{}, Yes{}) : kernel_for(No{}, No{});
}

// One block per 128-column strip of C (x), the tile rows and batches on y and z as far as 65535 reaches.
template <typename KernelFor>
Status launch_tile_kernel(const GemmProblem &p, cudaStream_t stream, KernelFor &&kernel_for) {
  const dim3 grid(capped_grid(ceil_div(p.n, kTileN), INT32_MAX), capped_grid(ceil_div(p.m, kTileM)),
                  capped_grid(p.batch));
  return launch(kernel_for_transposes(p, kernel_for), grid, dim3(kThreads), 0, stream, p);
}

// The single-stage rungs (smem, smem_vec4, bank_free) are one kernel: they differ only in how op(A)'s tile
// lies in shared memory and how wide the global accesses are, which each rung's file chooses.
template <Order kAShared, Access kAccess, bool kATransposed, bool kBTransposed>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) single_stage_sgemm_kernel(const GemmProblem p) {
  __shared__ __align__(16) float a_shared[shared_tile_words(kAShared)];
  __shared__ __align__(16) float b_shared[shared_tile_words(kBShared)];
  for (OutputTile tile = OutputTile::first(); tile.batch < p.batch; tile.advance(p)) {
    auto a = a_loader<kATransposed, kAShared, kAccess>(p, tile);
    auto b = b_loader<kBTransposed, kAccess>(p, tile);
    float accumulators[kThreadTile][kThreadTile] = {};
    for (int64_t k0 = 0; k0 < p.k; k0 += kTileK) {
      const int k_extent = tile_extent(p.k, k0, kTileK);
      copy_k_tiles(a, b, k_extent, a_shared, b_shared);
      __syncthreads();
      multiply_tile<kAShared>(a_shared, b_shared, accumulators);
      __syncthreads();  // the next copy overwrites what this multiply reads
      a.next_k_tile();
      b.next_k_tile();
    }
    store_c_tile<kAccess == Access::vector>(p, tile, accumulators);
  }
}

template <Order kAShared, Access kAccess>
Status run_single_stage(const GemmProblem &problem, const RunArgs &args) {
  return launch_tile_kernel(problem, args.stream, [](auto a_transposed, auto b_transposed) {
    return single_stage_sgemm_kernel<kAShared, kAccess, decltype(a_transposed)::value, decltype(b_transposed)::value>;
  });
}

}  // namespace fastgemm::detail::tiled
