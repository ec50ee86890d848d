// SPDX-License-Identifier: Apache-2.0
// What each entry point does once its handle is known and the handle's device is current, up to handing
// lib/ the canonical problem: the arguments checked, the trivial cases told apart, the problem built into a
// plan that the entry point dispatches. The device is reached only through the PointerInspector and the
// small interfaces below, so the same code runs behind the entry points (the library's kernels) and over
// simulated memory without a GPU. Implementations live on the caller's stack: reaching them allocates
// nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "capi/validate.hpp"
#include "core/problem.hpp"
#include "core/status.hpp"
#include "fastgemm/fastgemm.h"

namespace fastgemm::capi {

// The handle's settings an sgemm call runs with.
struct SgemmSettings {
  fg_math_mode_t math = FG_MATH_FP32;
  fg_reproducibility_t reproducibility = FG_REPRODUCIBLE_RUN;
  fg_sgemm_algo_t algo = FG_SGEMM_AUTO;
};

// What an accepted sgemm call leaves to run: nothing, C := beta * C (k == 0 or alpha == 0, and beta != 1), or
// the product with `algo`, the handle's selected algorithm (AUTO is resolved where the product runs: its choice
// may decline the operands there and fall to the next of its preference).
struct SgemmPlan {
  GemmWork work = GemmWork::nothing;
  detail::GemmProblem problem;  // canonical, with the settings' math mode and reproducibility level
  fg_sgemm_algo_t algo = FG_SGEMM_AUTO;
};

// What an accepted rowmean call leaves to run: nothing when L or N is 0, else the problem (L, M, N >= 1) with
// `algo`, the handle's selected algorithm.
struct RowmeanPlan {
  bool empty = true;
  detail::RowmeanProblem problem;
  fg_rowmean_algo_t algo = FG_ROWMEAN_AUTO;
};

// The workspace the handle's selected algorithm needs for a problem; StatusCode::not_supported when that
// algorithm cannot run it.
class WorkspaceSizer {
 public:
  virtual Status sgemm_bytes(const detail::GemmProblem &problem, size_t *bytes) = 0;
  virtual Status rowmean_bytes(const detail::RowmeanProblem &problem, size_t *bytes) = 0;

 protected:
  ~WorkspaceSizer() = default;
};

// Takes an accepted fg_set_workspace argument pair (NULL, 0 included).
class WorkspaceHolder {
 public:
  virtual Status set(void *workspace, size_t bytes) = 0;

 protected:
  ~WorkspaceHolder() = default;
};

// fg_sgemm, fg_sgemm_strided_batched and fg_sgemm_host: checks the arguments, then gives in *plan what is left
// to run with the handle's `settings`. *plan is untouched on failure.
Status sgemm_call(const SgemmArgs &args, const PointerInspector &inspect, const SgemmSettings &settings,
                  SgemmPlan *plan);

// fg_rowmean_matvec: checks the arguments, then gives in *plan what is left to run with the handle's selected
// algorithm `algo`. *plan is untouched on failure.
Status rowmean_call(const RowmeanArgs &args, const PointerInspector &inspect, fg_rowmean_algo_t algo,
                    RowmeanPlan *plan);

// fg_set_workspace: checks the arguments, then hands them to `holder`.
Status set_workspace_call(void *workspace, size_t bytes, const PointerInspector &inspect, WorkspaceHolder &holder);

// fg_sgemm_workspace_size: the most bytes `sizer` asks for over the dense products of that shape (built with
// the handle's `settings`), with the smallest leading dimensions and those rounded up to 4 floats, operands
// 256-byte aligned and 4 bytes past. Enumerators are the caller's ints, as in SgemmArgs.
Status sgemm_workspace_query(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, int64_t batch_count,
                             const SgemmSettings &settings, WorkspaceSizer &sizer, size_t *bytes);

// fg_rowmean_workspace_size: the most bytes `sizer` asks for over arrays aligned to 256 bytes and one
// element past.
Status rowmean_workspace_query(int dtype, int64_t L, int64_t M, int64_t N, WorkspaceSizer &sizer, size_t *bytes);

// The inspector of fg_sgemm_host (whose operands may live anywhere) and of the size queries (whose pointers
// are made up): every pointer passes, as device memory of no known extent.
Status any_pointer_is_device_memory(const void *pointer, PointerInfo *info);

}  // namespace fastgemm::capi
