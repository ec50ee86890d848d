// SPDX-License-Identifier: Apache-2.0
// The emulated math mode's stages, timed from a trace of the kernels of one call: CUPTI's kernel activity records
// (libcupti, loaded at run time, so that the bench needs it only when --stages asks), each kernel's time on the
// device summed under the stage its name tells.
#pragma once

#include <functional>
#include <string>

namespace bench {

// The stages of an emulated call, in the order they run.
enum Stage {
  kStageScan,      // the call's operands written for the kept graph, the preview's sample and the scan of both operands
  kStageCodes,     // the codes of both operands and their INT8 product
  kStagePlan,      // the certificate's plan of every element's need, and the choice of the moduli count
  kStageResidues,  // the residues of both operands
  kStageProducts,  // the INT8 products over the moduli (or, where the call ran FP32 throughout, its FP32 product)
  kStageRebuild,   // the reconstruction of C from the products
  kStageRecompute,  // the elements computed in FP32: those no count certifies, and those NaN or Inf reach
  kStageCount
};
const char *stage_name(int stage);

struct StageTimes {
  bool traced = false;
  std::string why_not;  // where traced is false
  double ms[kStageCount] = {};
  int kernels = 0;  // kernels traced
};

// Runs `call` once with kernel tracing on, waits for the device, and returns the time of its kernels by stage.
// Throws what `call` throws; a trace that cannot be taken (no libcupti, an error of it) is told in why_not.
StageTimes trace_stages(const std::function<void()> &call);

}  // namespace bench
