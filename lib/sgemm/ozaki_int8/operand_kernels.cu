// SPDX-License-Identifier: Apache-2.0
// FG_SGEMM_OZAKI_INT8's kernels over the operands: the scan of every line, then its codes or its residues.
#include "sgemm/ozaki_int8/kernels.hpp"

#include <cuda_runtime.h>

#include <cstdint>

#include "core/launch.cuh"
#include "cuda/warp_reduce.cuh"
#include "sgemm/ozaki_int8/kernel_common.cuh"
#include "sgemm/ozaki_int8/line_sums.cuh"
#include "sgemm/ozaki_int8/math.hpp"

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
  lines.live_data = p.live != nullptr ? &p.live->a : nullptr;
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
  lines.live_data = p.live != nullptr ? &p.live->b : nullptr;
  return lines;
}

namespace {

// Lines across a block's columns in the kernels for lines that are not contiguous (consecutive lines adjacent).
constexpr int kLineTile = 32;
constexpr int kRows = kThreads / kLineTile;
// Elements of a line a residue tile covers: 4 per lane of a warp.
constexpr int kDepthTile = 128;
constexpr int kTilePitch = kDepthTile + 4;  // floats; rows stay 16-byte aligned for 128-bit reads

// Adds the line's id to the operand's list of lines holding NaN or Inf.
__device__ __forceinline__ void flag_line(int64_t id, int operand, int64_t *flagged, ScanSummary *summary) {
  const unsigned long long slot = atomicAdd(&summary->flagged_lines[operand], 1ull);
  flagged[slot] = id;
}

// Stores the line's facts, and its id in the list when it holds NaN or Inf, by the whole warp, each of whose lanes
// holds the line's sums. Every lane finds the facts but the scales (line_facts_unscaled), lane c the scale at count c
// (line_facts' loop, a count a lane, the same values), and the warp writes them through `staged`, its slot of shared
// memory, a word a lane. One lane finding all twelve scales (a double division, frexp and ldexp each) had issued most
// of the scan's instructions at 1024 deep, the warp's other lanes idle: the scan of 64 products of 1024^3 (one
// operand's lines contiguous) 0.290 -> 0.249 ms, 65536 x 1024 x 4096 0.340-0.356 -> 0.317-0.321 (H200, the same
// facts).
__device__ void finish_line_by_warp(const LineSums &sums, int64_t id, int operand, LineFacts *facts, int64_t *flagged,
                                    ScanSummary *summary, const CertificateConstants &constants, LineFacts &staged) {
  static_assert(kMaxModuli < 32, "a lane a count");
  const int lane = threadIdx.x % 32;
  const LineFacts line = line_facts_unscaled(sums.squares, sums.absolutes, sums.largest(), sums.smallest(),
                                             sums.nonzeros, sums.integral(), sums.finite(), constants);
  CountScale scale;
  if (lane >= kMinModuli && lane <= kMaxModuli) scale = count_scale(line, scale_target_at(constants, lane));
  const unsigned int rounding = __ballot_sync(0xffffffffu, scale.made && scale.rounds);
  if (lane == 0) {
    staged = line;
    staged.rounding = static_cast<int>(rounding);
  }
  __syncwarp();
  if (lane <= kMaxModuli) staged.inverse_scale[lane] = scale.made ? scale.inverse : 0.0;
  __syncwarp();
  for (int word = lane; word < kFactWords; word += 32)
    reinterpret_cast<uint32_t *>(facts + id)[word] = reinterpret_cast<const uint32_t *>(&staged)[word];
  if (lane == 0 && !sums.finite()) flag_line(id, operand, flagged, summary);
  __syncwarp();
}

// One operand's part of a scan's launch: its lines, where their facts go, and the launch's blocks it takes.
struct ScanPart {
  Lines lines;
  int64_t total_lines = 0;
  int operand = 0;
  LineFacts *facts = nullptr;
  int64_t *flagged = nullptr;
  int64_t blocks = 0;
};

// Lines whose elements are contiguous: one warp per line, lanes across it; the part's blocks, `block` this one.
__device__ void scan_contiguous(Lines lines, int64_t total_lines, int operand, LineFacts *facts, int64_t *flagged,
                                ScanSummary *summary, const CertificateConstants &constants, int64_t block,
                                int64_t blocks) {
  lines = live_lines(lines);
  __shared__ LineFacts staged[kWarps];
  const int lane = threadIdx.x % 32;
  for (int64_t id = block * kWarps + threadIdx.x / 32; id < total_lines; id += blocks * kWarps) {
    const int64_t batch = id / lines.count, line = id % lines.count;
    const float *x = lines.data + batch * lines.batch_stride + line * lines.line_stride;
    LineSums sums;
    int64_t l = lane;
    if (reinterpret_cast<uintptr_t>(x) % 16 == 0) {  // 128-bit loads, four in flight, then the last few singly
      // Each lane adds its groups in ascending order whatever the loads in flight: the same sums, bit for bit.
      const auto *groups = reinterpret_cast<const float4 *>(x);
      const int64_t group_count = lines.length / 4;
      int64_t g = lane;
      for (; g + 3 * 32 < group_count; g += 4 * 32) {
        float4 v[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) v[i] = __ldg(groups + g + 32 * i);
#pragma unroll
        for (int i = 0; i < 4; ++i) sums.add(v[i].x), sums.add(v[i].y), sums.add(v[i].z), sums.add(v[i].w);
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
    finish_line_by_warp(sums.warp_total(), id, operand, facts, flagged, summary, constants, staged[threadIdx.x / 32]);
  }
}

// Lines that lie side by side (element l of consecutive lines adjacent): kScanLines lines across a block's columns,
// its kScanRows rows taking every kScanRows-th element (a warp reads 32 bytes of each of 4 rows), then summed in a
// fixed order. Few lines a block, so that a product of 4096 columns fills the device.
constexpr int kScanLines = 8;
constexpr int kScanRows = kThreads / kScanLines;
__device__ void scan_strided(Lines lines, int64_t total_lines, int operand, LineFacts *facts, int64_t *flagged,
                             ScanSummary *summary, const CertificateConstants &constants, int64_t block,
                             int64_t blocks) {
  constexpr int kCounts = kMaxModuli - kMinModuli + 1;
  static_assert(kScanLines * kCounts % 32 == 0 && kScanLines <= 32,
                "the tile's lines' counts in whole rounds of a warp");
  lines = live_lines(lines);
  __shared__ LineSums partial[kScanRows][kScanLines];
  __shared__ LineFacts staged[kScanLines];
  const int column = threadIdx.x % kScanLines, row = threadIdx.x / kScanLines;
  const int64_t tiles_per_batch = divide_up(lines.count, kScanLines);
  const int64_t batches = total_lines / lines.count;
  for (int64_t tile = block; tile < batches * tiles_per_batch; tile += blocks) {
    const int64_t batch = tile / tiles_per_batch;
    const int64_t line = tile % tiles_per_batch * kScanLines + column;
    LineSums sums;
    if (line < lines.count) {
      const float *x = lines.data + batch * lines.batch_stride + line * lines.line_stride;
      const int64_t step = kScanRows * lines.element_stride;
      int64_t l = row;
      // Eight loads in flight, then four, then singly; each thread's elements in ascending order either way.
      for (; l + 7 * kScanRows < lines.length; l += 8 * kScanRows) {
        const float *at = x + l * lines.element_stride;
        float v[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) v[i] = __ldg(at + i * step);
#pragma unroll
        for (int i = 0; i < 8; ++i) sums.add(v[i]);
      }
      for (; l + 3 * kScanRows < lines.length; l += 4 * kScanRows) {
        const float *at = x + l * lines.element_stride;
        const float x0 = __ldg(at), x1 = __ldg(at + step), x2 = __ldg(at + 2 * step), x3 = __ldg(at + 3 * step);
        sums.add(x0), sums.add(x1), sums.add(x2), sums.add(x3);
      }
      for (; l < lines.length; l += kScanRows) sums.add(__ldg(x + l * lines.element_stride));
    }
    partial[row][column] = sums;
    __syncthreads();
    // The tile's lines finished by the first warp: lane j < kScanLines merges line j's sums and finds its facts but the
    // scales, side by side; then the warp's lanes find the 12 counts' scales of the 8 lines in three rounds, and write
    // the facts a word a lane (the same facts as eight lanes each finding its line's twelve scales: the scan of 64
    // products of 1024^3 with both operands' lines strided 0.288-0.290 -> 0.279-0.280 ms on the H200; finished by a
    // warp each, as contiguous lines are, it took 0.289 -> 0.300).
    if (threadIdx.x < 32) {
      const int lane = static_cast<int>(threadIdx.x);
      LineSums total = sums;
      if (lane < kScanLines) {
        for (int r = 1; r < kScanRows; ++r) total.merge(partial[r][column]);
        staged[lane] = line_facts_unscaled(total.squares, total.absolutes, total.largest(), total.smallest(),
                                           total.nonzeros, total.integral(), total.finite(), constants);
        if (line < lines.count && !total.finite()) flag_line(batch * lines.count + line, operand, flagged, summary);
      }
      __syncwarp();
#pragma unroll 1
      for (int pair = lane; pair < kScanLines * kCounts; pair += 32) {
        const int j = pair / kCounts, count = kMinModuli + pair % kCounts;
        const CountScale scale = count_scale(staged[j], scale_target_at(constants, count));
        staged[j].inverse_scale[count] = scale.made ? scale.inverse : 0.0;
        if (scale.made && scale.rounds) atomicOr(&staged[j].rounding, 1 << count);
      }
      __syncwarp();
      const int64_t first = tile % tiles_per_batch * kScanLines;
      for (int word = lane; word < kScanLines * kFactWords; word += 32) {
        const int j = word / kFactWords;
        if (first + j < lines.count)
          reinterpret_cast<uint32_t *>(facts + batch * lines.count + first + j)[word % kFactWords] =
              reinterpret_cast<const uint32_t *>(&staged[j])[word % kFactWords];
      }
    }
    __syncthreads();
  }
}

// Both operands' scans in one launch, the first part's blocks first: each operand alone leaves the device idle where
// it has few lines (one warp a contiguous line: 256 blocks for 2048 of them). Four blocks a multiprocessor (64
// registers, none spilled); six (40 registers) made it slower everywhere.
__global__ void __launch_bounds__(kThreads, 4)
    scan_kernel(ScanPart first, ScanPart second, ScanSummary *summary, CertificateConstants constants) {
  const bool in_first = blockIdx.x < first.blocks;
  const ScanPart &part = in_first ? first : second;
  const int64_t block = in_first ? blockIdx.x : blockIdx.x - first.blocks;
  if (part.lines.element_stride == 1)
    scan_contiguous(part.lines, part.total_lines, part.operand, part.facts, part.flagged, summary, constants, block,
                    part.blocks);
  else
    scan_strided(part.lines, part.total_lines, part.operand, part.facts, part.flagged, summary, constants, block,
                 part.blocks);
}

// What the encoding kernels write: the codes, or the residues of scaled integers below 2^28 in magnitude (the
// moduli counts up to 7) or below 2^52 (math.hpp's integer_residue).
enum ResidueKind { kCodes, kNarrowResidues, kWideResidues };

// What a line is multiplied by before it is rounded: line_scale's for the residues, 2^g for the codes; 0 for a
// line that holds NaN or Inf or lies past the tile (its values are then not read).
template <ResidueKind kKind>
__device__ __forceinline__ double encoding_scale(const LineFacts &facts, const CrtConstants &constants) {
  if ((facts.flags & kLineNonFinite) != 0) return 0.0;
  return kKind == kCodes ? ldexp(1.0, facts.code_exponent) : line_scale(facts, constants.scale_target).scale;
}

// Elements of a line each thread encodes at once: 16 bytes of each output.
constexpr int kRun = 16;
static_assert(kDepthAlignment % kRun == 0 && kDepthTile % kRun == 0, "depths are whole runs");

// Where codes are made with their half-depth set (kernels.hpp's make_residues): where a run's codes at half depth
// go, and the sums of its codes and of its half-depth codes, added to.
struct HalfRun {
  int8_t *codes = nullptr;
  uint32_t code_sum = 0, half_sum = 0;
};

// The bytes of zeros a half-depth set of codes holds from depth / 2 on: up to the next step of the own product.
__device__ __forceinline__ int64_t half_set_zeros(int64_t depth) {
  return divide_up(depth / 2, kHalfSetStep) * kHalfSetStep - depth / 2;
}

__device__ __forceinline__ unsigned long long warp_total(unsigned long long value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// A piece of the operand (the codes of one line over 64 elements or more) into the counts: counted where any code
// is nonzero, lost where the half-depth codes keep less than half of the codes' sum.
__device__ __forceinline__ void count_piece(uint32_t code_sum, uint32_t half_sum, unsigned long long pieces,
                                            CodeChunks *counts) {
  if (code_sum == 0) return;
  counts->counted += pieces;
  if (4ull * half_sum < code_sum) counts->lost += pieces;
}

// A block's counts added to the summary's, once (grids of tens of thousands of blocks: one atomic a warp on the same
// two addresses would cost more than the codes). Every thread of the block calls it, at its end.
__device__ __forceinline__ void add_block_counts(const CodeChunks &counts, CodeChunks *into) {
  __shared__ unsigned long long warp_counts[kWarps][2];
  const unsigned long long counted = warp_total(counts.counted), lost = warp_total(counts.lost);
  if (threadIdx.x % 32 == 0) warp_counts[threadIdx.x / 32][0] = counted, warp_counts[threadIdx.x / 32][1] = lost;
  __syncthreads();
  if (threadIdx.x != 0) return;
  CodeChunks block;
  for (int warp = 0; warp < kWarps; ++warp) block.counted += warp_counts[warp][0], block.lost += warp_counts[warp][1];
  if (block.counted != 0) atomicAdd(&into->counted, block.counted);
  if (block.lost != 0) atomicAdd(&into->lost, block.lost);
}

// Writes kRun consecutive elements of one line, multiplied by the line's scale: their codes, or their residues
// for every modulus, 16 bytes each. The products by the scale are exact (a power of two, or 29 significant bits),
// and so are floor and the rounding to an integer. With `with_half` (codes), the run's half-depth codes too.
template <ResidueKind kKind>
__device__ __forceinline__ void store_encoded(const float (&x)[kRun], double scale, const CrtConstants &constants,
                                              int8_t *out, int64_t modulus_stride, bool with_half, HalfRun &half) {
  const auto pack = [](const int(&bytes)[kRun]) {
    uint32_t words[kRun / 4];
#pragma unroll
    for (int w = 0; w < kRun / 4; ++w)
      words[w] = (static_cast<uint32_t>(bytes[4 * w]) & 0xffu) |
                 (static_cast<uint32_t>(bytes[4 * w + 1]) & 0xffu) << 8 |
                 (static_cast<uint32_t>(bytes[4 * w + 2]) & 0xffu) << 16 |
                 (static_cast<uint32_t>(bytes[4 * w + 3]) & 0xffu) << 24;
    return make_uint4(words[0], words[1], words[2], words[3]);
  };
  if (kKind == kCodes) {
    // |x| 2^g in a float, as |x| 2^64 2^(g-64) where 2^g is no float (g > 127: then every |x| < 2^-120, so |x| 2^64
    // is a normal float): exact (a float times powers of two, below 128), except below 2^-126, where it may round but
    // stays below 1 (code 0).
    const float first = scale > 0x1p127 ? 0x1p64f : 1.0f, second = static_cast<float>(scale / first);
    float scaled[kRun];
#pragma unroll
    for (int e = 0; e < kRun; ++e) scaled[e] = fabsf(x[e]) * first * second;
    int codes[kRun];  // floor(scaled): 2^23 + scaled rounded down is 2^23 + the floor, whose low bits it is
    float floors[kRun];
#pragma unroll
    for (int e = 0; e < kRun; ++e) {
      const float shifted = __fadd_rd(scaled[e], 0x1p23f);
      codes[e] = static_cast<int>(__float_as_uint(shifted) & 0xffu);
      floors[e] = shifted - 0x1p23f;
    }
    *reinterpret_cast<uint4 *>(out) = pack(codes);
    if (with_half) {
      // The run's pairs' codes at half depth, kRun / 2 bytes at half.codes.
      uint32_t words[kRun / 8] = {};
#pragma unroll
      for (int e = 0; e < kRun / 2; ++e) {
        const int code = half_code(floors[2 * e], floors[2 * e + 1]);
        words[e / 4] |= static_cast<uint32_t>(code) << (8 * (e % 4));
        half.half_sum += code;
      }
#pragma unroll
      for (int e = 0; e < kRun; ++e) half.code_sum += codes[e];
      *reinterpret_cast<uint2 *>(half.codes) = make_uint2(words[0], words[1]);
    }
    return;
  }
  if constexpr (kKind == kNarrowResidues) {
    // v = x scale rounded to the nearest integer, ties to even, as rint: 1.5 2^52 + v is the fma's result (|v| <
    // 2^28), whose low word is v. The modulus 256 takes v's low byte, the others math.hpp's float_residue_bits.
    static_assert(kModuli[0] == 256, "the first modulus is 256");
    int values[kRun];
    SplitInteger split[kRun];
#pragma unroll
    for (int e = 0; e < kRun; ++e) {
      values[e] = __double2loint(fma(static_cast<double>(x[e]), scale, 0x1.8p52));
      split[e] = split_integer(values[e]);
    }
    *reinterpret_cast<uint4 *>(out) = pack(values);
#pragma unroll 1
    for (int l = 1; l < constants.count; ++l) {
      const float p = constants.float_modulus[l], inverse = constants.float_inverse[l],
                  residue = constants.split_residue[l];
      int residues[kRun];
#pragma unroll
      for (int e = 0; e < kRun; ++e) residues[e] = static_cast<int>(float_residue_bits(split[e], p, inverse, residue));
      *reinterpret_cast<uint4 *>(out + l * modulus_stride) = pack(residues);
    }
  } else {
    int64_t values[kRun];  // rounded to the nearest, ties to even, as rint
#pragma unroll
    for (int e = 0; e < kRun; ++e) values[e] = __double2ll_rn(x[e] * scale);
#pragma unroll 1
    for (int l = 0; l < constants.count; ++l) {
      const uint32_t p = constants.integer_modulus[l], reciprocal = constants.reciprocal[l],
                     power24 = constants.power24_residue[l];
      int residues[kRun];
#pragma unroll
      for (int e = 0; e < kRun; ++e) residues[e] = integer_residue<false>(values[e], p, reciprocal, power24);
      *reinterpret_cast<uint4 *>(out + l * modulus_stride) = pack(residues);
    }
  }
}

// Whether a launch of the residues at constants.count stops at once: the codes' pass wrote them (make_residues'
// speculation); and whether a launch of the codes (kSpeculates) writes them.
__device__ __forceinline__ bool speculated_here(const int *speculated, const CrtConstants &constants) {
  return speculated != nullptr && *speculated == constants.count;
}

// A run's encoding (store_encoded), and where `speculating` (a codes' pass that writes the residues beside them,
// make_residues' speculation), its residues at constants' count too, scaled by speculated_scale: the run begins at
// element `at` of the line, whose outputs begin at `out` and `speculated_line`.
template <ResidueKind kKind>
__device__ __forceinline__ void store_run(const float (&v)[kRun], double scale, double speculated_scale,
                                          const CrtConstants &constants, int8_t *out, int8_t *speculated_line,
                                          int64_t at, int64_t modulus_stride, bool with_half, bool speculating,
                                          HalfRun &half) {
  store_encoded<kKind>(v, scale, constants, out + at, modulus_stride, with_half, half);
  if (speculating) {
    HalfRun none;
    store_encoded<kNarrowResidues>(v, speculated_scale, constants, speculated_line + at, modulus_stride, false, none);
  }
}

// Contiguous lines: one warp per line of the tile, each lane kRun consecutive elements at a time.
// With half_chunks (codes only), each line's half-depth set too, the line counted whole (depth / 64 pieces).
// kSpeculates (codes only): `constants` are a moduli count's, whose residues go to `speculated_residues` too where
// *speculated is that count. Residues: nothing to do where *speculated is their count.
template <ResidueKind kKind, bool kSpeculates>
__global__ void __launch_bounds__(kThreads, kKind == kCodes ? 3 : 4)
    residues_contiguous_kernel(Lines lines, const LineFacts *facts, ResidueTile tile, CrtConstants constants,
                               int8_t *residues, CodeChunks *half_chunks, const int *speculated,
                               int8_t *speculated_residues) {
  static_assert(!kSpeculates || kKind == kCodes, "only the codes' pass writes residues beside them");
  const bool speculating = kSpeculates && speculated_here(speculated, constants);
  if (kKind != kCodes && speculated_here(speculated, constants)) return;
  lines = live_lines(lines);
  const int lane = threadIdx.x % 32;
  const int64_t modulus_stride = tile.padded_lines * tile.depth;
  if (kKind != kCodes) half_chunks = nullptr;  // only the codes have a half-depth set
  const int64_t outputs = kKind == kCodes ? (half_chunks != nullptr ? kCodeSets : 1) : constants.count;
  CodeChunks counts;
  const int64_t total = tile.batches * tile.padded_lines;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; index < total;
       index += static_cast<int64_t>(gridDim.x) * kWarps) {
    const int64_t local_batch = index / tile.padded_lines, local_line = index % tile.padded_lines;
    const int64_t batch = tile.first_batch + local_batch, line = tile.first_line + local_line;
    const bool inside = local_line < tile.line_count;
    const double scale = inside ? encoding_scale<kKind>(facts[batch * lines.count + line], constants) : 0.0;
    const double speculated_scale =
        speculating && inside ? encoding_scale<kNarrowResidues>(facts[batch * lines.count + line], constants) : 0.0;
    const float *x = lines.data + batch * lines.batch_stride + line * lines.line_stride;
    const bool aligned = reinterpret_cast<uintptr_t>(x) % 16 == 0;
    int8_t *out = residues + local_batch * outputs * modulus_stride + local_line * tile.depth;
    int8_t *speculated_out =
        speculated_residues + local_batch * constants.count * modulus_stride + local_line * tile.depth;
    HalfRun half;
    for (int64_t l0 = kRun * lane; l0 < tile.depth; l0 += kRun * 32) {
      float v[kRun];
      if (scale != 0.0 && aligned && l0 + kRun <= lines.length) {
#pragma unroll
        for (int q = 0; q < kRun / 4; ++q) {
          const float4 group = __ldg(reinterpret_cast<const float4 *>(x + l0) + q);
          v[4 * q] = group.x, v[4 * q + 1] = group.y, v[4 * q + 2] = group.z, v[4 * q + 3] = group.w;
        }
      } else {
#pragma unroll
        for (int e = 0; e < kRun; ++e) v[e] = scale != 0.0 && l0 + e < lines.length ? __ldg(x + l0 + e) : 0.0f;
      }
      half.codes = out + modulus_stride + l0 / 2;
      store_run<kKind>(v, scale, speculated_scale, constants, out, speculated_out, l0, modulus_stride,
                       half_chunks != nullptr, speculating, half);
    }
    if (half_chunks != nullptr) {
      if (8 * lane < half_set_zeros(tile.depth))
        *reinterpret_cast<uint2 *>(out + modulus_stride + tile.depth / 2 + 8 * lane) = make_uint2(0u, 0u);
      const unsigned long long code_sum = warp_total(half.code_sum), half_sum = warp_total(half.half_sum);
      if (lane == 0)
        count_piece(static_cast<uint32_t>(code_sum), static_cast<uint32_t>(half_sum), tile.depth / 64, &counts);
    }
  }
  if (half_chunks != nullptr) add_block_counts(counts, half_chunks);
}

// Lines side by side: a tile of kLineTile lines x kDepthTile elements read across the lines (coalesced) into
// shared memory, then written along each line, kRun elements a thread: a warp takes 8 lines (so that each 8
// threads' 16-byte reads of shared memory fall in distinct banks) and 4 runs of each (64 bytes of each output).
// A block takes `steps` consecutive tiles of the same lines, so that where the lines lie, their facts and scales are
// found once for all of them, and the tile's reads advance by a constant step (no index arithmetic per element).
// With half_chunks (codes only), the half-depth set too, each line's 64 elements a warp takes counted as a piece.
// kSpeculates, `speculated` and `speculated_residues` as in residues_contiguous_kernel.
template <ResidueKind kKind, bool kSpeculates>
__global__ void __launch_bounds__(kThreads, kKind == kCodes ? 3 : 4)
    residues_strided_kernel(Lines lines, const LineFacts *facts, ResidueTile tile, CrtConstants constants,
                            int8_t *residues, CodeChunks *half_chunks, int64_t steps, const int *speculated,
                            int8_t *speculated_residues) {
  static_assert(kLineTile == 32 && kDepthTile == 8 * kRun && kWarps == 8, "a warp takes 8 lines x 4 runs");
  static_assert(!kSpeculates || kKind == kCodes, "only the codes' pass writes residues beside them");
  const bool speculating = kSpeculates && speculated_here(speculated, constants);
  if (kKind != kCodes && speculated_here(speculated, constants)) return;
  constexpr int kReads = kDepthTile / kRows;  // elements of its column each thread reads per tile
  __shared__ __align__(16) float values[kLineTile][kTilePitch];
  lines = live_lines(lines);
  const int64_t modulus_stride = tile.padded_lines * tile.depth;
  if (kKind != kCodes) half_chunks = nullptr;  // only the codes have a half-depth set
  const int64_t outputs = kKind == kCodes ? (half_chunks != nullptr ? kCodeSets : 1) : constants.count;
  CodeChunks counts;
  const int64_t line_tiles = divide_up(tile.padded_lines, kLineTile), depth_tiles = divide_up(tile.depth, kDepthTile);
  const int64_t groups = divide_up(depth_tiles, steps);
  const int64_t total = tile.batches * line_tiles * groups;
  const int column = threadIdx.x % kLineTile, row = threadIdx.x / kLineTile;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int my_line = warp % 4 * 8 + lane % 8, my_run = warp / 4 * 4 + lane / 8;
  for (int64_t index = blockIdx.x; index < total; index += gridDim.x) {
    const int64_t group = index % groups, line_tile = index / groups % line_tiles;
    const int64_t local_batch = index / groups / line_tiles;
    const int64_t batch = tile.first_batch + local_batch, line0 = line_tile * kLineTile;
    // The line this thread reads (its column of the tile) and the line it encodes, for every tile of the group.
    const int64_t read_line = line0 + column;
    const bool readable = read_line < tile.line_count &&
                          (facts[batch * lines.count + tile.first_line + read_line].flags & kLineNonFinite) == 0;
    const float *const x = lines.data + batch * lines.batch_stride + (tile.first_line + read_line) * lines.line_stride;
    const int64_t local_line = line0 + my_line;
    const LineFacts *const line_facts = facts + batch * lines.count + tile.first_line + local_line;
    const double scale = local_line < tile.line_count ? encoding_scale<kKind>(*line_facts, constants) : 0.0;
    const double speculated_scale =
        speculating && local_line < tile.line_count ? encoding_scale<kNarrowResidues>(*line_facts, constants) : 0.0;
    int8_t *const line_out = residues + local_batch * outputs * modulus_stride + local_line * tile.depth;
    int8_t *const speculated_out =
        speculated_residues + local_batch * constants.count * modulus_stride + local_line * tile.depth;
    const int64_t read_step = kRows * lines.element_stride;
    const int64_t last_tile = (group + 1) * steps < depth_tiles ? (group + 1) * steps : depth_tiles;
    for (int64_t depth_tile = group * steps; depth_tile < last_tile; ++depth_tile) {
      const int64_t l0 = depth_tile * kDepthTile;
      if (readable && l0 + kDepthTile <= lines.length) {  // the whole tile lies within the line
        const float *at = x + (l0 + row) * lines.element_stride;
#pragma unroll
        for (int e = 0; e < kReads; ++e, at += read_step) values[column][row + e * kRows] = __ldg(at);
      } else {
        for (int e = row; e < kDepthTile; e += kRows) {
          const int64_t l = l0 + e;
          values[column][e] = readable && l < lines.length ? __ldg(x + l * lines.element_stride) : 0.0f;
        }
      }
      __syncthreads();
      const int64_t l = l0 + my_run * kRun;
      HalfRun half;
      if (local_line < tile.padded_lines && l < tile.depth) {
        float v[kRun];
#pragma unroll
        for (int q = 0; q < kRun / 4; ++q) {
          const float4 group4 = *reinterpret_cast<const float4 *>(&values[my_line][my_run * kRun + 4 * q]);
          v[4 * q] = group4.x, v[4 * q + 1] = group4.y, v[4 * q + 2] = group4.z, v[4 * q + 3] = group4.w;
        }
        half.codes = line_out + modulus_stride + l / 2;
        store_run<kKind>(v, scale, speculated_scale, constants, line_out, speculated_out, l, modulus_stride,
                         half_chunks != nullptr, speculating, half);
        if (half_chunks != nullptr && l / 2 < half_set_zeros(tile.depth))
          *reinterpret_cast<uint2 *>(line_out + modulus_stride + tile.depth / 2 + l / 2) = make_uint2(0u, 0u);
      }
      if (half_chunks != nullptr) {
        // The 4 lanes of a warp on one line (lane % 8) hold its 64 elements.
        uint32_t code_sum = half.code_sum, half_sum = half.half_sum;
#pragma unroll
        for (int offset = 8; offset < 32; offset *= 2) {
          code_sum += __shfl_xor_sync(0xffffffffu, code_sum, offset);
          half_sum += __shfl_xor_sync(0xffffffffu, half_sum, offset);
        }
        if (lane < 8) count_piece(code_sum, half_sum, 1, &counts);
      }
      __syncthreads();
    }
  }
  if (half_chunks != nullptr) add_block_counts(counts, half_chunks);
}

}  // namespace

Status scan_operands(const Lines &a, const Lines &b, int64_t batch, const CertificateConstants &constants,
                     LineFacts *a_facts, int64_t *a_flagged, LineFacts *b_facts, int64_t *b_flagged,
                     ScanSummary *summary, cudaStream_t stream) {
  const auto part = [&](const Lines &lines, int operand, LineFacts *facts, int64_t *flagged) {
    ScanPart made;
    made.lines = lines;
    made.total_lines = batch * lines.count;
    made.operand = operand;
    made.facts = facts;
    made.flagged = flagged;
    made.blocks = capped_grid(
        lines.element_stride == 1 ? divide_up(made.total_lines, kWarps) : batch * divide_up(lines.count, kScanLines),
        kMaxBlocks);
    return made;
  };
  const ScanPart first = part(a, 0, a_facts, a_flagged), second = part(b, 1, b_facts, b_flagged);
  return launch(scan_kernel, dim3(static_cast<unsigned int>(first.blocks + second.blocks)), dim3(kThreads), 0, stream,
                first, second, summary, constants);
}

// kSpeculates, `speculated` and `speculated_residues` as in residues_contiguous_kernel.
template <ResidueKind kKind, bool kSpeculates = false>
Status encode_lines(const Lines &lines, const LineFacts *facts, const ResidueTile &tile, const CrtConstants &constants,
                    int8_t *out, cudaStream_t stream, CodeChunks *half_chunks = nullptr,
                    const int *speculated = nullptr, int8_t *speculated_residues = nullptr) {
  if (lines.element_stride == 1)
    return launch(residues_contiguous_kernel<kKind, kSpeculates>,
                  dim3(capped_grid(divide_up(tile.batches * tile.padded_lines, kWarps), kMaxBlocks)), dim3(kThreads), 0,
                  stream, lines, facts, tile, constants, out, half_chunks, speculated, speculated_residues);
  // Each block takes as many consecutive tiles of its lines as leave kStridedBlocks blocks or more.
  constexpr int64_t kStridedBlocks = 1024;
  const int64_t line_tiles = tile.batches * divide_up(tile.padded_lines, kLineTile);
  const int64_t depth_tiles = divide_up(tile.depth, kDepthTile);
  int64_t steps = line_tiles * depth_tiles / kStridedBlocks;
  steps = steps < 1 ? 1 : steps > depth_tiles ? depth_tiles : steps;
  const int64_t blocks = line_tiles * divide_up(depth_tiles, steps);
  return launch(residues_strided_kernel<kKind, kSpeculates>, dim3(capped_grid(blocks, kMaxBlocks)), dim3(kThreads), 0,
                stream, lines, facts, tile, constants, out, half_chunks, steps, speculated, speculated_residues);
}

Status make_residues(const Lines &lines, const LineFacts *facts, const ResidueTile &tile, const CrtConstants *constants,
                     int8_t *out, cudaStream_t stream, CodeChunks *half_chunks, const Speculation *speculation) {
  // A scaled line's elements are at most its 2-norm, S (1 + 2^-50), and round by at most 1/2.
  const auto narrow = [](const CrtConstants &at) { return at.scale_target + 1.0 < 0x1p28; };
  if (constants == nullptr) {
    if (speculation != nullptr && speculation->constants != nullptr) {
      if (!narrow(*speculation->constants) || speculation->count == nullptr || speculation->residues == nullptr)
        return Status::failure(StatusCode::internal_error, "the codes cannot write these residues beside them");
      return encode_lines<kCodes, true>(lines, facts, tile, *speculation->constants, out, stream, half_chunks,
                                        speculation->count, speculation->residues);
    }
    return encode_lines<kCodes>(lines, facts, tile, CrtConstants{}, out, stream, half_chunks);
  }
  const int *speculated = speculation != nullptr ? speculation->count : nullptr;
  if (narrow(*constants))
    return encode_lines<kNarrowResidues>(lines, facts, tile, *constants, out, stream, nullptr, speculated);
  return encode_lines<kWideResidues>(lines, facts, tile, *constants, out, stream, nullptr, speculated);
}

}  // namespace fastgemm::detail::ozaki
