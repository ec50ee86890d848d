// SPDX-License-Identifier: Apache-2.0
// The one place where CUDA runtime and cuBLAS results become Status values. Every call into either
// library goes through FG_CUDA_CHECK / FG_CUBLAS_CHECK (or cuda_status / cublas_status directly), so a
// failure always carries the call's name, the error's name and its description.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "core/status.hpp"

namespace fastgemm::detail {

// `call` is the call's source text or name; only the part before the first '(' is kept.
// cudaErrorMemoryAllocation maps to alloc_failed, a missing device or driver to no_device.
Status cuda_status(cudaError_t error, const char *call);
Status cublas_status(cublasStatus_t status, const char *call);

}  // namespace fastgemm::detail

#define FG_CUDA_CHECK(call) FG_RETURN_IF_ERROR(::fastgemm::detail::cuda_status((call), #call))
#define FG_CUBLAS_CHECK(call) FG_RETURN_IF_ERROR(::fastgemm::detail::cublas_status((call), #call))
