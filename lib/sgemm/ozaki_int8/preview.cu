// SPDX-License-Identifier: Apache-2.0
// FG_SGEMM_OZAKI_INT8's preview: before the scan and the plan of every element, the same certificate on a sample
// of the elements (every row of a sample of op(A)'s rows against every column of a sample of op(B)'s), so that
// operands no count certifies are sent to FP32 throughout for a few microseconds instead of the whole plan. The
// preview only ever chooses FP32: where it sees no reason to, the plan of every element decides, as without it.
#include <cuda_runtime.h>

#include <cstdint>

#include "core/launch.cuh"
#include "sgemm/ozaki_int8/choice.hpp"
#include "sgemm/ozaki_int8/kernel_common.cuh"
#include "sgemm/ozaki_int8/kernels.hpp"
#include "sgemm/ozaki_int8/line_sums.cuh"
#include "sgemm/ozaki_int8/math.hpp"

namespace fastgemm::detail::ozaki {
namespace {

// One block per sampled line, its threads along it, each holding up to kHeld of its elements in registers between
// the sums and the codes (lines up to kHeld * kLineThreads deep are read once).
constexpr int kLineThreads = 1024;
constexpr int kHeld = 16;
constexpr int kDecideThreads = 1024;

// Sample line s (0 .. kPreviewLines - 1) of an operand with `count` lines: spread evenly; an operand of fewer than
// kPreviewLines lines is taken whole (-1 past its lines).
__host__ __device__ inline int64_t sample_line(int s, int64_t count) {
  if (count < kPreviewLines) return s < count ? s : -1;
  return s * count / kPreviewLines;
}

// The sampled products: up to kPreviewBatches, spread over the batch.
__host__ __device__ inline int64_t sample_batches(int64_t batch) {
  return batch < kPreviewBatches ? batch : kPreviewBatches;
}
__host__ __device__ inline int64_t sample_batch(int64_t t, int64_t batch) { return t * batch / sample_batches(batch); }

// One block per sampled line of one operand of one sampled product (blockIdx.x = (t * 2 + operand) *
// kPreviewLines + s): its facts, as the scan finds them (only the preview's choice depends on the order of the
// sums), then its codes floor(|x| 2^g), zero past k and for a line holding NaN or Inf or past the operand. The facts'
// scales at each moduli count are found by a thread each.
__global__ void __launch_bounds__(kLineThreads)
    preview_lines_kernel(Lines a, Lines b, int64_t batch, int64_t depth, CertificateConstants certificate,
                         LineFacts *facts, int8_t *codes) {
  static_assert(kMaxModuli < kLineThreads, "a thread a count");
  __shared__ LineSums partial[kLineThreads / 32];
  __shared__ double scale;
  __shared__ LineFacts found;
  __shared__ CountScale scales[kMaxModuli + 1];
  a = live_lines(a);
  b = live_lines(b);
  const int64_t id = blockIdx.x;
  const int operand = static_cast<int>(id / kPreviewLines % 2);
  const int64_t t = id / kPreviewLines / 2;
  const Lines lines = operand == 0 ? a : b;  // by value: a reference to one of the two would put both in local memory
  const int64_t line = sample_line(static_cast<int>(id % kPreviewLines), lines.count);
  const float *x = lines.data + sample_batch(t, batch) * lines.batch_stride + (line < 0 ? 0 : line) * lines.line_stride;
  const bool holds = depth <= kHeld * kLineThreads;  // depth >= k
  float held[kHeld] = {};
  LineSums sums;
  if (line >= 0) {
    if (holds) {  // every load in flight at once, then the sums in the same order as the loop below
#pragma unroll
      for (int i = 0; i < kHeld; ++i) {
        const int64_t l = threadIdx.x + static_cast<int64_t>(i) * kLineThreads;
        held[i] = l < lines.length ? __ldg(x + l * lines.element_stride) : 0.0f;
      }
#pragma unroll
      for (int i = 0; i < kHeld; ++i)
        if (threadIdx.x + static_cast<int64_t>(i) * kLineThreads < lines.length) sums.add(held[i]);
    } else {
#pragma unroll 4
      for (int64_t l = threadIdx.x; l < lines.length; l += kLineThreads) sums.add(__ldg(x + l * lines.element_stride));
    }
  }
  const LineSums warp = sums.warp_total();
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = warp;
  __syncthreads();
  static_assert(kLineThreads == 32 * 32, "the first warp sums the warps' partial sums, one a lane");
  if (threadIdx.x < 32) {
    const LineSums total = partial[threadIdx.x].warp_total();
    if (threadIdx.x == 0) {  // the codes' scale, line_facts' 2^code_exponent, and the facts but their scales
      scale =
          line >= 0 && total.finite() ? ldexp(1.0, total.nonzeros > 0 ? code_exponent_of(total.largest()) : 0) : 0.0;
      found = line_facts_unscaled(total.squares, total.absolutes, total.largest(), total.smallest(), total.nonzeros,
                                  total.integral(), total.finite(), certificate);
    }
  }
  __syncthreads();
  // Thread c in [kMinModuli, kMaxModuli] finds the scale at count c (line_facts' loop), while the others write the
  // codes.
  if (threadIdx.x >= kMinModuli && threadIdx.x <= kMaxModuli)
    scales[threadIdx.x] = count_scale(found, scale_target_at(certificate, static_cast<int>(threadIdx.x)));
  int8_t *out = codes + id * depth;
  if (holds) {
#pragma unroll
    for (int i = 0; i < kHeld; ++i) {
      const int64_t l = threadIdx.x + static_cast<int64_t>(i) * kLineThreads;
      if (l < depth) out[l] = static_cast<int8_t>(floor(fabs((scale != 0.0 ? held[i] : 0.0f) * scale)));
    }
  } else {
#pragma unroll 4
    for (int64_t l = threadIdx.x; l < depth; l += kLineThreads) {
      const float value = scale != 0.0 && l < lines.length ? __ldg(x + l * lines.element_stride) : 0.0f;
      out[l] = static_cast<int8_t>(floor(fabs(value * scale)));
    }
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int count = kMinModuli; count <= kMaxModuli; ++count) add_line_scale(found, count, scales[count]);
  __syncthreads();
  if (threadIdx.x < kFactWords)
    reinterpret_cast<uint32_t *>(facts + id)[threadIdx.x] = reinterpret_cast<const uint32_t *>(&found)[threadIdx.x];
}

// products[t][i][j] = the codes' product of sampled row i and column j of sampled product t: a block per row
// (blockIdx.x), group of kProductColumns columns (blockIdx.y) and product (blockIdx.z); each column's kColumnWarps
// warps take every kColumnWarps-th run of 512 bytes of the depth, a lane 16 bytes (depth is a multiple of 16); the
// warps' sums then added in order (exact: INT32 sums stay exact, depth <= kMaxDepth).
constexpr int kProductColumns = 8, kColumnWarps = kLineThreads / 32 / kProductColumns;
__global__ void __launch_bounds__(kLineThreads)
    preview_products_kernel(const int8_t *codes, int64_t depth, int32_t *products) {
  static_assert(kPreviewLines % kProductColumns == 0, "whole groups of columns");
  __shared__ int partial[kProductColumns][kColumnWarps];
  const int64_t t = blockIdx.z;
  const int row = static_cast<int>(blockIdx.x), warp = static_cast<int>(threadIdx.x / 32), lane = threadIdx.x % 32;
  const int local = warp / kColumnWarps, part = warp % kColumnWarps;
  const int col = static_cast<int>(blockIdx.y) * kProductColumns + local;
  const auto *x = reinterpret_cast<const int4 *>(codes + ((t * 2) * kPreviewLines + row) * depth);
  const auto *y = reinterpret_cast<const int4 *>(codes + ((t * 2 + 1) * kPreviewLines + col) * depth);
  int sum = 0;
#pragma unroll 4
  for (int64_t w = part * 32 + lane; w < depth / 16; w += kColumnWarps * 32) {
    const int4 u = __ldg(x + w), v = __ldg(y + w);
    sum = __dp4a(u.x, v.x, sum);
    sum = __dp4a(u.y, v.y, sum);
    sum = __dp4a(u.z, v.z, sum);
    sum = __dp4a(u.w, v.w, sum);
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0) partial[local][part] = sum;
  __syncthreads();
  if (threadIdx.x < kProductColumns) {
    int total = 0;
    for (int p = 0; p < kColumnWarps; ++p) total += partial[threadIdx.x][p];
    products[(t * kPreviewLines + row) * kPreviewLines + blockIdx.y * kProductColumns + threadIdx.x] = total;
  }
}

// One block: every sampled element's need (the fewest counts that certify it, as the plan finds them from its
// codes' product), the histogram, then one thread's choice from it scaled to the whole product: FP32 throughout
// (branch 0, left in `choice` as moduli 0) where the plan's choice would be too, by the sample; else branch 1, the
// scan and the plan of every element. Lines holding NaN or Inf are left to the scan, which counts them all.
__global__ void __launch_bounds__(kDecideThreads)
    preview_decide_kernel(GemmProblem p, const LineFacts *facts, const int32_t *products,
                          CertificateConstants certificate, cudaGraphConditionalHandle handle, DeviceChoice *choice,
                          int *speculation) {
  __shared__ unsigned int histogram[kNeedsFp32 + 1];
  __shared__ LineFacts lines[kPreviewBatches * 2 * kPreviewLines];
  p = live_problem(p);
  const int64_t batches = sample_batches(p.batch);
  for (int bin = threadIdx.x; bin <= kNeedsFp32; bin += blockDim.x) histogram[bin] = 0;
  // The facts copied by words, every thread a few.
  for (int64_t word = threadIdx.x; word < batches * 2 * kPreviewLines * kFactWords; word += blockDim.x)
    reinterpret_cast<uint32_t *>(lines)[word] = reinterpret_cast<const uint32_t *>(facts)[word];
  __syncthreads();
  for (int64_t index = threadIdx.x; index < batches * kPreviewLines * kPreviewLines; index += blockDim.x) {
    const int64_t t = index / (kPreviewLines * kPreviewLines);
    const int i = static_cast<int>(index / kPreviewLines % kPreviewLines), j = static_cast<int>(index % kPreviewLines);
    const int64_t row = sample_line(i, p.m), col = sample_line(j, p.n);
    if (row < 0 || col < 0) continue;
    const LineFacts &x = lines[(t * 2) * kPreviewLines + i];
    const LineFacts &y = lines[(t * 2 + 1) * kPreviewLines + j];
    if ((x.flags & kLineNonFinite) != 0 || (y.flags & kLineNonFinite) != 0) continue;
    const float c0 = p.beta != 0.0f ? p.c[sample_batch(t, p.batch) * p.stride_c + row * p.ldc + col] : 0.0f;
    // From 7 moduli (uniform operands' need) down to the fewest that certify, or up by bisection: monotone.
    const int need = element_need(x, y, products[index], p.alpha, p.beta, c0, certificate, 7);
    atomicAdd(&histogram[need], 1u);
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  unsigned long long counted = 0;
  for (int bin = 0; bin <= kNeedsFp32; ++bin) counted += histogram[bin];
  // The sample's histogram and flagged lines, scaled to the whole product.
  const double elements = static_cast<double>(p.batch) * static_cast<double>(p.m) * static_cast<double>(p.n);
  ScanSummary scaled = {};
  for (int bin = 0; bin <= kNeedsFp32; ++bin)
    scaled.needs[bin] =
        counted == 0 ? 0ull : static_cast<unsigned long long>(histogram[bin] * (elements / counted) + 0.5);
  const ModuliChoice chosen = choose_moduli(scaled.needs, p.m, p.n, p.k, p.batch, p.beta != 0.0f);
  const bool fp32 = counted != 0 && chosen.declined;
  if (speculation != nullptr)
    *speculation = counted != 0 && !chosen.declined && chosen.count == kSpeculatedModuli ? kSpeculatedModuli : 0;
  cudaGraphSetConditional(handle, fp32 ? 0u : 1u);
  if (fp32 && choice != nullptr) *choice = DeviceChoice{};
}

}  // namespace

Status preview_choice(const GemmProblem &p, const CertificateConstants &certificate, const PreviewBuffers &buffers,
                      int64_t depth, cudaGraphConditionalHandle handle, DeviceChoice *choice, cudaStream_t stream) {
  const int64_t batches = sample_batches(p.batch);
  if (depth % 16 != 0) return Status::failure(StatusCode::internal_error, "the preview's codes are not whole words");
  FG_RETURN_IF_ERROR(launch(preview_lines_kernel, dim3(static_cast<unsigned int>(batches * 2 * kPreviewLines)),
                            dim3(kLineThreads), 0, stream, rows_of_a(p), columns_of_b(p), p.batch, depth, certificate,
                            buffers.facts, buffers.codes));
  FG_RETURN_IF_ERROR(
      launch(preview_products_kernel,
             dim3(static_cast<unsigned int>(kPreviewLines), static_cast<unsigned int>(kPreviewLines / kProductColumns),
                  static_cast<unsigned int>(batches)),
             dim3(kLineThreads), 0, stream, buffers.codes, depth, buffers.products));
  return launch(preview_decide_kernel, dim3(1), dim3(kDecideThreads), 0, stream, p, buffers.facts, buffers.products,
                certificate, handle, choice, buffers.speculation);
}

}  // namespace fastgemm::detail::ozaki
