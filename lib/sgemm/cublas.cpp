// SPDX-License-Identifier: Apache-2.0
// cuBLAS with FP32 math, for comparison and as AUTO's choice where it is the fastest known. cuBLAS is
// column-major: the row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so B goes first.
// Problems whose sizes fit an int go through the classic 32-bit entry points, as a program that calls
// cuBLAS directly does: the same kernels, bit for bit, and the 64-bit ones were measured choosing slower
// kernels on some shapes (bench/NOTES-sgemm-fast.md). Larger ones take the 64-bit entry points.
#include "sgemm/cublas.hpp"

#include <climits>

#include "core/check.hpp"
#include "sgemm/variant.hpp"

namespace fastgemm::detail {
namespace {

bool fits_int(const GemmProblem &p) {
  for (int64_t value : {p.m, p.n, p.k, p.batch, p.a.ld, p.b.ld, p.ldc})
    if (value > INT_MAX) return false;
  return true;
}

Status run_sgemm(const GemmProblem &p, cublasHandle_t handle, const float *alpha, const float *beta);

// Where the problem has LiveOperands (a product captured into a kept graph), cuBLAS reads alpha and beta there when it
// runs (its device pointer mode, the handle's host mode restored after), and the addresses too where asked
// (`live_addresses`, cublas.hpp), so that the product captured once serves every operand a launch publishes.
Status run_cublas(const GemmProblem &p, const RunArgs &args) {
  if (p.live == nullptr) return run_sgemm(p, args.cublas, &p.alpha, &p.beta);
  FG_CUBLAS_CHECK(cublasSetPointerMode(args.cublas, CUBLAS_POINTER_MODE_DEVICE));
  Status ran = Status::success();
  if (p.live_addresses && cublas_may_read_live_addresses(p)) {
    // cuBLAS is column-major: B's array goes first (as in run_sgemm). Each field is an array of one pointer.
    const cublasStatus_t status =
        cublasSgemmBatched(args.cublas, p.b.transposed ? CUBLAS_OP_T : CUBLAS_OP_N,
                           p.a.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(p.n), static_cast<int>(p.m),
                           static_cast<int>(p.k), &p.live->alpha, &p.live->b, static_cast<int>(p.b.ld), &p.live->a,
                           static_cast<int>(p.a.ld), &p.live->beta, &p.live->c, static_cast<int>(p.ldc), 1);
    ran = cublas_status(status, "cublasSgemmBatched");
  } else {
    ran = run_sgemm(p, args.cublas, &p.live->alpha, &p.live->beta);
  }
  const cublasStatus_t restored = cublasSetPointerMode(args.cublas, CUBLAS_POINTER_MODE_HOST);
  FG_RETURN_IF_ERROR(ran);
  FG_CUBLAS_CHECK(restored);
  return Status::success();
}

Status run_sgemm(const GemmProblem &p, cublasHandle_t handle, const float *alpha, const float *beta) {
  const cublasOperation_t op_b = p.b.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = p.a.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (fits_int(p)) {
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
    const int lda = static_cast<int>(p.a.ld), ldb = static_cast<int>(p.b.ld), ldc = static_cast<int>(p.ldc);
    if (p.batch == 1) {
      FG_CUBLAS_CHECK(cublasSgemm(handle, op_b, op_a, n, m, k, alpha, p.b.data, ldb, p.a.data, lda, beta, p.c, ldc));
    } else {
      FG_CUBLAS_CHECK(cublasSgemmStridedBatched(handle, op_b, op_a, n, m, k, alpha, p.b.data, ldb, p.b.stride, p.a.data,
                                                lda, p.a.stride, beta, p.c, ldc, p.stride_c,
                                                static_cast<int>(p.batch)));
    }
    return Status::success();
  }
  if (p.batch == 1) {
    FG_CUBLAS_CHECK(
        cublasSgemm_64(handle, op_b, op_a, p.n, p.m, p.k, alpha, p.b.data, p.b.ld, p.a.data, p.a.ld, beta, p.c, p.ldc));
  } else {
    FG_CUBLAS_CHECK(cublasSgemmStridedBatched_64(handle, op_b, op_a, p.n, p.m, p.k, alpha, p.b.data, p.b.ld, p.b.stride,
                                                 p.a.data, p.a.ld, p.a.stride, beta, p.c, p.ldc, p.stride_c, p.batch));
  }
  return Status::success();
}

}  // namespace

bool cublas_may_read_live_addresses(const GemmProblem &p) { return p.batch == 1 && fits_int(p); }

extern const SgemmVariant cublas_sgemm = {
    FG_SGEMM_CUBLAS, "cublas", accepts_any_problem<GemmProblem>, no_workspace<GemmProblem>,
    run_cublas,      0,        always_uses_cublas<GemmProblem>};

}  // namespace fastgemm::detail
