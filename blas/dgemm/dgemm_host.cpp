// SPDX-License-Identifier: Apache-2.0
// libfastgemm_blas_dgemm.so's entry points (dgemm_host.h): a handle holds lib/'s Context (device, stream, cuBLAS)
// and the host engine's FP64 instance, HostGemm<double>, whose tiles are FP64 products on the tensor cores of devices
// that have FP64 ones, the H100's among them: at FG_REPRODUCIBLE_SHAPE the project's own (shape_reproducible.hpp,
// on devices of compute capability 8.0 and later), otherwise cuBLAS's DGEMM (never cuBLAS's FP64 emulation, which
// only CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH turns on). The engine overlaps the host's packing into pinned chunks, the
// uploads, the products and the downloads as it does for fg_sgemm_host (lib/host/host_gemm.cpp).
//
// Reproducibility. The engine's tile grid is a function of the problem and of the devices' total memory; each
// tile's product is one call on dense staged operands of the tile's shape, whichever device computes it (cuBLAS on a
// handle with the same workspace size); and a tile's chunks of k are summed into C in k order. So C is bitwise the
// same run after run, whatever the schedule of the tiles and the number of devices, as long as they are of one
// model (cuBLAS's own promise is per architecture and SM count). FG_REPRODUCIBLE_SHAPE keeps k in one chunk and
// computes each tile with the project's own tiles, whose every element is the same sequence of FP64 mma steps over
// all of k whatever the tile's shape: an element of C then does not depend on the product's shape, its transposes or
// its layout either (cuBLAS, which the other levels use, picks its DGEMM kernel by the shape). Devices before
// compute capability 8.0 keep cuBLAS at every level.
#include "blas/dgemm/dgemm_host.h"

#include <climits>
#include <memory>
#include <new>
#include <string>

#include <cublas_v2.h>

#include "blas/dgemm/device_level3.hpp"
#include "blas/dgemm/dgemm_problem.hpp"
#include "blas/dgemm/shape_reproducible.hpp"
#include "capi/statuses.hpp"
#include "capi/thread_text.hpp"
#include "core/check.hpp"
#include "core/context.hpp"
#include "core/device.hpp"
#include "host/host_gemm.hpp"

#define FASTGEMM_BLAS_DGEMM_EXPORT extern "C" __attribute__((visibility("default")))

using fastgemm::blas_dgemm::DgemmCall;
using fastgemm::blas_dgemm::DgemmWork;
using fastgemm::blas_dgemm::shape_reproducible_dgemm;
using fastgemm::blas_dgemm::shape_reproducible_supported;
using fastgemm::detail::BasicGemmProblem;
using fastgemm::detail::Context;
using fastgemm::detail::DeviceGuard;
using fastgemm::detail::HostGemm;
using fastgemm::detail::HostTileOps;
using fastgemm::detail::Status;
using fastgemm::detail::StatusCode;

struct fastgemm_blas_dgemm_handle {
  std::unique_ptr<Context> context;
  std::unique_ptr<HostGemm<double>> engine;  // destroyed before the context: its first worker computes in it
  std::unique_ptr<fastgemm::blas_dgemm::Level3Resources> level3;  // made on the first trsm, trmm or symm
  fg_reproducibility_t reproducibility = FG_REPRODUCIBLE_RUN;
};

namespace {

thread_local bool t_last_message_gone = false;
thread_local fastgemm::capi::ThreadText t_last_message(&t_last_message_gone);  // capi/thread_text.hpp says why

fg_status_t record(const char *function, const Status &status) noexcept {
  if (status.ok()) return FG_STATUS_SUCCESS;
  if (std::string *message = fastgemm::capi::ThreadText::of(t_last_message, t_last_message_gone))
    fastgemm::capi::record_message(message, function, status.message);
  return fastgemm::capi::public_status(status.code);
}

// Runs `body()`, which returns a Status; exceptions become statuses too, and nothing escapes.
template <typename Body>
fg_status_t guarded(const char *function, Body &&body) noexcept {
  try {
    return record(function, body());
  } catch (const std::bad_alloc &) {
    return record(function, Status::failure(StatusCode::alloc_failed, "host memory could not be allocated"));
  } catch (...) {
    return record(function, Status::failure(StatusCode::internal_error, "unexpected internal exception"));
  }
}

// Runs `body(*handle)` with the handle's device current.
template <typename Body>
fg_status_t with_handle(const char *function, fastgemm_blas_dgemm_t handle, Body &&body) noexcept {
  return guarded(function, [&]() -> Status {
    if (handle == nullptr) return Status::failure(StatusCode::invalid_handle, "handle is NULL");
    DeviceGuard guard;
    FG_RETURN_IF_ERROR(guard.enter(handle->context->device()));
    return body(*handle);
  });
}

bool fits_int(const BasicGemmProblem<double> &p) {
  for (int64_t value : {p.m, p.n, p.k, p.a.ld, p.b.ld, p.ldc})
    if (value > INT_MAX) return false;
  return true;
}

// One step's product on the context's stream. At FG_REPRODUCIBLE_SHAPE, on devices that have the FP64 mma, the
// project's own tiles (shape_reproducible.hpp), whose elements do not depend on the product's shape. Otherwise
// cuBLAS, which is column-major: the row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so B goes
// first (as in lib/sgemm/cublas.cpp). Sizes that fit an int take the classic entry point, as a program that calls
// cuBLAS does; larger ones the 64-bit one.
Status dgemm_step(const BasicGemmProblem<double> &p, Context &context, fg_sgemm_algo_t,
                  fastgemm::detail::EmulationReport *, fg_sgemm_algo_t *) {
  if (p.reproducibility == FG_REPRODUCIBLE_SHAPE) {
    if (shape_reproducible_supported(context.device().cc_major)) return shape_reproducible_dgemm(p, context.stream());
  }
  cublasHandle_t handle = nullptr;
  FG_RETURN_IF_ERROR(context.cublas(&handle));
  const cublasOperation_t op_b = p.b.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = p.a.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (fits_int(p)) {
    FG_CUBLAS_CHECK(cublasDgemm(handle, op_b, op_a, static_cast<int>(p.n), static_cast<int>(p.m), static_cast<int>(p.k),
                                &p.alpha, p.b.data, static_cast<int>(p.b.ld), p.a.data, static_cast<int>(p.a.ld),
                                &p.beta, p.c, static_cast<int>(p.ldc)));
    return Status::success();
  }
  FG_CUBLAS_CHECK(cublasDgemm_64(handle, op_b, op_a, p.n, p.m, p.k, &p.alpha, p.b.data, p.b.ld, p.a.data, p.a.ld,
                                 &p.beta, p.c, p.ldc));
  return Status::success();
}

// The engine asks for C := beta C only for calls without a product, which fastgemm_blas_dgemm_host refuses first.
Status no_scale(const BasicGemmProblem<double> &, cudaStream_t) {
  return Status::failure(StatusCode::internal_error, "C := beta * C reached the FP64 tiles, which only multiply");
}

}  // namespace

FASTGEMM_BLAS_DGEMM_EXPORT fg_status_t fastgemm_blas_dgemm_create(fastgemm_blas_dgemm_t *handle) {
  return guarded("fastgemm_blas_dgemm_create", [&]() -> Status {
    if (handle == nullptr) return Status::failure(StatusCode::invalid_value, "handle is NULL");
    *handle = nullptr;
    Context *context = nullptr;
    FG_RETURN_IF_ERROR(Context::create(&context));
    std::unique_ptr<Context> owned(context);
    auto made = std::make_unique<fastgemm_blas_dgemm_handle>();
    made->engine = std::make_unique<HostGemm<double>>(*owned);
    made->context = std::move(owned);
    *handle = made.release();
    return Status::success();
  });
}

FASTGEMM_BLAS_DGEMM_EXPORT fg_status_t fastgemm_blas_dgemm_destroy(fastgemm_blas_dgemm_t handle) {
  if (handle == nullptr) return FG_STATUS_SUCCESS;
  return with_handle("fastgemm_blas_dgemm_destroy", handle, [&](fastgemm_blas_dgemm_handle &) -> Status {
    delete handle;
    return Status::success();
  });
}

FASTGEMM_BLAS_DGEMM_EXPORT fg_status_t fastgemm_blas_dgemm_set_devices(fastgemm_blas_dgemm_t handle, const int *devices,
                                                                       int count) {
  return with_handle("fastgemm_blas_dgemm_set_devices", handle,
                     [&](fastgemm_blas_dgemm_handle &h) { return h.engine->set_devices(devices, count); });
}

FASTGEMM_BLAS_DGEMM_EXPORT fg_status_t fastgemm_blas_dgemm_set_reproducibility(fastgemm_blas_dgemm_t handle,
                                                                               fg_reproducibility_t level) {
  return guarded("fastgemm_blas_dgemm_set_reproducibility", [&]() -> Status {
    if (handle == nullptr) return Status::failure(StatusCode::invalid_handle, "handle is NULL");
    if (level != FG_REPRODUCIBLE_RUN && level != FG_REPRODUCIBLE_SHAPE)
      return Status::failure(StatusCode::invalid_value,
                             "level = " + std::to_string(static_cast<int>(level)) + " is no fg_reproducibility_t");
    handle->reproducibility = level;
    return Status::success();
  });
}

FASTGEMM_BLAS_DGEMM_EXPORT fg_status_t fastgemm_blas_dgemm_host(fastgemm_blas_dgemm_t handle, fg_layout_t layout,
                                                                fg_op_t transa, fg_op_t transb, int64_t m, int64_t n,
                                                                int64_t k, double alpha, const double *A, int64_t lda,
                                                                const double *B, int64_t ldb, double beta, double *C,
                                                                int64_t ldc) {
  return with_handle("fastgemm_blas_dgemm_host", handle, [&](fastgemm_blas_dgemm_handle &h) -> Status {
    const DgemmCall call{layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc};
    BasicGemmProblem<double> problem;
    DgemmWork work = DgemmWork::nothing;
    FG_RETURN_IF_ERROR(fastgemm::blas_dgemm::dgemm_problem(call, &problem, &work));
    if (work == DgemmWork::nothing) return Status::success();
    if (work == DgemmWork::scale_c)
      return Status::failure(StatusCode::not_supported,
                             "k = 0 or alpha = 0 only scales C, which the caller computes; C is untouched");
    problem.reproducibility = h.reproducibility;
    const HostTileOps<double> ops{dgemm_step, no_scale, {}};
    fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
    return fastgemm::detail::using_workspace(
        *h.context, [&] { return h.engine->run(problem, true, FG_SGEMM_AUTO, ops, &ran, layout == FG_COL_MAJOR); });
  });
}

namespace {

bool one_of(char letter, char first, char second) { return letter == first || letter == second; }

// trsm, trmm and symm on the device (device_level3.hpp), their arguments checked here.
template <typename T, typename MakeProduct>
fg_status_t device_level3_call(const char *function, fastgemm_blas_dgemm_t handle,
                               const fastgemm::blas_dgemm::Level3Call<T> &call, MakeProduct &&make_product,
                               int64_t *done, int *partial) {
  if (done != nullptr) *done = 0;
  if (partial != nullptr) *partial = 0;
  return with_handle(function, handle, [&](fastgemm_blas_dgemm_handle &h) -> Status {
    if (done == nullptr || partial == nullptr)
      return Status::failure(StatusCode::invalid_value, "done and partial must not be NULL");
    using fastgemm::blas_dgemm::Level3Routine;
    const bool symm = call.routine == Level3Routine::symm;
    const bool rank_k = call.routine == Level3Routine::syrk || call.routine == Level3Routine::syr2k;
    if (rank_k) {
      // syrk and syr2k: m is C's order, n the depth k; A (and B) m x k for trans N, k x m for T.
      const int64_t rows = call.transa == 'N' ? call.m : call.n;
      if (!one_of(call.uplo, 'U', 'L') || !one_of(call.transa, 'N', 'T'))
        return Status::failure(StatusCode::invalid_value, "uplo and trans are U/L and N/T");
      if (call.m <= 0 || call.n <= 0 || call.alpha == T(0) || call.A == nullptr || call.C == nullptr ||
          (call.routine == Level3Routine::syr2k && (call.B == nullptr || call.ldb < rows)) || call.lda < rows ||
          call.ldc < call.m)
        return Status::failure(StatusCode::invalid_value,
                               "n and k must be positive, alpha nonzero, the arrays given, lda (and ldb) >= the rows "
                               "of A (and B), ldc >= n");
    } else {
      if (!one_of(call.side, 'L', 'R') || !one_of(call.uplo, 'U', 'L') ||
          (!symm && (!one_of(call.transa, 'N', 'T') || !one_of(call.diag, 'U', 'N'))))
        return Status::failure(StatusCode::invalid_value, "side, uplo, transa and diag are L/R, U/L, N/T and U/N");
      const int64_t order = call.side == 'L' ? call.m : call.n;
      if (call.m <= 0 || call.n <= 0 || call.alpha == T(0) || call.A == nullptr || call.B == nullptr ||
          call.C == nullptr || call.lda < order || call.ldb < call.m || call.ldc < call.m)
        return Status::failure(StatusCode::invalid_value,
                               "m and n must be positive, alpha nonzero, the arrays given, lda >= the order, ldb and "
                               "ldc >= m");
    }
    if (!h.level3) h.level3 = std::make_unique<fastgemm::blas_dgemm::Level3Resources>();
    Context &context = *h.context;
    const fastgemm::blas_dgemm::DeviceProduct<T> product = make_product(h);
    bool part_written = false;
    const Status computed = fastgemm::detail::using_workspace(context, [&] {
      return fastgemm::blas_dgemm::device_level3<T>(context, *h.level3, product, call, done, &part_written);
    });
    *partial = part_written ? 1 : 0;
    return computed;
  });
}

// The handle's FP64 product, at its reproducibility level, on the context's stream.
fastgemm::blas_dgemm::DeviceProduct<double> fp64_product(fastgemm_blas_dgemm_handle &h) {
  Context *context = h.context.get();
  const fg_reproducibility_t level = h.reproducibility;
  return [context, level](const BasicGemmProblem<double> &p) {
    BasicGemmProblem<double> step = p;
    step.reproducibility = level;
    return dgemm_step(step, *context, FG_SGEMM_AUTO, nullptr, nullptr);
  };
}

// The caller's FP32 product (fastgemm_blas_dgemm_float_product), on the context's stream.
fastgemm::blas_dgemm::DeviceProduct<float> fp32_product(fastgemm_blas_dgemm_handle &h,
                                                        fastgemm_blas_dgemm_float_product product, void *state) {
  cudaStream_t stream = h.context->stream();
  return [product, state, stream](const BasicGemmProblem<float> &p) {
    const fg_status_t status =
        product(state, stream, p.a.transposed ? FG_OP_T : FG_OP_N, p.b.transposed ? FG_OP_T : FG_OP_N, p.m, p.n, p.k,
                p.alpha, p.a.data, p.a.ld, p.b.data, p.b.ld, p.beta, p.c, p.ldc);
    if (status == FG_STATUS_SUCCESS) return Status::success();
    return Status::failure(StatusCode::internal_error, "the caller's single-precision product failed (" +
                                                           std::string(fastgemm::capi::status_name(status)) + ")");
  };
}

}  // namespace

FASTGEMM_BLAS_DGEMM_EXPORT fg_status_t fastgemm_blas_dgemm_trsm_host(fastgemm_blas_dgemm_t handle, char side, char uplo,
                                                                     char transa, char diag, int64_t m, int64_t n,
                                                                     double alpha, const double *A, int64_t lda,
                                                                     double *B, int64_t ldb, int64_t *done,
                                                                     int *partial) {
  return device_level3_call<double>(
      "fastgemm_blas_dgemm_trsm_host", handle,
      {fastgemm::blas_dgemm::Level3Routine::trsm, side, uplo, transa, diag, m, n, alpha, 0.0, A, lda, B, ldb, B, ldb},
      fp64_product, done, partial);
}

FASTGEMM_BLAS_DGEMM_EXPORT fg_status_t fastgemm_blas_dgemm_trmm_host(fastgemm_blas_dgemm_t handle, char side, char uplo,
                                                                     char transa, char diag, int64_t m, int64_t n,
                                                                     double alpha, const double *A, int64_t lda,
                                                                     double *B, int64_t ldb, int64_t *done,
                                                                     int *partial) {
  return device_level3_call<double>(
      "fastgemm_blas_dgemm_trmm_host", handle,
      {fastgemm::blas_dgemm::Level3Routine::trmm, side, uplo, transa, diag, m, n, alpha, 0.0, A, lda, B, ldb, B, ldb},
      fp64_product, done, partial);
}

FASTGEMM_BLAS_DGEMM_EXPORT fg_status_t fastgemm_blas_dgemm_symm_host(fastgemm_blas_dgemm_t handle, char side, char uplo,
                                                                     int64_t m, int64_t n, double alpha,
                                                                     const double *A, int64_t lda, const double *B,
                                                                     int64_t ldb, double beta, double *C, int64_t ldc,
                                                                     int64_t *done, int *partial) {
  return device_level3_call<double>(
      "fastgemm_blas_dgemm_symm_host", handle,
      {fastgemm::blas_dgemm::Level3Routine::symm, side, uplo, 'N', 'N', m, n, alpha, beta, A, lda, B, ldb, C, ldc},
      fp64_product, done, partial);
}

FASTGEMM_BLAS_DGEMM_EXPORT fg_status_t fastgemm_blas_dgemm_syrk_host(fastgemm_blas_dgemm_t handle, char uplo,
                                                                     char trans, int64_t n, int64_t k, double alpha,
                                                                     const double *A, int64_t lda, double beta,
                                                                     double *C, int64_t ldc, int *partial) {
  int64_t done = 0;
  return device_level3_call<double>(
      "fastgemm_blas_dgemm_syrk_host", handle,
      {fastgemm::blas_dgemm::Level3Routine::syrk, 'L', uplo, trans, 'N', n, k, alpha, beta, A, lda, nullptr, 0, C, ldc},
      fp64_product, &done, partial);
}

FASTGEMM_BLAS_DGEMM_EXPORT fg_status_t fastgemm_blas_dgemm_syr2k_host(fastgemm_blas_dgemm_t handle, char uplo,
                                                                      char trans, int64_t n, int64_t k, double alpha,
                                                                      const double *A, int64_t lda, const double *B,
                                                                      int64_t ldb, double beta, double *C, int64_t ldc,
                                                                      int *partial) {
  int64_t done = 0;
  return device_level3_call<double>(
      "fastgemm_blas_dgemm_syr2k_host", handle,
      {fastgemm::blas_dgemm::Level3Routine::syr2k, 'L', uplo, trans, 'N', n, k, alpha, beta, A, lda, B, ldb, C, ldc},
      fp64_product, &done, partial);
}

FASTGEMM_BLAS_DGEMM_EXPORT fg_status_t fastgemm_blas_dgemm_level3_float(
    fastgemm_blas_dgemm_t handle, int routine, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
    float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc,
    fastgemm_blas_dgemm_float_product product, void *product_state, int64_t *done, int *partial) {
  using fastgemm::blas_dgemm::Level3Routine;
  const char *const function = "fastgemm_blas_dgemm_level3_float";
  if (routine < 0 || routine > 4 || product == nullptr) {
    if (done != nullptr) *done = 0;
    if (partial != nullptr) *partial = 0;
    return guarded(function, [] {
      return Status::failure(StatusCode::invalid_value,
                             "routine is 0 to 4 (trsm, trmm, symm, syrk, syr2k), and product given");
    });
  }
  static constexpr Level3Routine kinds[] = {Level3Routine::trsm, Level3Routine::trmm, Level3Routine::symm,
                                            Level3Routine::syrk, Level3Routine::syr2k};
  const Level3Routine kind = kinds[routine];
  const bool reads_b = kind != Level3Routine::trsm && kind != Level3Routine::trmm;
  const float *b = reads_b ? B : C;
  const int64_t ld_b = reads_b ? ldb : ldc;
  return device_level3_call<float>(
      function, handle, {kind, side, uplo, transa, diag, m, n, alpha, beta, A, lda, b, ld_b, C, ldc},
      [&](fastgemm_blas_dgemm_handle &h) { return fp32_product(h, product, product_state); }, done, partial);
}

FASTGEMM_BLAS_DGEMM_EXPORT const char *fastgemm_blas_dgemm_status_name(fg_status_t status) {
  return fastgemm::capi::status_name(status);
}

FASTGEMM_BLAS_DGEMM_EXPORT const char *fastgemm_blas_dgemm_last_error_message(void) {
  const std::string *message = fastgemm::capi::ThreadText::of(t_last_message, t_last_message_gone);
  return message != nullptr ? message->c_str() : "";
}
