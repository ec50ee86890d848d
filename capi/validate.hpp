// Argument checks of the C ABI, as pure functions: everything they know about the device comes through a
// PointerInspector, so every rule of the contract is testable without a GPU. On success they also give
// the canonical problem lib/ runs.
#pragma once

#include <cstdint>
#include <functional>

#include "core/problem.hpp"
#include "core/status.hpp"
#include "fastgemm/fastgemm.h"

namespace fastgemm::capi {

using detail::Status;

enum class PointerKind {
  device_accessible,  // device, managed, or pinned host memory of the handle's device
  pageable_host,      // ordinary host memory the device cannot address
  other_device,       // device memory of another device
  unknown,            // the driver could not say what the pointer is
};

// Classifies a non-NULL pointer; fails only when the driver itself fails (a device lost to an earlier
// fault, say), which is then the call's error.
using PointerInspector = std::function<Status(const void *, PointerKind *)>;

// Enumerators are held as the ints a C caller passed, since any value may arrive through the ABI.
struct SgemmArgs {
  int layout;
  int transa, transb;
  int64_t m, n, k;
  float alpha;
  const float *A;
  int64_t lda, stride_a;
  const float *B;
  int64_t ldb, stride_b;
  float beta;
  float *C;
  int64_t ldc, stride_c;
  int64_t batch_count;
  bool batched;  // fg_sgemm_strided_batched: strides and batch_count are the caller's and are checked
};

// What is left to do once the arguments are known to be good.
enum class GemmWork {
  nothing,  // m, n or batch_count is 0, or only C := 1 * C
  scale_c,  // k == 0 or alpha == 0: C := beta * C
  product,  // the full product
};

// Checks every rule of API.md's SGEMM section. On success *problem holds the canonical row-major problem
// (the layout resolved by swapping A and B) and *work what is left to do.
Status validate_sgemm(const SgemmArgs &args, const PointerInspector &inspect, detail::GemmProblem *problem,
                      GemmWork *work);

struct RowmeanArgs {
  int dtype;
  const void *input, *matrix;
  void *output;
  int64_t L, M, N;
};

// Checks every rule of API.md's rowmean section. *empty is set when L or N is 0 (nothing to do).
Status validate_rowmean(const RowmeanArgs &args, const PointerInspector &inspect, detail::RowmeanProblem *problem,
                        bool *empty);

}  // namespace fastgemm::capi
