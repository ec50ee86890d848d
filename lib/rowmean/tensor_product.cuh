// SPDX-License-Identifier: Apache-2.0
// The L x L product over the means on FP64 tensor cores, shared by the fused and staged algorithms.
//
// One warp computes a 16 x (8 * kGroups) tile of output: 16 matrix rows against 8 * kGroups mean vectors, summed over
// a range of j. The products of f32 values are exact in double and the sums are double, so the product adds no error
// beyond double rounding for either type.
//
// The sum over j may run in any order as long as both operands use the same one, and the fragments are laid out to
// exploit that: in every chunk of 16 columns, lane (g, t) = (lane / 4, lane % 4) owns columns j0 + 4t .. j0 + 4t + 3
// of matrix rows g and g + 8 and of mean vector g of each group of 8. Each lane therefore loads four consecutive
// elements per row (one 16-byte load for f32, two for f64) and needs no shared-memory staging: a warp load covers 8
// rows x 64 contiguous bytes. The mma's reduction index (t, q) stands for column j0 + 4t + 2h + q in the h-th of the
// chunk's two m16n8k8 steps.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "cuda/cache_hints.cuh"
#include "cuda/mma.cuh"

namespace fastgemm::detail {

template <typename T>
struct Quad {
  T v[4];
};

// row[j .. j+3] as stored; elements at or past `end` read as zero and are not touched. Columns are ints: L * L
// elements fit in memory, so L < 2^31.
template <typename T>
__device__ __forceinline__ Quad<T> load_quad(const T *row, int j, int end, bool vector_ok) {
  Quad<T> quad;
  const int remaining = end - j;
  if (vector_ok && remaining >= 4) {
    if constexpr (sizeof(T) == 4) {
      const float4 v = __ldg(reinterpret_cast<const float4 *>(row + j));
      quad = {{v.x, v.y, v.z, v.w}};
    } else {
      const double2 low = __ldg(reinterpret_cast<const double2 *>(row + j));
      const double2 high = __ldg(reinterpret_cast<const double2 *>(row + j + 2));
      quad = {{low.x, low.y, high.x, high.y}};
    }
  } else {
    const int valid = remaining < 0 ? 0 : (remaining < 4 ? remaining : 4);
#pragma unroll
    for (int s = 0; s < 4; ++s) quad.v[s] = s < valid ? __ldg(row + j + s) : T(0);
  }
  return quad;
}

// Four consecutive elements of a 16-byte aligned row in shared memory.
template <typename T>
__device__ __forceinline__ Quad<T> load_shared_quad(const T *p) {
  if constexpr (sizeof(T) == 4) {
    const float4 v = *reinterpret_cast<const float4 *>(p);
    return {{v.x, v.y, v.z, v.w}};
  } else {
    const double2 low = *reinterpret_cast<const double2 *>(p);
    const double2 high = *reinterpret_cast<const double2 *>(p + 2);
    return {{low.x, low.y, high.x, high.y}};
  }
}

// The matrix operand: L x L, row-major. vector_ok: 16-byte loads apply (aligned base, rows of whole 16-byte units).
template <typename T>
struct MatrixOperand {
  const T *data;
  int64_t L;
  bool vector_ok;
};

// The means operand: row r (one mean vector) at data + r * ld. In shared memory the rows are 16-byte aligned, at
// least round_up(L, 16) long with zeros past L, and every row of the tile may be read. In global memory reads are
// guarded: rows at or past `rows` and columns at or past the j range read as zero, and vector_ok says whether 16-byte
// loads apply.
template <typename MeanT>
struct MeansOperand {
  const MeanT *data;
  int64_t ld;
  int64_t rows;
  bool vector_ok;
};

// f32 means can reach the tensor cores without the conversion unit: x * 2^-896, exactly, for every finite x (zero and
// subnormals included), is the double whose bits are x's sign, then x's 8-bit exponent field as the low bits of the
// double's 11-bit one, then x's 23 mantissa bits. Two integer operations and a shift instead of an F2F.F64.F32, which
// runs at a sixteenth of the FMA rate and would otherwise be issued once per mean per 16 matrix rows. Products of
// these with exact doubles stay exact (a subnormal product below 2^-1022 loses bits worth less than 2^-178 once scaled
// back, far under any f32 result's rounding); the caller scales the sums back by kMeansScale. Exponent field 255
// (infinity, NaN) does not map: callers take this path only for means known to be finite.
inline constexpr double kMeansScale = 0x1p896;

__device__ __forceinline__ double scaled_double(float x) {
  const unsigned bits = __float_as_uint(x);
  const unsigned high = static_cast<unsigned>(static_cast<int>(bits) >> 3) & 0x8fffffffu;
  return __hiloint2double(static_cast<int>(high), static_cast<int>(bits << 29));
}

// acc[group] += matrix rows [i0, i0 + 16) times mean vectors [8 * group, 8 * group + 8), over columns
// [j_begin, j_end), for groups below active_groups (a value the whole warp shares). j_begin is a multiple of 16 when
// the means are in shared memory, of 4 otherwise. The matrix is the operand that streams: a ring of kDepth chunks of it
// is loaded ahead of the chunk in use, to keep enough bytes in flight to hide its latency (from memory or L2). Means
// in global memory are shared by the warps around (L1) and are loaded for all groups at the start of their chunk;
// means in shared memory are loaded just before use, one group at a time, which keeps registers for more warps.
// kScaledMeans (f32 means in shared memory, all finite): the means enter as scaled_double, and acc gains the factor
// 1 / kMeansScale.
// prefetch_columns > 0: each chunk also asks L2 for the matrix lines that many columns ahead, which keeps more of a
// matrix that streams from memory in flight than the registers of the ring could hold.
template <int kGroups, bool kSharedMeans, int kDepth = 1, bool kScaledMeans = false, typename T, typename MeanT>
__device__ __forceinline__ void multiply_tile(double (&acc)[kGroups][4], const MatrixOperand<T> &matrix, int64_t i0,
                                              const MeansOperand<MeanT> &means, int active_groups, int j_begin,
                                              int j_end, int lane, int prefetch_columns = 0) {
  static_assert(!kScaledMeans || (kSharedMeans && sizeof(MeanT) == 4), "scaled means are f32 in shared memory");
  const int g = lane / 4, t = lane % 4;
  const int64_t L = matrix.L;
  // Rows past L read as zero: their column bound is then j_begin, before every column.
  const int64_t row_low = i0 + g, row_high = i0 + g + 8;
  const T *a_low = matrix.data + (row_low < L ? row_low : L - 1) * L;
  const T *a_high = matrix.data + (row_high < L ? row_high : L - 1) * L;
  const int end_low = row_low < L ? j_end : j_begin;
  const int end_high = row_high < L ? j_end : j_begin;
  const MeanT *b_first = means.data + g * means.ld;

  // ring_*[d] holds the chunk that starts at column `chunk + 16 * d` of the current pass (loads past j_end are zeros
  // and touch no memory).
  Quad<T> ring_low[kDepth], ring_high[kDepth];
#pragma unroll
  for (int d = 0; d < kDepth; ++d) {
    ring_low[d] = load_quad(a_low, j_begin + 4 * t + 16 * d, end_low, matrix.vector_ok);
    ring_high[d] = load_quad(a_high, j_begin + 4 * t + 16 * d, end_high, matrix.vector_ok);
  }
#pragma unroll 1
  for (int pass = j_begin; pass < j_end; pass += 16 * kDepth) {
#pragma unroll
    for (int d = 0; d < kDepth; ++d) {
      const int chunk = pass + 16 * d;
      if (chunk >= j_end) break;
      const int j = chunk + 4 * t;
      const Quad<T> low = ring_low[d], high = ring_high[d];
      ring_low[d] = load_quad(a_low, j + 16 * kDepth, end_low, matrix.vector_ok);
      ring_high[d] = load_quad(a_high, j + 16 * kDepth, end_high, matrix.vector_ok);
      if (prefetch_columns > 0) {
        const int ahead = j + prefetch_columns;
        if (ahead < end_low) prefetch_to_l2(a_low + ahead);
        if (ahead < end_high) prefetch_to_l2(a_high + ahead);
      }
      Quad<MeanT> global_b[kSharedMeans ? 1 : kGroups];
      if constexpr (!kSharedMeans) {
#pragma unroll
        for (int group = 0; group < kGroups; ++group) {
          const MeanT *b_row = b_first + group * 8 * means.ld;
          const bool row_valid = group < active_groups && group * 8 + g < means.rows;
          global_b[group] = load_quad(row_valid ? b_row : means.data, j, row_valid ? j_end : j_begin, means.vector_ok);
        }
      }
#pragma unroll
      for (int group = 0; group < kGroups; ++group) {
        if (group >= active_groups) continue;
        Quad<MeanT> b;
        if constexpr (kSharedMeans)
          b = load_shared_quad(b_first + group * 8 * means.ld + j);
        else
          b = global_b[group];
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const double a[4] = {static_cast<double>(low.v[2 * half]), static_cast<double>(high.v[2 * half]),
                               static_cast<double>(low.v[2 * half + 1]), static_cast<double>(high.v[2 * half + 1])};
          double bb[2];
          if constexpr (kScaledMeans) {
            bb[0] = scaled_double(b.v[2 * half]);
            bb[1] = scaled_double(b.v[2 * half + 1]);
          } else {
            bb[0] = static_cast<double>(b.v[2 * half]);
            bb[1] = static_cast<double>(b.v[2 * half + 1]);
          }
          mma_16x8x8(acc[group], a, bb);
        }
      }
    }
  }
}

// Writes acc (the tile of multiply_tile) to out[row * ld + col] for rows [i0, i0 + 16) below `rows` and columns
// col0 + [0, 8 * active_groups) below col_end, in pairs where pair_ok (out and ld keep pairs 2-element aligned).
template <int kGroups, typename Out>
__device__ __forceinline__ void store_tile(const double (&acc)[kGroups][4], Out *out, int64_t ld, int64_t rows,
                                           int64_t i0, int64_t col0, int64_t col_end, int active_groups, bool pair_ok,
                                           int lane) {
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int group = 0; group < kGroups; ++group) {
    if (group >= active_groups) continue;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int64_t row = i0 + g + 8 * half;
      const int64_t col = col0 + group * 8 + 2 * t;
      if (row >= rows) continue;
      Out *p = out + row * ld + col;
      const Out first = static_cast<Out>(acc[group][2 * half]);
      const Out second = static_cast<Out>(acc[group][2 * half + 1]);
      if (pair_ok && col + 1 < col_end) {
        if constexpr (sizeof(Out) == 4)
          *reinterpret_cast<float2 *>(p) = make_float2(first, second);
        else
          *reinterpret_cast<double2 *>(p) = make_double2(first, second);
      } else {
        if (col < col_end) p[0] = first;
        if (col + 1 < col_end) p[1] = second;
      }
    }
  }
}

}  // namespace fastgemm::detail
