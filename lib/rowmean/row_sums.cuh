// SPDX-License-Identifier: Apache-2.0
// Row sums at the speed of the read, shared by the fused and staged algorithms.
//
// The input is cut into spans: a span is a row of M values, or one of 2^k pieces of a row when a few long rows must
// still keep the whole GPU busy. A group of G lanes (G a power of two matched to the span's length) reads a span
// together, consecutive lanes on consecutive 16-byte vectors when the pointer and M allow it and on consecutive
// elements otherwise, so that every warp load covers one contiguous stretch; short spans are taken several at a time,
// so that each lane always keeps 8 or 16 loads in flight, and twice that while the next step's loads overlap the
// current step's sums. The loads stream past the caches (evict-first), leaving L1 and L2 to the matrix. Sums are
// doubles (f32 values enter them four at a time, see element_sum), several per lane, combined in a fixed tree, so the
// result is the same bit for bit from run to run.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/launch.cuh"
#include "core/problem.hpp"
#include "cuda/warp_reduce.cuh"

namespace fastgemm::detail {

// Span s is piece (s mod 2^log2_pieces) of row (s >> log2_pieces): elements
// [piece * piece_length, min(M, (piece + 1) * piece_length)) of that row, possibly none for the last pieces.
struct SpanLayout {
  int64_t M = 0;
  int64_t piece_length = 0;  // M when rows are not split
  int log2_pieces = 0;
};

// One round of loads: `lanes` lanes share a span, each lane takes `spans` spans and issues `loads` loads per span.
struct SpanReadShape {
  int lanes, spans, loads;
};

// Ordered by the length of span they cover in one round (lanes * loads loads); the last one loops over long spans.
// Spans of 16 and 32 loads go to groups of 4 and 8 lanes with 4 loads each rather than 16 and 32 lanes with one: each
// lane sums its 4 loads first, which leaves a quarter of the shuffles and double adds per byte (double adds share the
// FP64 pipe with the tensor-core products of the fused and pipelined algorithms: 0.905 -> 0.840 ms for pipelined
// f32 1024 x 64 x 8192 on the H100).
inline constexpr SpanReadShape kSpanReadShapes[] = {{1, 16, 1}, {2, 8, 1},  {4, 8, 1},  {8, 8, 1}, {4, 2, 4},
                                                    {8, 2, 4},  {32, 4, 2}, {32, 2, 4}, {32, 1, 8}};
inline constexpr int kSpanReadShapeCount = static_cast<int>(sizeof(kSpanReadShapes) / sizeof(kSpanReadShapes[0]));

// Spans per lane in one round: 16-byte loads need no more than 8 to keep 128 bytes in flight per lane.
constexpr int spans_per_lane(const SpanReadShape &shape, bool vector) {
  return vector && shape.spans > 8 ? 8 : shape.spans;
}

struct SpanReadPlan {
  int shape = 0;        // index into kSpanReadShapes
  bool vector = false;  // 16-byte loads: the input is 16-byte aligned and every span starts on a 16-byte boundary
};

// The plan for spans of layout.piece_length elements of `dtype` read from `input`.
inline SpanReadPlan plan_span_read(const void *input, fg_dtype_t dtype, const SpanLayout &layout) {
  const int64_t vector_width = 16 / element_size(dtype);
  SpanReadPlan plan;
  plan.vector = reinterpret_cast<uintptr_t>(input) % 16 == 0 && layout.M % vector_width == 0 &&
                layout.piece_length % vector_width == 0;
  const int64_t loads = ceil_div(layout.piece_length, plan.vector ? vector_width : 1);
  plan.shape = kSpanReadShapeCount - 1;
  // Split rows always take the one-span shape (see sum_spans_shaped).
  for (int shape = 0; shape < kSpanReadShapeCount - 1 && layout.log2_pieces == 0; ++shape) {
    if (loads <= int64_t(kSpanReadShapes[shape].lanes) * kSpanReadShapes[shape].loads) {
      plan.shape = shape;
      break;
    }
  }
  return plan;
}

// The parameters the one-pass kernels (fused, pipelined) share, set from the problem: params has fields input,
// matrix, output, L, M, N, inverse_m and read.
template <typename T, typename Params>
void set_one_pass_params(Params &params, const RowmeanProblem &p) {
  params.input = static_cast<const T *>(p.input);
  params.matrix = static_cast<const T *>(p.matrix);
  params.output = static_cast<T *>(p.output);
  params.L = p.L;
  params.M = p.M;
  params.N = p.N;
  params.inverse_m = 1.0 / static_cast<double>(p.M);
  params.read = plan_span_read(p.input, p.dtype, SpanLayout{p.M, p.M, 0});
}

template <typename T, bool kVector>
struct SpanLoad {
  using type = T;
};
template <>
struct SpanLoad<float, true> {
  using type = float4;
};
template <>
struct SpanLoad<double, true> {
  using type = double2;
};

__device__ __forceinline__ double element_sum(float value) { return value; }
__device__ __forceinline__ double element_sum(double value) { return value; }
// Four f32 values are summed in f32, pairwise, and converted once: the f32 rounding of a sum of four is far below the
// f32 rounding of the mean, and one conversion in four keeps the conversion unit (which also serves the product in
// the fused algorithm) off the critical path.
__device__ __forceinline__ double element_sum(float4 value) {
  return static_cast<double>((value.x + value.y) + (value.z + value.w));
}
__device__ __forceinline__ double element_sum(double2 value) { return value.x + value.y; }

// Calls sink(s, sum of span first_span + s) once for every s in [0, span_count), from one lane of the group that read
// it. worker is this thread's index among the `workers` threads sharing the spans; workers is a multiple of 32 and
// each warp's 32 threads are consecutive workers, all calling together. Shapes of several spans per lane take only
// whole rows that one round of loads covers (plan_span_read picks them only then), which keeps their addressing to
// one base and a stride and needs no running sums.
//
// The loads are software-pipelined: the next step's loads (the next stretch of the span, or the next round's spans)
// are issued before the current step is summed, so that each lane keeps two steps of loads in flight and the sums and
// shuffles of one step hide under the loads of the next.
template <typename T, bool kVector, int kLanes, int kSpans, int kLoads, typename Sink>
__device__ __forceinline__ void sum_spans_shaped(const T *input, int64_t first_span, int64_t span_count,
                                                 const SpanLayout &layout, int worker, int workers, const Sink &sink) {
  using Load = typename SpanLoad<T, kVector>::type;
  constexpr int64_t kWidth = sizeof(Load) / sizeof(T);
  const int lane_in_group = worker % kLanes;
  const int64_t group = worker / kLanes;
  const int64_t groups = workers / kLanes;
  const int64_t piece_loads = layout.piece_length / kWidth;
  // Every bound below is the same for the whole warp, so the shuffles in group_sum find all 32 lanes.
  if constexpr (kSpans == 1) {
    constexpr int64_t kStepLoads = kLanes * kLoads;
    const int64_t steps_per_span = piece_loads > 0 ? (piece_loads + kStepLoads - 1) / kStepLoads : 1;
    // The loads of step `step` of the span this lane's group takes in round `round`.
    auto load_step = [&](int64_t round, int64_t step, Load(&loaded)[kLoads]) {
      const int64_t local = round + group;
      int64_t start = 0, count = 0;
      if (local < span_count) {
        const int64_t span = first_span + local;
        const int64_t offset = (span & ((int64_t{1} << layout.log2_pieces) - 1)) * layout.piece_length;
        start = (span >> layout.log2_pieces) * layout.M + offset;
        const int64_t elements = layout.M - offset < layout.piece_length ? layout.M - offset : layout.piece_length;
        count = elements > 0 ? elements / kWidth : 0;
      }
      const Load *data = reinterpret_cast<const Load *>(input + start);
#pragma unroll
      for (int s = 0; s < kLoads; ++s) {
        const int64_t index = step * kStepLoads + s * kLanes + lane_in_group;
        loaded[s] = index < count ? __ldcs(data + index) : Load{};
      }
    };
    int64_t round = 0, step = 0;
    Load loaded[kLoads];
    load_step(round, step, loaded);
    double partial[kLoads] = {};
    while (round < span_count) {
      int64_t next_round = round, next_step = step + 1;
      if (next_step == steps_per_span) {
        next_step = 0;
        next_round += groups;
      }
      Load next[kLoads];
      if (next_round < span_count) {
        load_step(next_round, next_step, next);
      } else {
#pragma unroll
        for (int s = 0; s < kLoads; ++s) next[s] = Load{};
      }
#pragma unroll
      for (int s = 0; s < kLoads; ++s) partial[s] += element_sum(loaded[s]);
      if (next_step == 0) {
#pragma unroll
        for (int width = kLoads / 2; width > 0; width /= 2)
#pragma unroll
          for (int s = 0; s < width; ++s) partial[s] += partial[s + width];
        const double total = group_sum<kLanes>(partial[0]);
        const int64_t local = round + group;
        if (lane_in_group == 0 && local < span_count) sink(local, total);
#pragma unroll
        for (int s = 0; s < kLoads; ++s) partial[s] = 0.0;
      }
#pragma unroll
      for (int s = 0; s < kLoads; ++s) loaded[s] = next[s];
      round = next_round;
      step = next_step;
    }
  } else {
    // One round of loads covers a whole row here (plan_span_read picks these shapes only then).
    const int64_t row_step = groups * (layout.M / kWidth);
    auto load_round = [&](int64_t round, Load(&loaded)[kSpans][kLoads]) {
      const int64_t first_local = round + group;
      const int64_t row = first_local < span_count ? first_span + first_local : 0;
      const Load *data = reinterpret_cast<const Load *>(input + row * layout.M);
#pragma unroll
      for (int r = 0; r < kSpans; ++r) {
        const bool valid = first_local + r * groups < span_count;
#pragma unroll
        for (int s = 0; s < kLoads; ++s) {
          const int index = s * kLanes + lane_in_group;
          loaded[r][s] = valid && index < piece_loads ? __ldcs(data + r * row_step + index) : Load{};
        }
      }
    };
    Load loaded[kSpans][kLoads];
    load_round(0, loaded);
    for (int64_t round = 0; round < span_count; round += kSpans * groups) {
      Load next[kSpans][kLoads];
      load_round(round + kSpans * groups, next);
      double partial[kSpans][kLoads];
#pragma unroll
      for (int r = 0; r < kSpans; ++r)
#pragma unroll
        for (int s = 0; s < kLoads; ++s) partial[r][s] = element_sum(loaded[r][s]);
#pragma unroll
      for (int r = 0; r < kSpans; ++r) {
#pragma unroll
        for (int width = kLoads / 2; width > 0; width /= 2)
#pragma unroll
          for (int s = 0; s < width; ++s) partial[r][s] += partial[r][s + width];
        const double total = group_sum<kLanes>(partial[r][0]);
        const int64_t local = round + group + r * groups;
        if (lane_in_group == 0 && local < span_count) sink(local, total);
      }
#pragma unroll
      for (int r = 0; r < kSpans; ++r)
#pragma unroll
        for (int s = 0; s < kLoads; ++s) loaded[r][s] = next[r][s];
    }
  }
}

// Turns the plan's runtime shape into template constants, one shape at a time.
template <typename T, bool kVector, int kShape, typename Sink>
__device__ __forceinline__ void sum_spans_from_shape(int shape, const T *input, int64_t first_span, int64_t span_count,
                                                     const SpanLayout &layout, int worker, int workers,
                                                     const Sink &sink) {
  if constexpr (kShape < kSpanReadShapeCount) {
    if (shape == kShape) {
      sum_spans_shaped<T, kVector, kSpanReadShapes[kShape].lanes, spans_per_lane(kSpanReadShapes[kShape], kVector),
                       kSpanReadShapes[kShape].loads>(input, first_span, span_count, layout, worker, workers, sink);
      return;
    }
    sum_spans_from_shape<T, kVector, kShape + 1>(shape, input, first_span, span_count, layout, worker, workers, sink);
  }
}

// sum_spans_shaped with the shape and load width of `plan`.
template <typename T, typename Sink>
__device__ __forceinline__ void sum_spans(const SpanReadPlan &plan, const T *input, int64_t first_span,
                                          int64_t span_count, const SpanLayout &layout, int worker, int workers,
                                          const Sink &sink) {
  if (plan.vector)
    sum_spans_from_shape<T, true, 0>(plan.shape, input, first_span, span_count, layout, worker, workers, sink);
  else
    sum_spans_from_shape<T, false, 0>(plan.shape, input, first_span, span_count, layout, worker, workers, sink);
}

}  // namespace fastgemm::detail
