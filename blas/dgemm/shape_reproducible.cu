// SPDX-License-Identifier: Apache-2.0
// The FP64 product whose elements do not depend on the product's shape (FG_REPRODUCIBLE_SHAPE): every element of C
// is acc = 0, then for each group of four lines of k in order (the last padded with zeros) one FP64 tensor core
// step acc = a[4] . b[4] + acc (mma m8n8k4, the same instruction for every element wherever it lies in its tile),
// then C = alpha acc (+ beta C). cuBLAS picks its DGEMM kernel, and with it the order of the sums, by the shape, so
// that a row of C computed as part of a wider product could differ in its last bits from the same row computed
// alone; LAPACK's eigenvalue drivers compare exactly such results.
#include "blas/dgemm/shape_reproducible.hpp"

#include <cuda_runtime.h>

#include "core/launch.cuh"

namespace fastgemm::blas_dgemm {
namespace {

using detail::BasicGemmProblem;
using detail::Status;
using detail::StatusCode;

constexpr int kTileM = 64, kTileN = 64, kTileK = 16, kThreads = 128;
static_assert(kTileM == kTileN, "the tiles of op(A) and op(B) are staged alike");
// Each shared tile keeps the operand's order in memory, so that a warp's stores, like its fragment loads, meet no
// bank conflict (an 8-byte access is served 16 lanes at a time, each on its own pair of banks: 16 doubles apart in
// all). k-major tiles (lines of k, 64 rows or columns each): 64 elements and 4 more, so that a fragment load's four k
// lines start 4 doubles apart. Tiles of rows or columns (lines of 16 k): 16 elements and 4 more, likewise.
constexpr int kLine = kTileM + 4;
constexpr int kDepthLine = kTileK + 4;
constexpr int kSharedElements = kTileK * kLine > kTileM *kDepthLine ? kTileK *kLine : kTileM *kDepthLine;
// The shared index of (row or column `index`, k line `line`): along k (kKContiguous: [index][k], where k runs along
// memory: A not transposed, B transposed), else k-major ([k][index]).
template <bool kKContiguous>
__device__ __forceinline__ int shared_at(int index, int line) {
  return kKContiguous ? index * kDepthLine + line : line * kLine + index;
}
constexpr int kLoads = kTileM * kTileK / kThreads;  // elements of each operand a thread stages per k-tile

// Row-major op(A) (m x k) and op(B) (k x n) as the host engine gives them, and C (m x n).
struct Operands {
  const double *a, *b;
  double *c;
  int64_t m, n, k, lda, ldb, ldc;
  double alpha, beta;
};

// Where a thread's s-th element of a k-tile lies: its k line and its row (of op(A)) or column (of op(B)). Where k
// runs along memory (kKContiguous), 16 lanes read a row's k-tile; otherwise 64 lanes read a k line's rows or columns.
template <bool kKContiguous>
__device__ __forceinline__ void tile_position(int s, int *line, int *index) {
  const int t = threadIdx.x;
  *line = kKContiguous ? t % kTileK : t / kTileM + s * (kThreads / kTileM);
  *index = kKContiguous ? t / kTileK + s * (kThreads / kTileK) : t % kTileM;
}

// The k-tile at k0 of rows [first, first + 64) of op(A), or of columns of op(B), into registers, zeros outside
// `extent` (m or n) and k. Element (index i, k line l) is x[i ld + l] where k runs along memory (A not transposed,
// B transposed), else x[l ld + i].
template <bool kKContiguous>
__device__ __forceinline__ void load_tile(const double *x, int64_t ld, int64_t extent, int64_t k, int64_t first,
                                          int64_t k0, double (&values)[kLoads]) {
#pragma unroll
  for (int s = 0; s < kLoads; ++s) {
    int line, index;
    tile_position<kKContiguous>(s, &line, &index);
    const int64_t i = first + index, l = k0 + line;
    values[s] = i < extent && l < k ? (kKContiguous ? x[i * ld + l] : x[l * ld + i]) : 0.0;
  }
}

template <bool kKContiguous>
__device__ __forceinline__ void store_tile(double *shared, const double (&values)[kLoads]) {
#pragma unroll
  for (int s = 0; s < kLoads; ++s) {
    int line, index;
    tile_position<kKContiguous>(s, &line, &index);
    shared[shared_at<kKContiguous>(index, line)] = values[s];
  }
}

// acc (an 8 x 8 block of C, two elements a lane) := a (8 x 4) b (4 x 8) + acc.
__device__ __forceinline__ void mma_8x8x4(double (&acc)[2], double a, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
               : "+d"(acc[0]), "+d"(acc[1])
               : "d"(a), "d"(b));
#endif
}

// One block computes a 64 x 64 tile of C with four warps of 32 x 32 (4 x 4 blocks of 8 x 8 each). Rows of blocks
// start at blockIdx.y * 64 + row_base.
template <bool kTransposedA, bool kTransposedB>
__global__ void __launch_bounds__(kThreads) shape_reproducible_kernel(Operands p, int64_t row_base) {
  __shared__ double a_shared[kSharedElements];
  __shared__ double b_shared[kSharedElements];
  const int64_t row0 = row_base + static_cast<int64_t>(blockIdx.y) * kTileM;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTileN;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warp_row = (warp / 2) * 32, warp_col = (warp % 2) * 32;
  // Fragments (PTX's m8n8k4 .f64 layout): A's element (lane / 4, lane % 4), B's (lane % 4, lane / 4), C's
  // (lane / 4, 2 (lane % 4) + e).
  const int group = lane / 4, in_group = lane % 4;

  double acc[4][4][2];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j][0] = acc[i][j][1] = 0.0;

  double a_next[kLoads], b_next[kLoads];
  load_tile<!kTransposedA>(p.a, p.lda, p.m, p.k, row0, 0, a_next);
  load_tile<kTransposedB>(p.b, p.ldb, p.n, p.k, col0, 0, b_next);
  for (int64_t k0 = 0; k0 < p.k; k0 += kTileK) {
    store_tile<!kTransposedA>(a_shared, a_next);
    store_tile<kTransposedB>(b_shared, b_next);
    __syncthreads();
    if (k0 + kTileK < p.k) {  // the next k-tile's loads run under this one's products
      load_tile<!kTransposedA>(p.a, p.lda, p.m, p.k, row0, k0 + kTileK, a_next);
      load_tile<kTransposedB>(p.b, p.ldb, p.n, p.k, col0, k0 + kTileK, b_next);
    }
#pragma unroll
    for (int kk = 0; kk < kTileK; kk += 4) {
      double a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = a_shared[shared_at<!kTransposedA>(warp_row + i * 8 + group, kk + in_group)];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = b_shared[shared_at<kTransposedB>(warp_col + j * 8 + group, kk + in_group)];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) mma_8x8x4(acc[i][j], a[i], b[j]);
    }
    __syncthreads();
  }

  // C = alpha acc, or alpha acc + beta C, rounded in that order whatever the compiler would contract; beta == 0
  // never reads C.
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int64_t row = row0 + warp_row + i * 8 + group;
        const int64_t col = col0 + warp_col + j * 8 + 2 * in_group + e;
        if (row < p.m && col < p.n) {
          double *out = p.c + row * p.ldc + col;
          const double scaled = __dmul_rn(p.alpha, acc[i][j][e]);
          *out = p.beta == 0.0 ? scaled : __dadd_rn(scaled, __dmul_rn(p.beta, *out));
        }
      }
}

template <bool kTransposedA, bool kTransposedB>
Status launch_rows(const Operands &operands, cudaStream_t stream) {
  // gridDim.y is at most 65535: taller products go in bands of that many block rows.
  constexpr int64_t kBandBlocks = 65535;
  const int64_t block_cols = (operands.n + kTileN - 1) / kTileN;
  const int64_t block_rows = (operands.m + kTileM - 1) / kTileM;
  for (int64_t first = 0; first < block_rows; first += kBandBlocks) {
    const dim3 grid(static_cast<unsigned>(block_cols),
                    static_cast<unsigned>(block_rows - first < kBandBlocks ? block_rows - first : kBandBlocks));
    FG_RETURN_IF_ERROR(detail::launch(shape_reproducible_kernel<kTransposedA, kTransposedB>, grid, dim3(kThreads), 0,
                                      stream, operands, first * kTileM));
  }
  return Status::success();
}

}  // namespace

Status shape_reproducible_dgemm(const BasicGemmProblem<double> &p, cudaStream_t stream) {
  if (p.batch != 1 || p.live != nullptr)
    return Status::failure(StatusCode::internal_error, "the FP64 tiles multiply one product with its own scalars");
  if (p.m == 0 || p.n == 0) return Status::success();
  if ((p.n + kTileN - 1) / kTileN > 0x7fffffff)
    return Status::failure(StatusCode::invalid_value, "n is past the FP64 tiles' grid");
  const Operands operands{p.a.data, p.b.data, p.c, p.m, p.n, p.k, p.a.ld, p.b.ld, p.ldc, p.alpha, p.beta};
  if (p.a.transposed)
    return p.b.transposed ? launch_rows<true, true>(operands, stream) : launch_rows<true, false>(operands, stream);
  return p.b.transposed ? launch_rows<false, true>(operands, stream) : launch_rows<false, false>(operands, stream);
}

}  // namespace fastgemm::blas_dgemm
