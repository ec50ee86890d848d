// The protocol every rowmean_matvec algorithm follows, the same as SGEMM's: can_implement checks without
// touching the device, run enqueues on the context's stream and never synchronizes.
#pragma once

#include "core/context.hpp"
#include "core/device.hpp"
#include "core/problem.hpp"
#include "core/status.hpp"
#include "fastgemm/fastgemm.h"

namespace fastgemm::detail {

struct RowmeanVariant {
  fg_rowmean_algo_t id;
  const char *name;
  Status (*can_implement)(const RowmeanProblem &, const DeviceInfo &);
  Status (*run)(const RowmeanProblem &, Context &);
};

inline Status any_rowmean_shape(const RowmeanProblem &, const DeviceInfo &) { return Status::success(); }

// The batches per tile the fused algorithm would take for the problem on the device; 0 when a tile's means do not fit
// in shared memory (the fused algorithm then runs the staged one).
int fused_tile_batches(const RowmeanProblem &p, const DeviceInfo &device);

// Whether the pipelined algorithm runs its own kernel for the problem on the device (it runs the fused one otherwise).
bool pipelined_applies(const RowmeanProblem &p, const DeviceInfo &device);

extern const RowmeanVariant single_block_rowmean;
extern const RowmeanVariant block_per_batch_rowmean;
extern const RowmeanVariant coalesced_rowmean;
extern const RowmeanVariant two_pass_rowmean;
extern const RowmeanVariant fused_rowmean;
extern const RowmeanVariant staged_rowmean;
extern const RowmeanVariant pipelined_rowmean;
extern const RowmeanVariant cublas_rowmean;

}  // namespace fastgemm::detail
