// SPDX-License-Identifier: Apache-2.0
// What an emulating SGEMM variant tells its caller about the product it ran (fg_get_last_sgemm_emulation), and the
// slot its kernels fill when the choice is made on the device.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "fastgemm/fastgemm.h"

namespace fastgemm::detail {

// What an emulating variant's kernels chose on the device, left for the host in mapped pinned memory: the moduli
// count (0: FP32 throughout), and the elements recomputed in FP32.
struct DeviceChoice {
  int32_t moduli = 0;
  int32_t reserved = 0;
  int64_t fp32_elements = 0;
};

// What the last emulated product did. A call that chose on the device without waiting for it leaves `pending`, its
// DeviceChoice, valid once `done` has completed, and the algorithm it ran where that choice is FP32 throughout
// (`fallback`): the reports read them then.
struct EmulationReport {
  int moduli = 0;
  int64_t fp32_elements = 0;
  const DeviceChoice *pending = nullptr;
  cudaEvent_t done = nullptr;
  fg_sgemm_algo_t fallback = FG_SGEMM_AUTO;
};

}  // namespace fastgemm::detail
