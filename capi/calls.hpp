// SPDX-License-Identifier: Apache-2.0
// What each entry point does once its handle is known and the handle's device is current, up to handing
// lib/ the canonical problem: the arguments checked, the trivial cases told apart, the problem built. The
// device is reached only through the PointerInspector and the small interfaces below, so the same code
// runs behind the entry points (the library's kernels) and over simulated memory without a GPU.
// Implementations live on the caller's stack: reaching them allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "capi/validate.hpp"
#include "core/problem.hpp"
#include "core/status.hpp"
#include "fastgemm/fastgemm.h"

namespace fastgemm::capi {

// Runs what is left of an accepted sgemm problem.
class SgemmRunner {
 public:
  // C := beta * C: k == 0 or alpha == 0, and beta != 1.
  virtual Status scale_c(const detail::GemmProblem &problem) = 0;
  // The full product; *ran is the algorithm that ran it.
  virtual Status product(const detail::GemmProblem &problem, fg_sgemm_algo_t *ran) = 0;

 protected:
  ~SgemmRunner() = default;
};

// Runs an accepted rowmean problem (L, M, N >= 1); *ran is the algorithm that ran it.
class RowmeanRunner {
 public:
  virtual Status run(const detail::RowmeanProblem &problem, fg_rowmean_algo_t *ran) = 0;

 protected:
  ~RowmeanRunner() = default;
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

// fg_sgemm, fg_sgemm_strided_batched and fg_sgemm_host: checks the arguments, then has `runner` do what is
// left (nothing, C := beta * C, or the product in math mode `math`). *ran: the product's algorithm,
// FG_SGEMM_AUTO when no product ran.
Status sgemm_call(const SgemmArgs &args, const PointerInspector &inspect, fg_math_mode_t math, SgemmRunner &runner,
                  fg_sgemm_algo_t *ran);

// fg_rowmean_matvec: checks the arguments, then has `runner` run the problem unless L or N is 0. *ran: the
// algorithm that ran, FG_ROWMEAN_AUTO when none did.
Status rowmean_call(const RowmeanArgs &args, const PointerInspector &inspect, RowmeanRunner &runner,
                    fg_rowmean_algo_t *ran);

// fg_set_workspace: checks the arguments, then hands them to `holder`.
Status set_workspace_call(void *workspace, size_t bytes, const PointerInspector &inspect, WorkspaceHolder &holder);

// fg_sgemm_workspace_size: the most bytes `sizer` asks for over the dense products of that shape, with the
// smallest leading dimensions and those rounded up to 4 floats, operands 256-byte aligned and 4 bytes past.
// Enumerators are the caller's ints, as in SgemmArgs.
Status sgemm_workspace_query(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, int64_t batch_count,
                             fg_math_mode_t math, WorkspaceSizer &sizer, size_t *bytes);

// fg_rowmean_workspace_size: the most bytes `sizer` asks for over arrays aligned to 256 bytes and one
// element past.
Status rowmean_workspace_query(int dtype, int64_t L, int64_t M, int64_t N, WorkspaceSizer &sizer, size_t *bytes);

// The inspector of fg_sgemm_host (whose operands may live anywhere) and of the size queries (whose pointers
// are made up): every pointer passes, as device memory of no known extent.
Status any_pointer_is_device_memory(const void *pointer, PointerInfo *info);

}  // namespace fastgemm::capi
