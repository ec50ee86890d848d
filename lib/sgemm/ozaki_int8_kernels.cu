// SPDX-License-Identifier: Apache-2.0
#include "sgemm/ozaki_int8_kernels.hpp"

#include <cuda_runtime.h>

#include <cstdint>

#include "core/launch.cuh"
#include "cuda/warp_reduce.cuh"
#include "sgemm/ozaki_int8_math.hpp"

namespace fastgemm::detail::ozaki {

Lines rows_of_a(const GemmProblem &p) {
  // op(A)[i][l] lies at i * ld + l, or at l * ld + i when transposed.
  Lines lines;
  lines.data = p.a.data;
  lines.count = p.m;
  lines.length = p.k;
  lines.line_stride = p.a.transposed ? 1 : p.a.ld;
  lines.element_stride = p.a.transposed ? p.a.ld : 1;
  lines.batch_stride = p.a.stride;
  return lines;
}

Lines columns_of_b(const GemmProblem &p) {
  // op(B)[l][j] lies at l * ld + j, or at j * ld + l when transposed.
  Lines lines;
  lines.data = p.b.data;
  lines.count = p.n;
  lines.length = p.k;
  lines.line_stride = p.b.transposed ? p.b.ld : 1;
  lines.element_stride = p.b.transposed ? 1 : p.b.ld;
  lines.batch_stride = p.b.stride;
  return lines;
}

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
// Lines across a block's columns in the kernels for lines that are not contiguous (consecutive lines adjacent).
constexpr int kLineTile = 32;
constexpr int kRows = kThreads / kLineTile;
// Elements of a line a residue tile covers: 4 per lane of a warp.
constexpr int kDepthTile = 128;
constexpr int kTilePitch = kDepthTile + 4;  // floats; rows stay 16-byte aligned for 128-bit reads

__host__ __device__ constexpr int64_t divide_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

// What one thread has gathered of a line.
struct LineSums {
  double squares = 0, absolutes = 0, roots = 0;  // sums of x^2, |x|, sqrt|x|
  double nonzeros = 0;
  bool finite = true;

  __device__ void add(float x) {
    const double value = x;
    squares = fma(value, value, squares);
    absolutes += fabs(value);
    roots += sqrtf(fabsf(x));
    nonzeros += x != 0.0f ? 1.0 : 0.0;
    finite = finite && isfinite(x);
  }
};

// Stores the line's norm (or -1 and the line in the list when it is not finite) and its spread.
__device__ void finish_line(const LineSums &sums, int64_t id, int operand, double *norms, int64_t *flagged,
                            ScanSummary *summary) {
  if (!sums.finite) {
    norms[id] = -1.0;
    const unsigned long long slot = atomicAdd(&summary->flagged_lines[operand], 1ull);
    flagged[slot] = id;
    return;
  }
  norms[id] = sqrt(sums.squares);
  if (sums.nonzeros == 0) return;
  // log2 of ||x||_2 / (sqrt(nnz) M(x)), M(x) = (roots / nnz)^2, and of sqrt(nnz) ||x||_2 / ||x||_1; both >= 0 in
  // exact arithmetic (rounding may take them just below).
  const double spread = fmax(0.5 * log2(sums.squares) + 1.5 * log2(sums.nonzeros) - 2.0 * log2(sums.roots), 0.0);
  const double concentration = fmax(0.5 * log2(sums.squares) + 0.5 * log2(sums.nonzeros) - log2(sums.absolutes), 0.0);
  atomicMax(&summary->spread_bits[operand], static_cast<unsigned long long>(__double_as_longlong(spread)));
  atomicMax(&summary->concentration_bits[operand],
            static_cast<unsigned long long>(__double_as_longlong(concentration)));
}

// Lines whose elements are contiguous: one warp per line, lanes across it.
__global__ void scan_contiguous_kernel(Lines lines, int64_t total_lines, int operand, double *norms, int64_t *flagged,
                                       ScanSummary *summary) {
  const int lane = threadIdx.x % 32;
  for (int64_t id = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; id < total_lines;
       id += static_cast<int64_t>(gridDim.x) * kWarps) {
    const int64_t batch = id / lines.count, line = id % lines.count;
    const float *x = lines.data + batch * lines.batch_stride + line * lines.line_stride;
    LineSums sums;
    int64_t l = lane;
    if (reinterpret_cast<uintptr_t>(x) % 16 == 0) {  // 128-bit loads, two in flight, then the last few singly
      const auto *groups = reinterpret_cast<const float4 *>(x);
      const int64_t group_count = lines.length / 4;
      int64_t g = lane;
      for (; g + 32 < group_count; g += 64) {
        const float4 v = __ldg(groups + g), w = __ldg(groups + g + 32);
        sums.add(v.x), sums.add(v.y), sums.add(v.z), sums.add(v.w);
        sums.add(w.x), sums.add(w.y), sums.add(w.z), sums.add(w.w);
      }
      for (; g < group_count; g += 32) {
        const float4 v = __ldg(groups + g);
        sums.add(v.x), sums.add(v.y), sums.add(v.z), sums.add(v.w);
      }
      l = group_count * 4 + lane;
    } else {
      for (; l + 3 * 32 < lines.length; l += 4 * 32) {  // four loads in flight
        const float x0 = __ldg(x + l), x1 = __ldg(x + l + 32), x2 = __ldg(x + l + 64), x3 = __ldg(x + l + 96);
        sums.add(x0), sums.add(x1), sums.add(x2), sums.add(x3);
      }
    }
    for (; l < lines.length; l += 32) sums.add(__ldg(x + l));
    LineSums total;
    total.squares = warp_sum(sums.squares);
    total.absolutes = warp_sum(sums.absolutes);
    total.roots = warp_sum(sums.roots);
    total.nonzeros = warp_sum(sums.nonzeros);
    total.finite = __all_sync(0xffffffffu, sums.finite);
    if (lane == 0) finish_line(total, id, operand, norms, flagged, summary);
  }
}

// Lines that lie side by side (element l of consecutive lines adjacent): kLineTile lines across a block's columns,
// its kRows rows taking every kRows-th element, then summed in a fixed order.
__global__ void scan_strided_kernel(Lines lines, int64_t total_lines, int operand, double *norms, int64_t *flagged,
                                    ScanSummary *summary) {
  __shared__ double squares[kRows][kLineTile], absolutes[kRows][kLineTile], roots[kRows][kLineTile],
      nonzeros[kRows][kLineTile];
  __shared__ bool finite[kRows][kLineTile];
  const int column = threadIdx.x % kLineTile, row = threadIdx.x / kLineTile;
  const int64_t tiles_per_batch = divide_up(lines.count, kLineTile);
  const int64_t batches = total_lines / lines.count;
  for (int64_t tile = blockIdx.x; tile < batches * tiles_per_batch; tile += gridDim.x) {
    const int64_t batch = tile / tiles_per_batch;
    const int64_t line = tile % tiles_per_batch * kLineTile + column;
    LineSums sums;
    if (line < lines.count) {
      const float *x = lines.data + batch * lines.batch_stride + line * lines.line_stride;
      const int64_t step = kRows * lines.element_stride;
      int64_t l = row;
      for (; l + 3 * kRows < lines.length; l += 4 * kRows) {  // four loads in flight
        const float *at = x + l * lines.element_stride;
        const float x0 = __ldg(at), x1 = __ldg(at + step), x2 = __ldg(at + 2 * step), x3 = __ldg(at + 3 * step);
        sums.add(x0), sums.add(x1), sums.add(x2), sums.add(x3);
      }
      for (; l < lines.length; l += kRows) sums.add(__ldg(x + l * lines.element_stride));
    }
    squares[row][column] = sums.squares;
    absolutes[row][column] = sums.absolutes;
    roots[row][column] = sums.roots;
    nonzeros[row][column] = sums.nonzeros;
    finite[row][column] = sums.finite;
    __syncthreads();
    if (row == 0 && line < lines.count) {
      LineSums total = sums;
      for (int r = 1; r < kRows; ++r) {
        total.squares += squares[r][column];
        total.absolutes += absolutes[r][column];
        total.roots += roots[r][column];
        total.nonzeros += nonzeros[r][column];
        total.finite = total.finite && finite[r][column];
      }
      finish_line(total, batch * lines.count + line, operand, norms, flagged, summary);
    }
    __syncthreads();
  }
}

__device__ __forceinline__ double line_scale(double norm, double scale_target) {
  return norm > 0 ? scale_target / norm : 0.0;
}

// Writes the residues of 4 consecutive elements (already scaled and rounded) of one line for every modulus.
__device__ __forceinline__ void store_residues(const double (&values)[4], const CrtConstants &constants, int8_t *out,
                                               int64_t modulus_stride) {
#pragma unroll 1
  for (int l = 0; l < constants.count; ++l) {
    char4 packed;
    packed.x =
        static_cast<signed char>(symmetric_residue(values[0], constants.modulus[l], constants.inverse_modulus[l]));
    packed.y =
        static_cast<signed char>(symmetric_residue(values[1], constants.modulus[l], constants.inverse_modulus[l]));
    packed.z =
        static_cast<signed char>(symmetric_residue(values[2], constants.modulus[l], constants.inverse_modulus[l]));
    packed.w =
        static_cast<signed char>(symmetric_residue(values[3], constants.modulus[l], constants.inverse_modulus[l]));
    *reinterpret_cast<char4 *>(out + l * modulus_stride) = packed;
  }
}

// Contiguous lines: one warp per line of the tile, each lane 4 consecutive elements at a time.
__global__ void residues_contiguous_kernel(Lines lines, const double *norms, ResidueTile tile, CrtConstants constants,
                                           int8_t *residues) {
  const int lane = threadIdx.x % 32;
  const int64_t modulus_stride = tile.padded_lines * tile.depth;
  const int64_t total = tile.batches * tile.padded_lines;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; index < total;
       index += static_cast<int64_t>(gridDim.x) * kWarps) {
    const int64_t local_batch = index / tile.padded_lines, local_line = index % tile.padded_lines;
    const int64_t batch = tile.first_batch + local_batch, line = tile.first_line + local_line;
    const bool inside = local_line < tile.line_count;
    const double scale = inside ? line_scale(norms[batch * lines.count + line], constants.scale_target) : 0.0;
    const float *x = lines.data + batch * lines.batch_stride + line * lines.line_stride;
    const bool aligned = reinterpret_cast<uintptr_t>(x) % 16 == 0;
    int8_t *out = residues + local_batch * constants.count * modulus_stride + local_line * tile.depth;
    for (int64_t l0 = 4 * lane; l0 < tile.depth; l0 += 4 * 32) {
      float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (scale != 0.0 && aligned && l0 + 3 < lines.length) {
        v = __ldg(reinterpret_cast<const float4 *>(x + l0));
      } else if (scale != 0.0) {
        v.x = l0 < lines.length ? __ldg(x + l0) : 0.0f;
        v.y = l0 + 1 < lines.length ? __ldg(x + l0 + 1) : 0.0f;
        v.z = l0 + 2 < lines.length ? __ldg(x + l0 + 2) : 0.0f;
        v.w = l0 + 3 < lines.length ? __ldg(x + l0 + 3) : 0.0f;
      }
      const double values[4] = {rint(v.x * scale), rint(v.y * scale), rint(v.z * scale), rint(v.w * scale)};
      store_residues(values, constants, out + l0, modulus_stride);
    }
  }
}

// Lines side by side: a tile of kLineTile lines x kDepthTile elements read across the lines (coalesced) into
// shared memory, then written along each line as the contiguous kernel does.
__global__ void residues_strided_kernel(Lines lines, const double *norms, ResidueTile tile, CrtConstants constants,
                                        int8_t *residues) {
  __shared__ __align__(16) float values[kLineTile][kTilePitch];
  const int64_t modulus_stride = tile.padded_lines * tile.depth;
  const int64_t line_tiles = divide_up(tile.padded_lines, kLineTile), depth_tiles = divide_up(tile.depth, kDepthTile);
  const int64_t total = tile.batches * line_tiles * depth_tiles;
  const int column = threadIdx.x % kLineTile, row = threadIdx.x / kLineTile;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int64_t index = blockIdx.x; index < total; index += gridDim.x) {
    const int64_t local_batch = index / (line_tiles * depth_tiles);
    const int64_t line0 = index / depth_tiles % line_tiles * kLineTile;
    const int64_t l0 = index % depth_tiles * kDepthTile;
    const int64_t batch = tile.first_batch + local_batch;
    {
      const int64_t local_line = line0 + column;
      const bool inside = local_line < tile.line_count;
      const float *x = lines.data + batch * lines.batch_stride + (tile.first_line + local_line) * lines.line_stride;
      for (int e = row; e < kDepthTile; e += kRows) {
        const int64_t l = l0 + e;
        values[column][e] = inside && l < lines.length ? __ldg(x + l * lines.element_stride) : 0.0f;
      }
    }
    __syncthreads();
    for (int c = warp; c < kLineTile; c += kWarps) {
      const int64_t local_line = line0 + c;
      if (local_line >= tile.padded_lines) break;
      const double scale =
          local_line < tile.line_count
              ? line_scale(norms[batch * lines.count + tile.first_line + local_line], constants.scale_target)
              : 0.0;
      const float4 x = *reinterpret_cast<const float4 *>(&values[c][4 * lane]);
      const double scaled[4] = {rint(x.x * scale), rint(x.y * scale), rint(x.z * scale), rint(x.w * scale)};
      const int64_t l = l0 + 4 * lane;
      if (l < tile.depth)
        store_residues(scaled, constants,
                       residues + local_batch * constants.count * modulus_stride + local_line * tile.depth + l,
                       modulus_stride);
    }
    __syncthreads();
  }
}

// One thread per 4 consecutive columns of a row of the tile, the INT32 products read as 128-bit words.
__global__ void reconstruct_kernel(GemmProblem p, ProductTile tile, const int32_t *products, const double *a_norms,
                                   const double *b_norms, CrtConstants constants) {
  const int64_t groups_per_row = divide_up(tile.cols, 4);
  const int64_t total = tile.batches * tile.rows * groups_per_row;
  const int64_t modulus_stride = tile.padded_rows * tile.padded_cols;
  const double inverse_target = 1.0 / constants.scale_target;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < total;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t col0 = index % groups_per_row * 4;
    const int64_t local_row = index / groups_per_row % tile.rows;
    const int64_t local_batch = index / groups_per_row / tile.rows;
    const int64_t batch = tile.first_batch + local_batch, row = tile.first_row + local_row;
    const double row_norm = a_norms[batch * p.m + row];
    if (row_norm < 0) continue;  // NaN or Inf in the row: fix_flagged's
    const int32_t *in = products + local_batch * constants.count * modulus_stride + local_row * tile.padded_cols + col0;
    int4 words[kMaxModuli];
#pragma unroll
    for (int l = 0; l < kMaxModuli; ++l)
      words[l] = l < constants.count ? __ldg(reinterpret_cast<const int4 *>(in + l * modulus_stride)) : int4{};
    CrtSums sums[4];
#pragma unroll
    for (int l = 0; l < kMaxModuli; ++l) {
      if (l >= constants.count) break;
      sums[0].add(words[l].x, constants, l);
      sums[1].add(words[l].y, constants, l);
      sums[2].add(words[l].z, constants, l);
      sums[3].add(words[l].w, constants, l);
    }
    float *c = p.c + batch * p.stride_c + row * p.ldc + tile.first_col + col0;
    const double row_unscale = row_norm * inverse_target;
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      if (col0 + t >= tile.cols) break;
      const double col_norm = b_norms[batch * p.n + tile.first_col + col0 + t];
      if (col_norm < 0) continue;
      const double value = sums[t].value(constants) * row_unscale * (col_norm * inverse_target);
      double result = static_cast<double>(p.alpha) * value;
      if (p.beta != 0.0f) result = fma(static_cast<double>(p.beta), static_cast<double>(c[t]), result);
      c[t] = static_cast<float>(result);
    }
  }
}

// Element (row, col) of op(A) op(B) of product `batch` as FP32 arithmetic gives it, then alpha and beta.
__device__ void store_fp32_element(const GemmProblem &p, int64_t batch, int64_t row, int64_t col) {
  const float *x = p.a.data + batch * p.a.stride + (p.a.transposed ? row : row * p.a.ld);
  const float *y = p.b.data + batch * p.b.stride + (p.b.transposed ? col * p.b.ld : col);
  const int64_t x_step = p.a.transposed ? p.a.ld : 1, y_step = p.b.transposed ? 1 : p.b.ld;
  float sum = 0.0f;
  for (int64_t l = 0; l < p.k; ++l) sum = fmaf(__ldg(x + l * x_step), __ldg(y + l * y_step), sum);
  float *out = p.c + batch * p.stride_c + row * p.ldc + col;
  *out = p.beta == 0.0f ? p.alpha * sum : fmaf(p.beta, *out, p.alpha * sum);
}

// Every element of each flagged row: blockIdx.y picks the row from the list, threads the columns.
__global__ void fix_rows_kernel(GemmProblem p, const int64_t *flagged, int64_t count) {
  for (int64_t entry = blockIdx.y; entry < count; entry += gridDim.y) {
    const int64_t batch = flagged[entry] / p.m, row = flagged[entry] % p.m;
    for (int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; col < p.n;
         col += static_cast<int64_t>(gridDim.x) * blockDim.x)
      store_fp32_element(p, batch, row, col);
  }
}

// Every element of each flagged column whose row is not flagged (those fix_rows_kernel writes).
__global__ void fix_columns_kernel(GemmProblem p, const int64_t *flagged, int64_t count, const double *a_norms) {
  for (int64_t entry = blockIdx.y; entry < count; entry += gridDim.y) {
    const int64_t batch = flagged[entry] / p.n, col = flagged[entry] % p.n;
    for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < p.m;
         row += static_cast<int64_t>(gridDim.x) * blockDim.x)
      if (a_norms[batch * p.m + row] >= 0) store_fp32_element(p, batch, row, col);
  }
}

// Enough blocks to fill the device several times over; the kernels loop over the rest.
constexpr int64_t kMaxBlocks = 65536;

}  // namespace

Status scan_lines(const Lines &lines, int64_t batch, int operand, double *norms, int64_t *flagged, ScanSummary *summary,
                  cudaStream_t stream) {
  const int64_t total = batch * lines.count;
  if (lines.element_stride == 1)
    return launch(scan_contiguous_kernel, dim3(capped_grid(divide_up(total, kWarps), kMaxBlocks)), dim3(kThreads), 0,
                  stream, lines, total, operand, norms, flagged, summary);
  return launch(scan_strided_kernel, dim3(capped_grid(batch * divide_up(lines.count, kLineTile), kMaxBlocks)),
                dim3(kThreads), 0, stream, lines, total, operand, norms, flagged, summary);
}

Status make_residues(const Lines &lines, const double *norms, const ResidueTile &tile, const CrtConstants &constants,
                     int8_t *residues, cudaStream_t stream) {
  if (lines.element_stride == 1)
    return launch(residues_contiguous_kernel,
                  dim3(capped_grid(divide_up(tile.batches * tile.padded_lines, kWarps), kMaxBlocks)), dim3(kThreads), 0,
                  stream, lines, norms, tile, constants, residues);
  const int64_t tiles = tile.batches * divide_up(tile.padded_lines, kLineTile) * divide_up(tile.depth, kDepthTile);
  return launch(residues_strided_kernel, dim3(capped_grid(tiles, kMaxBlocks)), dim3(kThreads), 0, stream, lines, norms,
                tile, constants, residues);
}

Status reconstruct(const GemmProblem &p, const ProductTile &tile, const int32_t *products, const double *a_norms,
                   const double *b_norms, const CrtConstants &constants, cudaStream_t stream) {
  const int64_t threads = tile.batches * tile.rows * divide_up(tile.cols, 4);
  return launch(reconstruct_kernel, dim3(capped_grid(divide_up(threads, kThreads), kMaxBlocks)), dim3(kThreads), 0,
                stream, p, tile, products, a_norms, b_norms, constants);
}

Status fix_flagged(const GemmProblem &p, const int64_t *a_flagged, int64_t a_count, const int64_t *b_flagged,
                   int64_t b_count, const double *a_norms, cudaStream_t stream) {
  if (a_count > 0)
    FG_RETURN_IF_ERROR(launch(fix_rows_kernel, dim3(capped_grid(divide_up(p.n, kThreads), 1024), capped_grid(a_count)),
                              dim3(kThreads), 0, stream, p, a_flagged, a_count));
  if (b_count > 0)
    FG_RETURN_IF_ERROR(launch(fix_columns_kernel,
                              dim3(capped_grid(divide_up(p.m, kThreads), 1024), capped_grid(b_count)), dim3(kThreads),
                              0, stream, p, b_flagged, b_count, a_norms));
  return Status::success();
}

}  // namespace fastgemm::detail::ozaki
