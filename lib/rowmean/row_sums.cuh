// Row sums at the speed of the read, shared by the fused and staged algorithms.
//
// The input is cut into spans: a span is a row of M values, or one of 2^k pieces of a row when a few long rows must
// still keep the whole GPU busy. A group of G lanes (G a power of two matched to the span's length) reads a span
// together, consecutive lanes on consecutive 16-byte vectors when the pointer and M allow it and on consecutive
// elements otherwise, so that every warp load covers one contiguous stretch; short spans are taken several at a time,
// so that each lane always keeps 8 or 16 loads in flight. The loads stream past the caches (evict-first), leaving
// L1 and L2 to the matrix. Sums are doubles, several per lane, combined in a fixed tree, so the result is the same
// bit for bit from run to run.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/launch.cuh"
#include "core/problem.hpp"
#include "rowmean/reduce.cuh"

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
inline constexpr SpanReadShape kSpanReadShapes[] = {{1, 16, 1}, {2, 8, 1},  {4, 8, 1},  {8, 8, 1}, {16, 8, 1},
                                                    {32, 8, 1}, {32, 4, 2}, {32, 2, 4}, {32, 1, 8}};
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
__device__ __forceinline__ double element_sum(float4 value) {
  return (static_cast<double>(value.x) + static_cast<double>(value.y)) +
         (static_cast<double>(value.z) + static_cast<double>(value.w));
}
__device__ __forceinline__ double element_sum(double2 value) { return value.x + value.y; }

// Calls sink(s, sum of span first_span + s) once for every s in [0, span_count), from one lane of the group that read
// it. worker is this thread's index among the `workers` threads sharing the spans; workers is a multiple of 32 and
// each warp's 32 threads are consecutive workers, all calling together. Shapes of several spans per lane take only
// whole rows that one round of loads covers (plan_span_read picks them only then), which keeps their addressing to
// one base and a stride and needs no running sums.
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
  for (int64_t round = 0; round < span_count; round += kSpans * groups) {
    const int64_t first_local = round + group;
    double partial[kSpans][kLoads] = {};
    if constexpr (kSpans == 1) {
      int64_t start = 0, count = 0;
      if (first_local < span_count) {
        const int64_t span = first_span + first_local;
        const int64_t offset = (span & ((int64_t{1} << layout.log2_pieces) - 1)) * layout.piece_length;
        start = (span >> layout.log2_pieces) * layout.M + offset;
        const int64_t elements = layout.M - offset < layout.piece_length ? layout.M - offset : layout.piece_length;
        count = elements > 0 ? elements / kWidth : 0;
      }
      const Load *data = reinterpret_cast<const Load *>(input + start);
      for (int64_t first_load = 0; first_load < piece_loads; first_load += kLanes * kLoads) {
        Load loaded[kLoads];
#pragma unroll
        for (int s = 0; s < kLoads; ++s) {
          const int64_t index = first_load + s * kLanes + lane_in_group;
          loaded[s] = index < count ? __ldcs(data + index) : Load{};
        }
#pragma unroll
        for (int s = 0; s < kLoads; ++s) partial[0][s] += element_sum(loaded[s]);
      }
    } else {
      // One round of loads covers a whole row here (plan_span_read picks these shapes only then).
      const int64_t row = first_local < span_count ? first_span + first_local : 0;
      const Load *data = reinterpret_cast<const Load *>(input + row * layout.M);
      const int64_t row_step = groups * (layout.M / kWidth);
      Load loaded[kSpans][kLoads];
#pragma unroll
      for (int r = 0; r < kSpans; ++r) {
        const bool valid = first_local + r * groups < span_count;
#pragma unroll
        for (int s = 0; s < kLoads; ++s) {
          const int index = s * kLanes + lane_in_group;
          loaded[r][s] = valid && index < piece_loads ? __ldcs(data + r * row_step + index) : Load{};
        }
      }
#pragma unroll
      for (int r = 0; r < kSpans; ++r)
#pragma unroll
        for (int s = 0; s < kLoads; ++s) partial[r][s] = element_sum(loaded[r][s]);
    }
#pragma unroll
    for (int r = 0; r < kSpans; ++r) {
#pragma unroll
      for (int width = kLoads / 2; width > 0; width /= 2)
#pragma unroll
        for (int s = 0; s < width; ++s) partial[r][s] += partial[r][s + width];
      const double total = group_sum<kLanes>(partial[r][0]);
      const int64_t local = first_local + r * groups;
      if (lane_in_group == 0 && local < span_count) sink(local, total);
    }
  }
}

// Turns the plan's runtime shape into template constants, one shape at a time.
template <typename T, bool kVector, int kShape, typename Sink>
__device__ __forceinline__ void sum_spans_from_shape(int shape, const T *input, int64_t first_span,
                                                     int64_t span_count, const SpanLayout &layout, int worker,
                                                     int workers, const Sink &sink) {
  if constexpr (kShape < kSpanReadShapeCount) {
    if (shape == kShape) {
      sum_spans_shaped<T, kVector, kSpanReadShapes[kShape].lanes, spans_per_lane(kSpanReadShapes[kShape], kVector),
                       kSpanReadShapes[kShape].loads>(input, first_span, span_count, layout, worker, workers, sink);
      return;
    }
    sum_spans_from_shape<T, kVector, kShape + 1>(shape, input, first_span, span_count, layout, worker, workers,
                                                 sink);
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
