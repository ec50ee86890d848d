// SPDX-License-Identifier: Apache-2.0
// FG_SGEMM_OZAKI_INT8's kernels over C's tiles: the certificate's plan of every element's need, the reconstruction
// of C from the INT32 products, and the elements computed in FP32 (those no moduli count certifies, and those NaN
// or Inf reach).
#include "sgemm/ozaki_int8/kernels.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/launch.cuh"
#include "cuda/async_copy.cuh"
#include "sgemm/ozaki_int8/choice.hpp"
#include "sgemm/ozaki_int8/kernel_common.cuh"
#include "sgemm/ozaki_int8/math.hpp"

namespace fastgemm::detail::ozaki {
namespace {

// Blocks of the plan's kernel a multiprocessor holds; each walks plan_chunk_rows rows (plan.hpp), kPlanColumns wide.
constexpr int kPlanBlocksPerSm = 4;
static_assert(kPlanColumns == kThreads, "a thread per column");

// The largest of the code bounds of a warp's lanes (math.hpp's CodeBounds; the fewest nonzeros and least root), in
// every lane.
__device__ CodeBounds warp_largest(CodeBounds bounds) {
  const auto largest = [](double value) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) value = fmax(value, __shfl_xor_sync(0xffffffffu, value, offset));
    return value;
  };
#pragma unroll
  for (int count = kMinModuli; count <= kMaxModuli; ++count) bounds.unit[count] = largest(bounds.unit[count]);
  bounds.norm1 = largest(bounds.norm1);
  bounds.norm2 = largest(bounds.norm2);
  bounds.power = largest(bounds.power);
  bounds.nonzeros = largest(bounds.nonzeros);
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    bounds.fewest_nonzeros = min(bounds.fewest_nonzeros, __shfl_xor_sync(0xffffffffu, bounds.fewest_nonzeros, offset));
    bounds.least_root = fminf(bounds.least_root, __shfl_xor_sync(0xffffffffu, bounds.least_root, offset));
  }
  return bounds;
}

// Rows whose codes' products a thread loads at once, before it works on them: loads in flight, not one at a time.
constexpr int kPlanLoads = 4;
// Groups of kPlanLoads rows whose codes' products are in flight at once, copied into shared memory (cp.async, no
// registers held for them): the group worked on and the kPlanStages - 1 after it.
constexpr int kPlanStages = 3;

// One thread per column of the tile, walking kChunkRows rows (plan_needs's choice): its column's facts are copied once
// into the thread's own registers and local memory (where a warp's reads of the same field are coalesced, not 32 lines
// of the facts' array apart), and the rows' facts, the same for the whole block, into shared memory first, all at once
// (read row by row from global memory, each row's load stalled the search); the codes' products are read kPlanLoads
// rows at a time, and they and the needs along rows, coalesced. Most elements take the shortcut (math.hpp's
// code_thresholds): from the largest bounds of the block's rows and its column's own, each thread has the least code
// product that certifies each count, whatever the row, and an element whose code product reaches the threshold of
// its neighbour's need takes the fewest count whose threshold it reaches. The others, and one row in kDescendRows
// (whose search descends to the element's fewest, so that the needs follow the operands), take element_need's.
// One row in 32 rather than 8: the plan 4096^3 0.114 -> 0.105 ms, 16384 x 16384 x 4096 1.55 -> 1.40 ms on the H200.
// The thresholds lie in shared memory, and a code product between the thresholds of the neighbour's need and of the
// count below it takes that need in two comparisons (the same needs as the comparison with every count's); the rows'
// codes, needs and C are reached by pointers stepped a row at a time: the plan 4096^3 0.109 -> 0.090 ms, 8192 x 8192
// x 1024 0.355 -> 0.300, 16384 x 16384 x 4096 1.39-1.44 -> 1.24 (H200, the same bits of C). A group of kPlanLoads
// rows that are finite, do not descend and whose code products all lie in the guess's window is answered at once
// (each needs the guess, one run of the histogram): 35% fewer instructions, the plan 4096^3 0.080 -> 0.066 ms, 8192 x
// 8192 x 1024 0.280 -> 0.231, 16384 x 16384 x 4096 1.10-1.18 -> 0.88-0.92 (H200, the same bits of C). The codes'
// products come through shared memory, kPlanStages groups in flight, the first issued before the chunk's facts: each
// thread had waited a whole load for every group, and the chunk's setup for the first; the plan 4096^3 0.066-0.068 ->
// 0.062 ms, 8192 x 8192 x 1024 0.231-0.233 -> 0.207-0.209, 16384 x 16384 x 4096 0.90-0.93 -> 0.80-0.84 (H200, the
// same bits of C).
constexpr int kDescendRows = 32;
static_assert(kDescendRows % kPlanLoads == 0, "a group's first row is the only one that may descend");
template <int kChunkRows>
__global__ void __launch_bounds__(kThreads, kPlanBlocksPerSm)
    plan_kernel(GemmProblem p, ProductTile tile, const int32_t *__restrict__ code_products,
                const LineFacts *__restrict__ a_facts, const LineFacts *__restrict__ b_facts,
                CertificateConstants certificate, uint8_t *__restrict__ needs, ScanSummary *summary) {
  // Counted per thread as runs of equal needs (neighbours mostly need the same count), each run added to the
  // block's histogram when it ends, and the block's to the summary.
  __shared__ unsigned int histogram[kNeedsFp32 + 1];
  __shared__ LineFacts row_facts[kChunkRows];
  __shared__ CodeBounds row_bounds;  // the largest of the chunk's rows'
  static_assert(kChunkRows % 32 == 0 && kChunkRows <= kThreads && kChunkRows % kPlanLoads == 0, "a warp per 32 rows");
  __shared__ CodeBounds warp_bounds[kChunkRows / 32];
  // Each thread's least code products per count (code_thresholds), from kMinModuli on, a column a thread: out of the
  // registers, which the searches need.
  __shared__ int32_t thresholds[kMaxModuli - kMinModuli + 1][kThreads];
  // Each thread's own column's codes' products, kPlanStages groups of rows by turns (only the thread reads its own).
  __shared__ int32_t staged[kPlanStages][kPlanLoads][kThreads];
  // The thresholds of count g and of the count below it (INT32_MAX for none): a code product from the first and below
  // the second reaches count g's threshold and no fewer count's.
  const auto window = [&](int g, int32_t *low, int32_t *high) {
    *low = thresholds[g - kMinModuli][threadIdx.x];
    *high = g > kMinModuli ? thresholds[g - 1 - kMinModuli][threadIdx.x] : INT32_MAX;
  };
  p = live_problem(p);
  const double alpha_abs = fabs(static_cast<double>(p.alpha));
  // Codes at half depth (math.hpp's half_code): each product counts twice (shifted left by code_shift), and a
  // product of 0 tells nothing. In shared memory, not held in a register through the searches.
  __shared__ int code_shift;
  int run_need = 0;
  unsigned int run_length = 0;
  if (threadIdx.x == 0) code_shift = tile.half_codes && codes_at_half_depth(summary->code_chunks) ? 1 : 0;
  for (int bin = threadIdx.x; bin <= kNeedsFp32; bin += blockDim.x) histogram[bin] = 0;
  __syncthreads();
  const int64_t column_blocks = divide_up(tile.cols, blockDim.x), row_chunks = divide_up(tile.rows, kChunkRows);
  int guess = 7;            // neighbours tend to need the same count: each search starts at the last one's need
  bool after_fp32 = false;  // the last element needed FP32: this one starts at the largest count
  for (int64_t block = blockIdx.x; block < tile.batches * column_blocks * row_chunks; block += gridDim.x) {
    const int64_t local_col = block % column_blocks * blockDim.x + threadIdx.x;
    const int64_t row_chunk = block / column_blocks % row_chunks, local_batch = block / column_blocks / row_chunks;
    const int64_t first_row = row_chunk * kChunkRows;
    const int chunk_rows = static_cast<int>(min(static_cast<int64_t>(kChunkRows), tile.rows - first_row));
    const int groups = (chunk_rows + kPlanLoads - 1) / kPlanLoads;
    // The chunk's first row of this column in the codes' products. Group g's copies (none past the chunk), committed
    // as one: the first kPlanStages - 1 groups are issued here, before the chunk's facts are copied and its
    // thresholds made, so that they arrive meanwhile.
    const int32_t *staged_codes =
        code_products + (local_batch * tile.padded_rows + first_row) * tile.padded_cols + local_col;
    int staged_rows = 0;  // the rows issued so far
    const auto stage = [&]() {
      if (staged_rows < chunk_rows) {
        int32_t *to = &staged[staged_rows / kPlanLoads % kPlanStages][0][threadIdx.x];
#pragma unroll
        for (int r = 0; r < kPlanLoads; ++r) {
          const bool inside = staged_rows + r < chunk_rows;
          copy_element(reinterpret_cast<float *>(to + r * kThreads),
                       reinterpret_cast<const float *>(inside ? staged_codes + r * tile.padded_cols : staged_codes),
                       inside ? 4 : 0);
        }
      }
      commit_copies();
      staged_rows += kPlanLoads;
      staged_codes += kPlanLoads * tile.padded_cols;
    };
    if (local_col < tile.cols)
      for (int g = 0; g < kPlanStages - 1; ++g) stage();
    bool rows_finite = false;  // no row of the chunk holds NaN or Inf
    {
      const auto *from = reinterpret_cast<const uint32_t *>(a_facts + (tile.first_batch + local_batch) * p.m +
                                                            tile.first_row + first_row);
      auto *to = reinterpret_cast<uint32_t *>(row_facts);
      // Every word a thread copies is loaded at once, before the barrier, then stored: not a load and its store at a
      // time, each store waiting on its load (a ninth of the kernel's stall samples). The plan 4096^3 0.085 -> 0.079
      // ms, 8192 x 8192 x 1024 0.295 -> 0.280, 16384 x 16384 x 4096 1.22-1.25 -> 1.14-1.17 (H200, the same bits).
      constexpr int kCopyWords = (kChunkRows * kFactWords + kThreads - 1) / kThreads;
      const int words = chunk_rows * kFactWords;
      uint32_t copied[kCopyWords];
#pragma unroll
      for (int j = 0; j < kCopyWords; ++j) {
        const int word = static_cast<int>(threadIdx.x) + j * kThreads;
        copied[j] = word < words ? __ldg(from + word) : 0u;
      }
      __syncthreads();  // the last chunk's searches are done with them
#pragma unroll
      for (int j = 0; j < kCopyWords; ++j) {
        const int word = static_cast<int>(threadIdx.x) + j * kThreads;
        if (word < words) to[word] = copied[j];
      }
      __syncthreads();
      // At half depth no row is faithful: only lines of zeros take the zero test (element_need's).
      if (code_shift != 0 && threadIdx.x < chunk_rows) row_facts[threadIdx.x].flags &= ~kLineFaithful;
      if (threadIdx.x < kChunkRows) {
        const CodeBounds largest =
            warp_largest(threadIdx.x < chunk_rows ? code_bounds(row_facts[threadIdx.x]) : CodeBounds{});
        if (threadIdx.x % 32 == 0) warp_bounds[threadIdx.x / 32] = largest;
      }
      rows_finite =
          __syncthreads_and(threadIdx.x >= chunk_rows || (row_facts[threadIdx.x].flags & kLineNonFinite) == 0) != 0;
      if (threadIdx.x == 0) {
        CodeBounds largest = warp_bounds[0];
        for (int w = 1; w < kChunkRows / 32; ++w) take_largest(largest, warp_bounds[w]);
        row_bounds = largest;
      }
      __syncthreads();
    }
    if (local_col >= tile.cols) continue;
    const int64_t batch = tile.first_batch + local_batch, col = tile.first_col + local_col;
    const LineFacts y = b_facts[batch * p.n + col];
    const bool y_finite = (y.flags & kLineNonFinite) == 0;
    {
      int32_t threshold[kMaxModuli + 1];
      code_thresholds(row_bounds, code_bounds(y), alpha_abs, certificate, threshold);
#pragma unroll
      for (int count = kMinModuli; count <= kMaxModuli; ++count)
        thresholds[count - kMinModuli][threadIdx.x] = threshold[count];
    }
    int32_t low = 0, high = 0;
    window(guess, &low, &high);
    // The chunk's first row of this column in the needs and C, each stepped a row at a time.
    uint8_t *needs_at = needs + (batch * p.m + tile.first_row + first_row) * p.n + col;
    const float *c_at = p.c + batch * p.stride_c + (tile.first_row + first_row) * p.ldc + col;
    const bool finite = y_finite && rows_finite;
    for (int g = 0, group = 0; g < groups; ++g, group += kPlanLoads) {
      stage();
      wait_copies<kPlanStages - 1>();  // group g's have arrived (zeros past the chunk)
      int32_t codes[kPlanLoads];
#pragma unroll
      for (int r = 0; r < kPlanLoads; ++r) codes[r] = staged[g % kPlanStages][r][threadIdx.x] << code_shift;
      // A whole group of finite rows, none descending, whose code products all lie in the guess's window: each needs
      // the guess (shortcut_need), which the loop below would find element by element, with the same runs.
      bool in_window = finite && group + kPlanLoads <= chunk_rows && group % kDescendRows != 0;
#pragma unroll
      for (int r = 0; r < kPlanLoads; ++r) in_window = in_window && codes[r] >= low && codes[r] < high;
      if (in_window) {
        if (run_need != guess) {
          if (run_length != 0) atomicAdd(&histogram[run_need], run_length);
          run_need = guess;
          run_length = 0;
        }
        run_length += kPlanLoads;
        after_fp32 = false;
#pragma unroll
        for (int r = 0; r < kPlanLoads; ++r, needs_at += p.n) *needs_at = static_cast<uint8_t>(guess);
        c_at += kPlanLoads * p.ldc;
        continue;
      }
#pragma unroll
      for (int r = 0; r < kPlanLoads; ++r, needs_at += p.n, c_at += p.ldc) {
        if (group + r >= chunk_rows) break;
        const LineFacts &x = row_facts[group + r];
        const int32_t code_product = codes[r];
        int need = 0;  // NaN or Inf reaches the element: fix_flagged's
        if (y_finite && (x.flags & kLineNonFinite) == 0) {
          // The fewest counts whose threshold it reaches, if any (math.hpp's shortcut_need).
          const int shortcut = shortcut_need(code_product, guess, low, high,
                                             [&](int count) { return thresholds[count - kMinModuli][threadIdx.x]; });
          const bool descend = (group + r) % kDescendRows == 0;
          if (!descend && shortcut <= guess) {
            need = shortcut;
          } else {
            const float c0 = p.beta != 0.0f ? *c_at : 0.0f;
            need = element_need(x, y, code_product, p.alpha, p.beta, c0, certificate, guess, descend, after_fp32);
          }
          after_fp32 = need == kNeedsFp32;
          if (need <= kMaxModuli && need != guess) {
            guess = need;
            window(guess, &low, &high);
          }
          if (need != run_need) {
            if (run_length != 0) atomicAdd(&histogram[run_need], run_length);
            run_need = need;
            run_length = 0;
          }
          ++run_length;
        }
        *needs_at = static_cast<uint8_t>(need);
      }
    }
  }
  if (run_length != 0) atomicAdd(&histogram[run_need], run_length);
  __syncthreads();
  for (int bin = threadIdx.x; bin <= kNeedsFp32; bin += blockDim.x)
    if (histogram[bin] != 0) atomicAdd(&summary->needs[bin], static_cast<unsigned long long>(histogram[bin]));
}

// Rows of the tile each block of the reconstruction walks, and its columns: 4 consecutive ones per thread, whose
// scale inverses it reads once for all its rows. 16 rather than 8 (the same bits; H200, beside 8 in one call, two
// rounds): the reconstruction at 4096^3 0.135-0.136 -> 0.131 ms, 8192 x 8192 x 1024 0.503 -> 0.491-0.492, 8192 x
// 8192 x 2048 0.520-0.523 -> 0.505-0.506; 32 left too few blocks at 2048 x 2048 x 4096 (0.036 -> 0.051 ms).
constexpr int kRebuildRows = 16;
constexpr int kRebuildCols = 4 * kThreads;

// An element whose need is above the count: certified from its rebuilt value (certified_by_value), or left to
// recompute_uncertified. Out of line: few elements take it.
__device__ __noinline__ bool certified_late(const LineFacts *x, const LineFacts *y, double value, bool all_zero,
                                            float alpha, float beta, float c0, int count,
                                            const CertificateConstants *certificate) {
  return certified_by_value(*x, *y, value, all_zero, alpha, beta, c0, count, *certificate);
}

// What the reconstruction reads for one row of a thread's 4 columns: the row's sums (or residues) for each modulus,
// INT32 each or packed one byte each (kBytes), their needs, C0 where beta reads it, and the row's scale inverse.
template <int kCount, bool kBytes>
struct RebuildRow {
  using Packed = typename std::conditional<kBytes, uint32_t, int4>::type;
  Packed words[kCount];
  uint32_t needs;  // column t's in byte t: a word held as loaded, not four bytes unpacked at the load
  float c0[4];
  double x_inverse;
};

// Sum (or residue) t of the 4 a word holds.
__device__ __forceinline__ int word_at(uint32_t packed, int t) {
  return static_cast<int>(static_cast<int8_t>(static_cast<uint8_t>(packed >> (8 * t))));
}

__device__ __forceinline__ int word_at(const int4 &words, int t) {
  return t == 0 ? words.x : t == 1 ? words.y : t == 2 ? words.z : words.w;
}

// C's elements of a tile from the products over kCount moduli. Elements are written only where certified: a need of
// at most kCount, or certified from the value; the others keep C0 for recompute_uncertified (overflows are counted in
// the summary for it), and a need of 0 (NaN or Inf reaches the element) is fix_flagged's. With residues in bytes, each
// thread loads its next row before it works on the one loaded: two rows' loads in flight, not one row's at a time.
// Two blocks a multiprocessor at every count (128 registers). The rows' facts, products, needs and C are reached by
// pointers stepped a row at a time, not by 64-bit products of each row's place: the reconstruction 4096^3 0.124 ->
// 0.118 ms, 8192 x 8192 x 1024 0.470 -> 0.440, 8192 x 8192 x 2048 0.501-0.505 -> 0.468-0.474 (H200, the same bits
// of C); the INT32 sums' spills at 9 to 13 moduli 12-44 -> 4 bytes. The next row's needs are held as the word loaded:
// as a uchar4 they were unpacked into four registers at once, and each thread waited there on the load it had just
// issued (a third of the kernel's stall samples at 4096^3): 4096^3 0.116 -> 0.089 ms, 8192 x 8192 x 1024 0.441 ->
// 0.330, 16384 x 16384 x 4096 1.86-1.95 -> 1.48-1.54 (H200, the same bits of C).
// C's element from its rebuilt value V: alpha V + beta C0 in double, rounded to float once; *overflowed where the
// rounding, not the value, is infinite (the bound does not hold past FLT_MAX: FP32 decides).
__device__ __forceinline__ float rebuilt_element(double value, float alpha, float beta, float c0, bool *overflowed) {
  double result = static_cast<double>(alpha) * value;
  if (beta != 0.0f) result = fma(static_cast<double>(beta), static_cast<double>(c0), result);
  const float rounded = static_cast<float>(result);
  *overflowed = isinf(rounded) && !isinf(result);
  return rounded;
}

template <int kCount, bool kBytes>
__global__ void __launch_bounds__(kThreads, 2)
    reconstruct_kernel(GemmProblem p, ProductTile tile, const int32_t *products, const LineFacts *a_facts,
                       const LineFacts *b_facts, CrtConstants constants, CertificateConstants certificate,
                       uint8_t *needs, ScanSummary *summary) {
  using Row = RebuildRow<kCount, kBytes>;
  using Word = typename std::conditional<kBytes, int8_t, int32_t>::type;
  p = live_problem(p);
  // In elements of the products (INT32 sums, or bytes).
  const int64_t pitch = kBytes ? tile.residue_pitch : tile.padded_cols, modulus_stride = tile.padded_rows * pitch;
  const int64_t col_blocks = divide_up(tile.cols, kRebuildCols), row_blocks = divide_up(tile.rows, kRebuildRows);
  const bool vector_c = p.ldc % 4 == 0 && reinterpret_cast<uintptr_t>(p.c) % 16 == 0 && p.stride_c % 4 == 0;
  for (int64_t block = blockIdx.x; block < tile.batches * row_blocks * col_blocks; block += gridDim.x) {
    const int64_t local_col = block % col_blocks * kRebuildCols + 4 * threadIdx.x;
    const int64_t row_block = block / col_blocks % row_blocks, local_batch = block / col_blocks / row_blocks;
    if (local_col >= tile.cols) continue;
    const int width = tile.cols - local_col < 4 ? static_cast<int>(tile.cols - local_col) : 4;
    const int64_t batch = tile.first_batch + local_batch, col = tile.first_col + local_col;
    const LineFacts *y = b_facts + batch * p.n + col;
    double y_inverse[4];
#pragma unroll
    for (int t = 0; t < 4; ++t) y_inverse[t] = t < width ? y[t].inverse_scale[kCount] : 0.0;
    // needs and C along the row, 4 at a time where they are aligned so.
    const bool vector_needs = width == 4 && p.n % 4 == 0 && col % 4 == 0;
    const bool vector_row = vector_needs && vector_c;
    const int64_t first_local_row = row_block * kRebuildRows;
    const int rows = static_cast<int>(min(static_cast<int64_t>(kRebuildRows), tile.rows - first_local_row));
    // The block's first row in the facts, the products, the needs and C, each stepped a row at a time.
    const int64_t first_row = tile.first_row + first_local_row;
    const LineFacts *x_row = a_facts + batch * p.m + first_row;
    const Word *in_row = reinterpret_cast<const Word *>(products) + local_batch * kCount * modulus_stride +
                         first_local_row * pitch + local_col;
    uint8_t *needs_row = needs + (batch * p.m + first_row) * p.n + col;
    float *c_row = p.c + batch * p.stride_c + first_row * p.ldc + col;
    // Loads row `ahead` (0 or 1) below the row worked on.
    const auto load = [&](int ahead, Row &row) {
      // A row holding NaN or Inf has needs of 0 (fix_flagged's): no test of its flags here, which would hold back
      // the row's loads until the flags arrive.
      row.x_inverse = x_row[ahead].inverse_scale[kCount];
      const Word *in = in_row + ahead * pitch;
#pragma unroll
      for (int l = 0; l < kCount; ++l)
        row.words[l] = __ldg(reinterpret_cast<const typename Row::Packed *>(in + l * modulus_stride));
      const uint8_t *need = needs_row + ahead * p.n;
      if (vector_needs) {
        row.needs = *reinterpret_cast<const uint32_t *>(need);
      } else {
        row.needs = need[0];
        for (int t = 1; t < width; ++t) row.needs |= static_cast<uint32_t>(need[t]) << (8 * t);
      }
#pragma unroll
      for (int t = 0; t < 4; ++t) row.c0[t] = 0.0f;
      if (p.beta != 0.0f) {
        const float *c = c_row + ahead * p.ldc;
        if (vector_row) {
          const float4 v = *reinterpret_cast<const float4 *>(c);
          row.c0[0] = v.x, row.c0[1] = v.y, row.c0[2] = v.z, row.c0[3] = v.w;
        } else {
#pragma unroll
          for (int t = 0; t < 4; ++t) row.c0[t] = t < width ? c[t] : 0.0f;
        }
      }
    };
    // INT32 sums (shallow products) are read a row at a time: two rows of them would hold too many registers.
    Row current, next;
    if (kBytes) load(0, next);
    for (int r = 0; r < rows; ++r, ++x_row, in_row += pitch, needs_row += p.n, c_row += p.ldc) {
      if (kBytes) {
        current = next;
        if (r + 1 < rows) load(1, next);
      } else {
        load(0, current);
      }
      const LineFacts *x = x_row;
      int need[4];
#pragma unroll
      for (int t = 0; t < 4; ++t) need[t] = static_cast<int>(current.needs >> (8 * t) & 0xffu);
      float *c = c_row;
      // INT32 sums reduced by add; the own product's bytes are already reduced as add reduces (wgmma_products.hpp),
      // and converted biased (math.hpp).
      CrtSums sums[4];
#pragma unroll
      for (int l = 0; l < kCount; ++l) {
        if constexpr (kBytes) {
          const uint32_t biased = biased_bytes(current.words[l]);
#pragma unroll
          for (int t = 0; t < 4; ++t) sums[t].add_reduced(biased_byte_double(biased, t), constants, l);
        } else {
#pragma unroll
          for (int t = 0; t < 4; ++t) sums[t].add(exact_double(word_at(current.words[l], t)), constants, l);
        }
      }
      // A row of four elements within the tile that each need at most kCount (most rows): rebuilt and stored without
      // a test of each element, unless one of them overflows (then the loop below takes the row again). 4096^3 0.096-
      // 0.102 -> 0.078 ms, 8192 x 8192 x 1024 0.347-0.349 -> 0.288-0.301, 16384 x 16384 x 4096 1.52-1.64 -> 1.26-1.33
      // (H200, the same bits of C).
      bool plain = width == 4;
#pragma unroll
      for (int t = 0; t < 4; ++t) plain = plain && need[t] >= 1 && need[t] <= kCount;
      if (plain) {
        float rounded[4];
        bool overflow = false;
#pragma unroll
        for (int t = 0; t < 4; ++t) {
          bool overflowed = false;
          rounded[t] = rebuilt_element(sums[t].value(constants) * current.x_inverse * y_inverse[t], p.alpha, p.beta,
                                       current.c0[t], &overflowed);
          overflow = overflow || overflowed;
        }
        if (!overflow) {
          if (vector_row) {
            *reinterpret_cast<float4 *>(c) = make_float4(rounded[0], rounded[1], rounded[2], rounded[3]);
          } else {
#pragma unroll
            for (int t = 0; t < 4; ++t) c[t] = rounded[t];
          }
          continue;
        }
      }
      float out[4];
      bool written[4];
#pragma unroll
      for (int t = 0; t < 4; ++t) {
        written[t] = false;
        out[t] = 0.0f;
        if (t >= width || need[t] == 0) continue;  // past the tile, or NaN or Inf in the column
        // Exact where the scales are powers of two.
        const double value = sums[t].value(constants) * current.x_inverse * y_inverse[t];
        if (need[t] > kCount) {
          bool all_zero = sums[t].all_zero;  // add's; the bytes' are tested here, where few elements come
          if constexpr (kBytes) {
#pragma unroll
            for (int l = 0; l < kCount; ++l) all_zero = all_zero && word_at(current.words[l], t) == 0;
          }
          if (!certified_late(x, y + t, value, all_zero, p.alpha, p.beta, current.c0[t], kCount, &certificate))
            continue;  // recompute_uncertified's
          needs_row[t] = static_cast<uint8_t>(kMinModuli);
        }
        bool overflowed = false;
        const float rounded = rebuilt_element(value, p.alpha, p.beta, current.c0[t], &overflowed);
        if (overflowed) {
          needs_row[t] = static_cast<uint8_t>(kNeedsFp32);
          atomicAdd(&summary->overflowed, 1ull);
          continue;
        }
        out[t] = rounded;
        written[t] = true;
      }
      if (vector_row && written[0] && written[1] && written[2] && written[3]) {
        *reinterpret_cast<float4 *>(c) = make_float4(out[0], out[1], out[2], out[3]);
      } else {
#pragma unroll
        for (int t = 0; t < 4; ++t)
          if (written[t]) c[t] = out[t];
      }
    }
  }
}

using ReconstructKernel = void (*)(GemmProblem, ProductTile, const int32_t *, const LineFacts *, const LineFacts *,
                                   CrtConstants, CertificateConstants, uint8_t *, ScanSummary *);

// reconstruct_kernel for a moduli count known only at run time.
template <bool kBytes, int... kOffsets>
ReconstructKernel reconstruct_kernel_for(int count, std::integer_sequence<int, kOffsets...>) {
  constexpr ReconstructKernel kernels[] = {reconstruct_kernel<kMinModuli + kOffsets, kBytes>...};
  return kernels[count - kMinModuli];
}

// Where the terms of element (row, col) of product `batch` lie: row of op(A) at x, column of op(B) at y, term l at
// x + l x_step and y + l y_step.
struct ElementTerms {
  const float *x, *y;
  int64_t x_step, y_step;
};
__device__ __forceinline__ ElementTerms element_terms(const GemmProblem &p, int64_t batch, int64_t row, int64_t col) {
  return ElementTerms{p.a.data + batch * p.a.stride + (p.a.transposed ? row : row * p.a.ld),
                      p.b.data + batch * p.b.stride + (p.b.transposed ? col * p.b.ld : col),
                      p.a.transposed ? p.a.ld : 1, p.b.transposed ? 1 : p.b.ld};
}

// C's element from the sum of its terms, as FP32 arithmetic gives it: alpha sum, then beta C0 added with one FMA.
__device__ __forceinline__ void store_fp32_sum(const GemmProblem &p, int64_t batch, int64_t row, int64_t col,
                                               float sum) {
  float *out = p.c + batch * p.stride_c + row * p.ldc + col;
  *out = p.beta == 0.0f ? p.alpha * sum : fmaf(p.beta, *out, p.alpha * sum);
}

// Element (row, col) of op(A) op(B) of product `batch` as FP32 arithmetic gives it (a sum in k order with FMA),
// then alpha and beta. The loads of kAhead terms are issued before their FMAs: the sum's order is kept, and the
// thread waits on memory once per kAhead terms, not once per term.
__device__ void store_fp32_element(const GemmProblem &p, int64_t batch, int64_t row, int64_t col) {
  constexpr int kAhead = 16;
  const ElementTerms terms = element_terms(p, batch, row, col);
  const float *x = terms.x, *y = terms.y;
  const int64_t x_step = terms.x_step, y_step = terms.y_step;
  float sum = 0.0f;
  int64_t l = 0;
  for (; l + kAhead <= p.k; l += kAhead) {
    float xs[kAhead], ys[kAhead];
#pragma unroll
    for (int t = 0; t < kAhead; ++t) {
      xs[t] = __ldg(x + (l + t) * x_step);
      ys[t] = __ldg(y + (l + t) * y_step);
    }
#pragma unroll
    for (int t = 0; t < kAhead; ++t) sum = fmaf(xs[t], ys[t], sum);
  }
  for (; l < p.k; ++l) sum = fmaf(__ldg(x + l * x_step), __ldg(y + l * y_step), sum);
  store_fp32_sum(p, batch, row, col, sum);
}

// Terms of an element that store_fp32_element_by_warp loads at once: 8 of its row and 8 of its column a lane (the
// kernels keep 4 blocks a multiprocessor, kRecomputeBlocksPerSm, so that blocks with nothing to do pass quickly).
constexpr int kWarpTerms = 256;
constexpr int kRecomputeBlocksPerSm = 4;

// The same element, the same bits, by a warp: its lanes load kWarpTerms terms of the row and the column at a time,
// all in flight (a lane alone, 16 loads in flight, waited on memory 256 times at k = 4096: 0.96 ms for the 9 elements
// of a 4096^3 call), into `terms` (kWarpTerms, the warp's own shared memory), and lane 0 sums them in k order, while
// the next terms' loads are in flight.
__device__ void store_fp32_element_by_warp(const GemmProblem &p, int64_t batch, int64_t row, int64_t col,
                                           float2 *terms) {
  constexpr int kPerLane = kWarpTerms / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const ElementTerms at = element_terms(p, batch, row, col);
  float2 loaded[kPerLane];
  const auto load = [&](int64_t first) {
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      const int64_t l = first + j * 32 + lane;
      loaded[j] =
          l < p.k ? make_float2(__ldg(at.x + l * at.x_step), __ldg(at.y + l * at.y_step)) : make_float2(0.0f, 0.0f);
    }
  };
  float sum = 0.0f;
  load(0);
  for (int64_t first = 0; first < p.k; first += kWarpTerms) {
    __syncwarp();  // lane 0 is done with the terms before
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) terms[j * 32 + lane] = loaded[j];
    __syncwarp();
    if (first + kWarpTerms < p.k) load(first + kWarpTerms);
    if (lane == 0) {
      const int count = static_cast<int>(p.k - first < kWarpTerms ? p.k - first : kWarpTerms);
#pragma unroll 8
      for (int t = 0; t < count; ++t) sum = fmaf(terms[t].x, terms[t].y, sum);
    }
  }
  if (lane == 0) store_fp32_sum(p, batch, row, col, sum);
}

// Tiles of C in which recompute_kernel lists the elements to recompute, and its grid: a prime number of blocks, so
// that the tiles of one column of tiles (elements that need it come in whole rows and columns of wide range) fall to
// as many blocks as there are such tiles, whatever C's width; about as many as an H100 or H200 holds at once (132 x
// kRecomputeBlocksPerSm), so that a call with nothing to recompute, most calls, passes them in one wave, not four
// (2039 blocks: the kernel 4-6 us of a call with nothing to do).
constexpr int kRecomputeRows = 32, kRecomputeCols = 128;
constexpr int64_t kRecomputeBlocks = 523;

// The elements whose need is above `count` after the reconstruction: at most those the plan counted above it and
// those the reconstruction found to overflow. Where there are none, which is most calls, every block returns at
// once. Otherwise each block (`block` of `blocks`, kThreads threads) lists those of a tile of C in shared memory, then
// computes them a warp each.
__device__ void recompute_tiles(GemmProblem p, const uint8_t *needs, int count, const ScanSummary *summary,
                                int64_t block, int64_t blocks) {
  unsigned long long pending = summary->overflowed;
  for (int bin = count + 1; bin <= kNeedsFp32; ++bin) pending += summary->needs[bin];
  if (pending == 0) return;
  p = live_problem(p);
  __shared__ uint16_t listed[kRecomputeRows * kRecomputeCols];
  __shared__ int listed_count;
  __shared__ float2 terms[kThreads / 32][kWarpTerms];
  const int64_t tile_cols = (p.n + kRecomputeCols - 1) / kRecomputeCols;
  const int64_t tile_rows = (p.m + kRecomputeRows - 1) / kRecomputeRows;
  for (int64_t tile = block; tile < p.batch * tile_rows * tile_cols; tile += blocks) {
    const int64_t first_col = tile % tile_cols * kRecomputeCols;
    const int64_t first_row = tile / tile_cols % tile_rows * kRecomputeRows, batch = tile / tile_cols / tile_rows;
    if (threadIdx.x == 0) listed_count = 0;
    __syncthreads();
    for (int e = threadIdx.x; e < kRecomputeRows * kRecomputeCols; e += blockDim.x) {
      const int64_t row = first_row + e / kRecomputeCols, col = first_col + e % kRecomputeCols;
      if (row < p.m && col < p.n && needs[(batch * p.m + row) * p.n + col] > count)
        listed[atomicAdd(&listed_count, 1)] = static_cast<uint16_t>(e);
    }
    __syncthreads();
    const int warp = static_cast<int>(threadIdx.x / 32), warps = static_cast<int>(blockDim.x / 32);
    for (int i = warp; i < listed_count; i += warps)  // a warp an element
      store_fp32_element_by_warp(p, batch, first_row + listed[i] / kRecomputeCols,
                                 first_col + listed[i] % kRecomputeCols, terms[warp]);
    __syncthreads();
  }
}

__global__ void __launch_bounds__(kThreads, kRecomputeBlocksPerSm)
    recompute_kernel(GemmProblem p, const uint8_t *needs, int count, const ScanSummary *summary) {
  recompute_tiles(p, needs, count, summary, blockIdx.x, gridDim.x);
}

// Where the fix-ups' blocks are: `across` blocks along each line (of `across_count`), `down` blocks down the list of
// lines (of `down_count`).
struct FixBlock {
  int64_t across = 0, across_count = 1, down = 0, down_count = 1;
};

// Every element of each of the `count` flagged rows: the block's share of the list, its threads the columns.
__device__ void fix_rows(GemmProblem p, const int64_t *flagged, int64_t count, FixBlock at) {
  p = live_problem(p);
  for (int64_t entry = at.down; entry < count; entry += at.down_count) {
    const int64_t batch = flagged[entry] / p.m, row = flagged[entry] % p.m;
    for (int64_t col = at.across * blockDim.x + threadIdx.x; col < p.n; col += at.across_count * blockDim.x)
      store_fp32_element(p, batch, row, col);
  }
}

// Every element of each of the `count` flagged columns whose row is not flagged (those fix_rows writes).
__device__ void fix_columns(GemmProblem p, const int64_t *flagged, int64_t count, const LineFacts *a_facts,
                            FixBlock at) {
  p = live_problem(p);
  for (int64_t entry = at.down; entry < count; entry += at.down_count) {
    const int64_t batch = flagged[entry] / p.n, col = flagged[entry] % p.n;
    for (int64_t row = at.across * blockDim.x + threadIdx.x; row < p.m; row += at.across_count * blockDim.x)
      if ((a_facts[batch * p.m + row].flags & kLineNonFinite) == 0) store_fp32_element(p, batch, row, col);
  }
}

__device__ FixBlock fix_block_of_grid() { return FixBlock{blockIdx.x, gridDim.x, blockIdx.y, gridDim.y}; }

// blockIdx.y picks the row from the list, threads the columns.
__global__ void fix_rows_kernel(GemmProblem p, const int64_t *flagged, int64_t count) {
  fix_rows(p, flagged, count, fix_block_of_grid());
}

__global__ void fix_columns_kernel(GemmProblem p, const int64_t *flagged, int64_t count, const LineFacts *a_facts) {
  fix_columns(p, flagged, count, a_facts, fix_block_of_grid());
}

// A captured call's last kernel: recompute_kernel's blocks, then fix_rows_kernel's, then fix_columns_kernel's, the
// lists' lengths read from the scan's summary. Their elements are disjoint (a need above the count; a flagged row;
// a flagged column's other rows), so one launch runs them side by side: most replays find nothing to do, and one
// launch of blocks that return at once costs less than three.
struct FinishBlocks {
  int64_t recompute = 0, rows_across = 0, columns_across = 0, lines = 0;
};
__global__ void __launch_bounds__(kThreads, kRecomputeBlocksPerSm)
    recompute_and_fix_kernel(GemmProblem p, const uint8_t *needs, int count, const ScanSummary *summary,
                             const int64_t *a_flagged, const int64_t *b_flagged, const LineFacts *a_facts,
                             FinishBlocks blocks) {
  int64_t block = blockIdx.x;
  if (block < blocks.recompute) {
    recompute_tiles(p, needs, count, summary, block, blocks.recompute);
    return;
  }
  block -= blocks.recompute;
  if (block < blocks.rows_across * blocks.lines) {
    const FixBlock at{block % blocks.rows_across, blocks.rows_across, block / blocks.rows_across, blocks.lines};
    fix_rows(p, a_flagged, static_cast<int64_t>(summary->flagged_lines[0]), at);
    return;
  }
  block -= blocks.rows_across * blocks.lines;
  const FixBlock at{block % blocks.columns_across, blocks.columns_across, block / blocks.columns_across, blocks.lines};
  fix_columns(p, b_flagged, static_cast<int64_t>(summary->flagged_lines[1]), a_facts, at);
}

// One thread: FP32 throughout (branch 0) where NaN or Inf reach too many elements or the certificate asks for more
// than pays, otherwise the branch of the chosen moduli count, N - kMinModuli + 1.
__global__ void decide_kernel(const ScanSummary *summary, int64_t m, int64_t n, int64_t k, int64_t batch, bool reads_c,
                              cudaGraphConditionalHandle handle, DeviceChoice *choice) {
  const ScanSummary found = *summary;
  unsigned int branch = 0;
  DeviceChoice chosen;
  if (!too_many_flagged(static_cast<double>(found.flagged_lines[0]), static_cast<double>(found.flagged_lines[1]), m, n,
                        k, batch)) {
    const ModuliChoice moduli = choose_moduli(found.needs, m, n, k, batch, reads_c);
    if (!moduli.declined) {
      branch = static_cast<unsigned int>(moduli.count - kMinModuli + 1);
      chosen.moduli = moduli.count;
      chosen.fp32_elements = moduli.fp32_elements;
    }
  }
  cudaGraphSetConditional(handle, branch);
  if (choice != nullptr) *choice = chosen;
}

}  // namespace

Status decide(const ScanSummary *summary, int64_t m, int64_t n, int64_t k, int64_t batch, bool reads_c,
              cudaGraphConditionalHandle handle, DeviceChoice *choice, cudaStream_t stream) {
  return launch(decide_kernel, dim3(1), dim3(1), 0, stream, summary, m, n, k, batch, reads_c, handle, choice);
}

Status plan_needs(const GemmProblem &p, const ProductTile &tile, const int32_t *code_products, const LineFacts *a_facts,
                  const LineFacts *b_facts, const CertificateConstants &certificate, uint8_t *needs,
                  ScanSummary *summary, int processors, cudaStream_t stream) {
  const int height = plan_chunk_rows(tile.rows, tile.cols, tile.batches, processors);
  const int64_t blocks = tile.batches * divide_up(tile.cols, kThreads) * divide_up(tile.rows, height);
  static_assert(kPlanMostRows == 128 && kPlanFewestRows == 32, "the kernels instantiated below");
  const auto kernel = height == 128 ? plan_kernel<128> : height == 64 ? plan_kernel<64> : plan_kernel<32>;
  return launch(kernel, dim3(capped_grid(blocks, kMaxBlocks)), dim3(kThreads), 0, stream, p, tile, code_products,
                a_facts, b_facts, certificate, needs, summary);
}

Status reconstruct(const GemmProblem &p, const ProductTile &tile, const int32_t *products, const LineFacts *a_facts,
                   const LineFacts *b_facts, const CrtConstants &constants, const CertificateConstants &certificate,
                   uint8_t *needs, ScanSummary *summary, cudaStream_t stream) {
  if (constants.count < kMinModuli || constants.count > kMaxModuli)
    return Status::failure(StatusCode::internal_error, "no reconstruction for this moduli count");
  using Counts = std::make_integer_sequence<int, kMaxModuli - kMinModuli + 1>;
  const ReconstructKernel kernel = tile.residue_pitch != 0 ? reconstruct_kernel_for<true>(constants.count, Counts{})
                                                           : reconstruct_kernel_for<false>(constants.count, Counts{});
  const int64_t blocks = tile.batches * divide_up(tile.rows, kRebuildRows) * divide_up(tile.cols, kRebuildCols);
  return launch(kernel, dim3(capped_grid(blocks, kMaxBlocks)), dim3(kThreads), 0, stream, p, tile, products, a_facts,
                b_facts, constants, certificate, needs, summary);
}

Status recompute_uncertified(const GemmProblem &p, const uint8_t *needs, int count, const ScanSummary *summary,
                             cudaStream_t stream) {
  const int64_t tiles = p.batch * divide_up(p.m, kRecomputeRows) * divide_up(p.n, kRecomputeCols);
  return launch(recompute_kernel, dim3(capped_grid(tiles, kRecomputeBlocks)), dim3(kThreads), 0, stream, p, needs,
                count, summary);
}

Status fix_flagged(const GemmProblem &p, const int64_t *a_flagged, int64_t a_count, const int64_t *b_flagged,
                   int64_t b_count, const LineFacts *a_facts, cudaStream_t stream) {
  if (a_count > 0)
    FG_RETURN_IF_ERROR(launch(fix_rows_kernel, dim3(capped_grid(divide_up(p.n, kThreads), 1024), capped_grid(a_count)),
                              dim3(kThreads), 0, stream, p, a_flagged, a_count));
  if (b_count > 0)
    FG_RETURN_IF_ERROR(launch(fix_columns_kernel,
                              dim3(capped_grid(divide_up(p.m, kThreads), 1024), capped_grid(b_count)), dim3(kThreads),
                              0, stream, p, b_flagged, b_count, a_facts));
  return Status::success();
}

Status recompute_and_fix_counted(const GemmProblem &p, const uint8_t *needs, int count, const ScanSummary *summary,
                                 const int64_t *a_flagged, const int64_t *b_flagged, const LineFacts *a_facts,
                                 cudaStream_t stream) {
  // For the fix-ups, a few blocks a side, each taking every kLinesAtOnce-th line of the list: most replays find none.
  constexpr int64_t kLinesAtOnce = 16;
  FinishBlocks blocks;
  blocks.recompute =
      capped_grid(p.batch * divide_up(p.m, kRecomputeRows) * divide_up(p.n, kRecomputeCols), kRecomputeBlocks);
  blocks.rows_across = capped_grid(divide_up(p.n, kThreads), 1024);
  blocks.columns_across = capped_grid(divide_up(p.m, kThreads), 1024);
  blocks.lines = kLinesAtOnce;
  const int64_t total = blocks.recompute + (blocks.rows_across + blocks.columns_across) * blocks.lines;
  return launch(recompute_and_fix_kernel, dim3(static_cast<unsigned int>(total)), dim3(kThreads), 0, stream, p, needs,
                count, summary, a_flagged, b_flagged, a_facts, blocks);
}

}  // namespace fastgemm::detail::ozaki
