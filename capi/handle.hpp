// SPDX-License-Identifier: Apache-2.0
// What an fg_handle_t points to: the handle's resources (lib/'s Context: device, stream, workspace, cuBLAS),
// the settings the fg_set_* calls chose, what its last calls ran, and fg_sgemm_host's engine.
#pragma once

#include <memory>

#include "core/context.hpp"
#include "core/variant.hpp"
#include "fastgemm/fastgemm.h"
#include "host/host_gemm.hpp"
#include "sgemm/emulation_report.hpp"

namespace fastgemm::capi {

// The handle's settings: fg_create's defaults (and environment), then the fg_set_* calls'.
struct HandleSettings {
  fg_sgemm_algo_t sgemm_algo = FG_SGEMM_AUTO;
  fg_rowmean_algo_t rowmean_algo = FG_ROWMEAN_AUTO;
  fg_math_mode_t math_mode = FG_MATH_FP32;
  fg_reproducibility_t reproducibility = FG_REPRODUCIBLE_RUN;
};

// What the handle's last calls ran, the one place the fg_get_last_* queries read.
struct LastCalls {
  fg_sgemm_algo_t sgemm_algo = FG_SGEMM_AUTO;  // the last successful fg_sgemm* call's
  // Where that call chose on the device: its choice, which tells sgemm_algo's final value (the emulation, or its
  // fallback) once the device has made it.
  detail::EmulationReport sgemm_choice;
  // The last fg_sgemm* call's emulated product: zeros unless one ran (and after a failure, or an fg_sgemm_host
  // call, whose tiles are not the call's report); pending where the device chooses.
  detail::EmulationReport emulation;
  fg_rowmean_algo_t rowmean_algo = FG_ROWMEAN_AUTO;  // the last successful fg_rowmean_matvec call's
};

}  // namespace fastgemm::capi

struct fg_context {
  std::unique_ptr<fastgemm::detail::Context> context;
  fastgemm::capi::HandleSettings settings;
  fastgemm::capi::LastCalls last;
  std::unique_ptr<fastgemm::detail::HostGemm<float>> host;  // fg_sgemm_host's engine, made on first use
};
