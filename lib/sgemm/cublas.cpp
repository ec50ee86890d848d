// cuBLAS with FP32 math, for comparison and as AUTO's choice where it is the fastest known. cuBLAS is
// column-major: the row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so B goes first.
#include "core/check.hpp"
#include "sgemm/variant.hpp"

namespace fastgemm::detail {
namespace {

Status run_cublas(const GemmProblem &p, Context &context) {
  cublasHandle_t handle = nullptr;
  FG_RETURN_IF_ERROR(context.cublas(&handle));
  const cublasOperation_t op_b = p.b.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = p.a.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (p.batch == 1) {
    FG_CUBLAS_CHECK(cublasSgemm_64(handle, op_b, op_a, p.n, p.m, p.k, &p.alpha, p.b.data, p.b.ld, p.a.data, p.a.ld,
                                   &p.beta, p.c, p.ldc));
  } else {
    FG_CUBLAS_CHECK(cublasSgemmStridedBatched_64(handle, op_b, op_a, p.n, p.m, p.k, &p.alpha, p.b.data, p.b.ld,
                                                 p.b.stride, p.a.data, p.a.ld, p.a.stride, &p.beta, p.c, p.ldc,
                                                 p.stride_c, p.batch));
  }
  return Status::success();
}

}  // namespace

extern const SgemmVariant cublas_sgemm = {FG_SGEMM_CUBLAS, "cublas", accepts_any_problem<GemmProblem>,
                                          no_workspace<GemmProblem>, run_cublas};

}  // namespace fastgemm::detail
