// SPDX-License-Identifier: Apache-2.0
// Staging: where an operand lives as seen from a worker's device, the regions of it that a step moves (panels of A
// and B, tiles of C), and the 2-D copies that move them.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "core/check.hpp"
#include "core/context.hpp"
#include "core/device.hpp"
#include "core/problem.hpp"

namespace fastgemm::detail {

// Where an operand lives, as seen from one worker's device.
enum class Residence {
  in_place,  // device memory of the worker's device: read and written where it is
  direct,    // pinned host, managed, or another device's memory: one asynchronous 2D copy reaches it
  pageable,  // ordinary host memory: packed through a pinned ring by the host
};

struct PointerPlace {
  cudaMemoryType type = cudaMemoryTypeUnregistered;
  int device = -1;
};

// Through the handle's one pointer query (core/device.hpp): the driver's answer, cached per allocation, with the
// runtime's pending error left as the caller had it (cudaPointerGetAttributes would set it for a pointer the driver
// has never seen, and clearing that would clear the caller's too).
inline Status locate(Context &context, const void *pointer, PointerPlace *place) {
  PointerAttributes attributes;
  FG_RETURN_IF_ERROR(context.query_pointer(pointer, &attributes));
  switch (attributes.memory) {
    case PointerAttributes::Memory::unknown: *place = PointerPlace{}; break;
    case PointerAttributes::Memory::device: *place = PointerPlace{cudaMemoryTypeDevice, attributes.device}; break;
    case PointerAttributes::Memory::host: *place = PointerPlace{cudaMemoryTypeHost, attributes.device}; break;
    case PointerAttributes::Memory::managed: *place = PointerPlace{cudaMemoryTypeManaged, attributes.device}; break;
  }
  return Status::success();
}

// With several workers, device memory is staged by its own device too, so that every tile's product reads
// the same dense panels whichever device computes it.
inline Residence residence_on(const PointerPlace &place, int device, bool single_worker) {
  switch (place.type) {
    case cudaMemoryTypeDevice: return place.device == device && single_worker ? Residence::in_place : Residence::direct;
    case cudaMemoryTypeHost:
    case cudaMemoryTypeManaged: return Residence::direct;
    case cudaMemoryTypeUnregistered: break;
  }
  return Residence::pageable;
}

// `lines` runs of `length` elements (float or double, the engine's element), `ld` apart.
template <typename T>
struct Region {
  const T *data;
  int64_t ld, lines, length;
};

// Rows [row, row + rows) and k [k0, k0 + depth) of op(A).
template <typename T>
Region<T> a_region(const BasicGemmOperand<T> &a, int64_t row, int64_t rows, int64_t k0, int64_t depth) {
  if (a.transposed) return Region<T>{a.data + k0 * a.ld + row, a.ld, depth, rows};
  return Region<T>{a.data + row * a.ld + k0, a.ld, rows, depth};
}

// k [k0, k0 + depth) and columns [col, col + cols) of op(B).
template <typename T>
Region<T> b_region(const BasicGemmOperand<T> &b, int64_t k0, int64_t depth, int64_t col, int64_t cols) {
  if (b.transposed) return Region<T>{b.data + col * b.ld + k0, b.ld, cols, depth};
  return Region<T>{b.data + k0 * b.ld + col, b.ld, depth, cols};
}

// The device problem of one step whose tile of C (rows x cols) lies at `c`, `ldc` apart: alpha, beta and the
// settings of `p`; the caller sets k and the operands' pieces (staged_operand for those staged on the device).
template <typename T>
BasicGemmProblem<T> step_problem(const BasicGemmProblem<T> &p, int64_t rows, int64_t cols, T *c, int64_t ldc) {
  BasicGemmProblem<T> part;
  part.m = rows;
  part.n = cols;
  part.alpha = p.alpha;
  part.beta = p.beta;
  part.math = p.math;
  part.reproducibility = p.reproducibility;
  part.c = c;
  part.ldc = ldc;
  return part;
}

// A region of an operand staged dense on the device at `data`: its lines one after the other, the leading
// dimension the lines' length.
template <typename T>
BasicGemmOperand<T> staged_operand(const T *data, const Region<T> &region, bool transposed) {
  return BasicGemmOperand<T>{data, region.length, 0, transposed};
}

// cudaMemcpy2DAsync refuses pitches past INT_MAX bytes: such lines go one copy each.
template <typename T>
Status copy_2d_async(T *dst, int64_t dst_ld, const T *src, int64_t src_ld, int64_t lines, int64_t length,
                     cudaStream_t stream) {
  const size_t width = static_cast<size_t>(length) * sizeof(T);
  const int64_t widest_pitch = std::max(dst_ld, src_ld) * static_cast<int64_t>(sizeof(T));
  if (widest_pitch <= INT_MAX) {
    FG_CUDA_CHECK(cudaMemcpy2DAsync(dst, static_cast<size_t>(dst_ld) * sizeof(T), src,
                                    static_cast<size_t>(src_ld) * sizeof(T), width, static_cast<size_t>(lines),
                                    cudaMemcpyDefault, stream));
    return Status::success();
  }
  for (int64_t line = 0; line < lines; ++line)
    FG_CUDA_CHECK(cudaMemcpyAsync(dst + line * dst_ld, src + line * src_ld, width, cudaMemcpyDefault, stream));
  return Status::success();
}

}  // namespace fastgemm::detail
