// SPDX-License-Identifier: Apache-2.0
// Argument checks of the C ABI, as pure functions: everything they know about the device comes through a
// PointerInspector, so every rule of the contract is testable without a GPU. On success they also give
// the canonical problem lib/ runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "core/problem.hpp"
#include "core/status.hpp"
#include "fastgemm/fastgemm.h"

namespace fastgemm::capi {

using detail::Status;

enum class PointerKind {
  device_accessible,  // device or managed memory of the handle's device
  pinned_host,        // host memory the device can address (cudaMallocHost, cudaHostRegister)
  pageable_host,      // ordinary host memory the device cannot address
  other_device,       // device memory of another device
  unknown,            // the driver could not say what the pointer is
};

// What the driver says of a non-NULL pointer: its kind and, where it knows it, the allocation holding it
// (range_bytes == 0: unknown), so that an operand running past the end of its allocation is refused.
struct PointerInfo {
  PointerKind kind = PointerKind::unknown;
  uintptr_t range_begin = 0;
  size_t range_bytes = 0;
};

// Inspects a non-NULL pointer; fails only when the driver itself fails (a device lost to an earlier
// fault, say), which is then the call's error.
using PointerInspector = std::function<Status(const void *, PointerInfo *)>;

// FG_STATUS_INVALID_VALUE for an output or input argument that is NULL: "<name> is NULL".
Status null_argument(const char *name);

// Enumerators are held as the ints a C caller passed, since any value may arrive through the ABI.
// Members are set by name; those of the batched entry point keep their defaults for the others.
struct SgemmArgs {
  int layout = 0;
  int transa = 0, transb = 0;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 0.0f;
  const float *A = nullptr;
  int64_t lda = 0, stride_a = 0;
  const float *B = nullptr;
  int64_t ldb = 0, stride_b = 0;
  float beta = 0.0f;
  float *C = nullptr;
  int64_t ldc = 0, stride_c = 0;
  int64_t batch_count = 1;
  bool batched = false;  // fg_sgemm_strided_batched: strides and batch_count are the caller's and are checked
};

// What is left to do once the arguments are known to be good.
enum class GemmWork {
  nothing,  // m, n or batch_count is 0, or only C := 1 * C
  scale_c,  // k == 0 or alpha == 0: C := beta * C
  product,  // the full product
};

// Checks every rule of fg_sgemm's contract (include/fastgemm/fastgemm.h), and that C shares no element with A or B. On
// success *problem holds the canonical row-major problem (the layout resolved by swapping A and B) and *work what is
// left to do.
Status validate_sgemm(const SgemmArgs &args, const PointerInspector &inspect, detail::GemmProblem *problem,
                      GemmWork *work);

struct RowmeanArgs {
  int dtype = 0;
  const void *input = nullptr, *matrix = nullptr;
  void *output = nullptr;
  int64_t L = 0, M = 0, N = 0;
};

// Checks every rule of fg_rowmean_matvec's contract (the header), pointers aligned to their element included. *empty is
// set when L or N is 0 (nothing to do).
Status validate_rowmean(const RowmeanArgs &args, const PointerInspector &inspect, detail::RowmeanProblem *problem,
                        bool *empty);

// Checks fg_set_workspace's arguments: NULL with 0 bytes (back to a handle-owned workspace), or memory of
// the handle's device (not host memory, pinned or not, whatever `bytes` is) aligned to 256 bytes (as
// cuBLAS's workspace must be) and holding `bytes`.
Status validate_workspace(const void *workspace, size_t bytes, const PointerInspector &inspect);

// Whether `count` matrices of `lines` runs of `length` elements, `ld` apart, placed `stride` apart, write
// any element twice (all sizes >= 1, length <= ld). Exact; gives up (answers true) only when proving it
// would take more than about 2^20 steps.
bool batches_overlap(int64_t lines, int64_t length, int64_t ld, int64_t stride, int64_t count);

}  // namespace fastgemm::capi
