// SPDX-License-Identifier: Apache-2.0
// AUTO's choice as the registries make it for a call (select_*_variant with the AUTO id): the algorithm that runs
// the problem within `workspace_limit` bytes of a caller's workspace, or the AUTO id when none can.
#pragma once

#include <cstddef>
#include <cstdint>

#include "rowmean/registry.hpp"
#include "sgemm/registry.hpp"

namespace fgtest {

inline fg_sgemm_algo_t auto_sgemm_choice(const fastgemm::detail::GemmProblem &problem,
                                         const fastgemm::detail::DeviceInfo &device,
                                         size_t workspace_limit = SIZE_MAX) {
  fastgemm::detail::AutoLimits limits;
  limits.workspace_limit = workspace_limit;
  fastgemm::detail::SgemmSelection selection;
  if (!fastgemm::detail::select_sgemm_variant(problem, device, FG_SGEMM_AUTO, limits, &selection).ok())
    return FG_SGEMM_AUTO;
  return selection.variant->id;
}

inline fg_rowmean_algo_t auto_rowmean_choice(const fastgemm::detail::RowmeanProblem &problem,
                                             const fastgemm::detail::DeviceInfo &device,
                                             size_t workspace_limit = SIZE_MAX) {
  fastgemm::detail::AutoLimits limits;
  limits.workspace_limit = workspace_limit;
  fastgemm::detail::RowmeanSelection selection;
  if (!fastgemm::detail::select_rowmean_variant(problem, device, FG_ROWMEAN_AUTO, limits, &selection).ok())
    return FG_ROWMEAN_AUTO;
  return selection.variant->id;
}

}  // namespace fgtest
