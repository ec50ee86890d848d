// The protocol every SGEMM algorithm follows (after CUTLASS's device-level operators): can_implement says,
// without touching the device, whether the variant can run a problem; run enqueues it on the context's
// stream and never synchronizes.
#pragma once

#include <cstddef>

#include "core/context.hpp"
#include "core/device.hpp"
#include "core/problem.hpp"
#include "core/status.hpp"
#include "fastgemm/fastgemm.h"

namespace fastgemm::detail {

struct SgemmVariant {
  fg_sgemm_algo_t id;
  const char *name;
  // Success, or not_supported with a message naming the unmet condition.
  Status (*can_implement)(const GemmProblem &, const DeviceInfo &);
  Status (*run)(const GemmProblem &, Context &);
};

// Every variant accepts any problem: nothing to check.
inline Status always_implementable(const GemmProblem &, const DeviceInfo &) { return Status::success(); }

// The variants, each defined in its own file.
extern const SgemmVariant naive_sgemm;
extern const SgemmVariant smem_sgemm;
extern const SgemmVariant smem_vec4_sgemm;
extern const SgemmVariant bank_free_sgemm;
extern const SgemmVariant double_buffer_sgemm;
extern const SgemmVariant pipelined_sgemm;
extern const SgemmVariant small_tile_sgemm;
extern const SgemmVariant split_k_sgemm;
extern const SgemmVariant cublas_sgemm;

}  // namespace fastgemm::detail
