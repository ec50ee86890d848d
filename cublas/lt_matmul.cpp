// SPDX-License-Identifier: Apache-2.0
// cublasLtMatmul where A, B, C and D are FP32 column-major matrices, the compute type CUBLAS_COMPUTE_32F with FP32
// scales on the host, and the epilogue DEFAULT, BIAS, RELU or RELU_BIAS: fastgemm computes alpha op(A) op(B) + beta C
// into D, then the epilogue runs over D (epilogue.cu). Anything else of a descriptor (other types, orders, pointer
// modes, epilogues, scales of FP8) goes to cuBLASLt unchanged, as do calls whose layouts disagree (cuBLASLt answers).
#include <cublasLt.h>

#include <algorithm>
#include <cstring>

#include "epilogue.hpp"
#include "gemm_calls.hpp"

namespace fastgemm_cublas {
namespace {

// An attribute's value as a 64-bit integer (every attribute read here is an integer or a pointer of at most 8
// bytes); 0 where the library does not know the attribute (it cannot then be set).
template <typename Object, typename Attribute, typename Get>
int64_t attribute(Get get, Object object, Attribute which) {
  size_t size = 0;
  if (get(object, which, nullptr, 0, &size) != CUBLAS_STATUS_SUCCESS || size == 0 || size > 8) return 0;
  unsigned char bytes[8] = {};
  if (get(object, which, bytes, size, &size) != CUBLAS_STATUS_SUCCESS) return 0;
  if (size == 4) {
    int32_t value = 0;
    std::memcpy(&value, bytes, 4);
    return value;
  }
  int64_t value = 0;
  std::memcpy(&value, bytes, size);
  return value;
}

struct Layout {
  int64_t type, order, rows, cols, ld, batch, stride;
};

struct LtQueries {
  decltype(&cublasLtMatmulDescGetAttribute) desc;
  decltype(&cublasLtMatrixLayoutGetAttribute) layout;
};

Layout read_layout(const LtQueries &q, cublasLtMatrixLayout_t layout) {
  Layout l{};
  l.type = attribute(q.layout, layout, CUBLASLT_MATRIX_LAYOUT_TYPE);
  l.order = attribute(q.layout, layout, CUBLASLT_MATRIX_LAYOUT_ORDER);
  l.rows = attribute(q.layout, layout, CUBLASLT_MATRIX_LAYOUT_ROWS);
  l.cols = attribute(q.layout, layout, CUBLASLT_MATRIX_LAYOUT_COLS);
  l.ld = attribute(q.layout, layout, CUBLASLT_MATRIX_LAYOUT_LD);
  l.batch = attribute(q.layout, layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
  l.stride = attribute(q.layout, layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
  if (l.batch == 0) l.batch = 1;
  return l;
}

bool fp32_column_major(const Layout &l) {
  return l.type == CUDA_R_32F && l.order == CUBLASLT_ORDER_COL && l.rows > 0 && l.cols > 0 && l.ld >= l.rows &&
         l.stride >= 0;
}

struct LtCall {
  cublasLtHandle_t handle;
  cublasLtMatmulDesc_t desc;
  const void *alpha, *a;
  cublasLtMatrixLayout_t a_desc;
  const void *b;
  cublasLtMatrixLayout_t b_desc;
  const void *beta, *c;
  cublasLtMatrixLayout_t c_desc;
  void *d;
  cublasLtMatrixLayout_t d_desc;
  cudaStream_t stream;
};

struct Epilogue {
  bool relu = false;
  const float *bias = nullptr;
  int64_t bias_stride = 0;
};

bool regions_overlap(const void *x, const Layout &lx, const void *y, const Layout &ly) {
  const auto begin_x = reinterpret_cast<uintptr_t>(x), begin_y = reinterpret_cast<uintptr_t>(y);
  const auto extent = [](const Layout &l) {
    return static_cast<uintptr_t>(((l.batch - 1) * l.stride + (l.cols - 1) * l.ld + l.rows) * sizeof(float));
  };
  return begin_x < begin_y + extent(ly) && begin_y < begin_x + extent(lx);
}

Decision decide_lt(const LtCall &call, Product *p, Epilogue *epilogue) {
  const Settings &s = settings();
  const bool described = call.handle != nullptr && call.desc != nullptr && call.a_desc != nullptr &&
                         call.b_desc != nullptr && call.c_desc != nullptr && call.d_desc != nullptr;
  static const LtQueries q{
      real_function<decltype(&cublasLtMatmulDescGetAttribute)>(Library::cublas_lt, "cublasLtMatmulDescGetAttribute"),
      real_function<decltype(&cublasLtMatrixLayoutGetAttribute)>(Library::cublas_lt,
                                                                 "cublasLtMatrixLayoutGetAttribute")};
  const bool queries = q.desc != nullptr && q.layout != nullptr;
  // Passing everything through, the sizes are read for the log only.
  if (s.pass_all && !(s.log && described && queries)) return {s.pass_all_reason, {}};
  if (!described) return {"a null handle or descriptor, which cuBLASLt checks", {}};
  if (!queries) return {"the process's cuBLASLt lacks the descriptors' queries", {}};
  Forwarding forwarding;
  const Layout a = read_layout(q, call.a_desc), b = read_layout(q, call.b_desc), c = read_layout(q, call.c_desc),
               d = read_layout(q, call.d_desc);
  const int64_t transa = attribute(q.desc, call.desc, CUBLASLT_MATMUL_DESC_TRANSA),
                transb = attribute(q.desc, call.desc, CUBLASLT_MATMUL_DESC_TRANSB);
  p->a_transposed = transa != CUBLAS_OP_N, p->b_transposed = transb != CUBLAS_OP_N;
  p->m = d.rows, p->n = d.cols, p->k = p->a_transposed ? a.rows : a.cols, p->batch = d.batch;
  if (s.pass_all) return {s.pass_all_reason, {}};
  if (attribute(q.desc, call.desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE) != CUBLAS_COMPUTE_32F)
    return {"a compute type other than CUBLAS_COMPUTE_32F", {}};
  if (attribute(q.desc, call.desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE) != CUDA_R_32F) return {"scales not FP32", {}};
  if (attribute(q.desc, call.desc, CUBLASLT_MATMUL_DESC_POINTER_MODE) != CUBLASLT_POINTER_MODE_HOST)
    return {"alpha and beta not host values (the descriptor's pointer mode)", {}};
  for (const auto which :
       {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
        CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER,
        CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR})
    if (attribute(q.desc, call.desc, which) != 0) return {"scaling or emulation settings in the descriptor", {}};
  const int64_t transc = attribute(q.desc, call.desc, CUBLASLT_MATMUL_DESC_TRANSC);
  const bool ops_known = (transa == CUBLAS_OP_N || transa == CUBLAS_OP_T || transa == CUBLAS_OP_C) &&
                         (transb == CUBLAS_OP_N || transb == CUBLAS_OP_T || transb == CUBLAS_OP_C);
  if (!ops_known || transc != CUBLAS_OP_N) return {"transposes cuBLASLt checks", {}};
  const int64_t kind = attribute(q.desc, call.desc, CUBLASLT_MATMUL_DESC_EPILOGUE);
  if (kind != CUBLASLT_EPILOGUE_DEFAULT && kind != CUBLASLT_EPILOGUE_BIAS && kind != CUBLASLT_EPILOGUE_RELU &&
      kind != CUBLASLT_EPILOGUE_RELU_BIAS)
    return {"an epilogue other than DEFAULT, BIAS, RELU and RELU_BIAS", {}};
  epilogue->relu = kind == CUBLASLT_EPILOGUE_RELU || kind == CUBLASLT_EPILOGUE_RELU_BIAS;
  if (kind == CUBLASLT_EPILOGUE_BIAS || kind == CUBLASLT_EPILOGUE_RELU_BIAS) {
    const int64_t bias_type = attribute(q.desc, call.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE);
    if (bias_type != -1 && bias_type != CUDA_R_32F) return {"a bias other than FP32", {}};
    epilogue->bias = reinterpret_cast<const float *>(attribute(q.desc, call.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER));
    epilogue->bias_stride = attribute(q.desc, call.desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE);
    if (epilogue->bias == nullptr || epilogue->bias_stride < 0) return {"a bias cuBLASLt checks", {}};
  }
  if (!fp32_column_major(a) || !fp32_column_major(b) || !fp32_column_major(c) || !fp32_column_major(d))
    return {"layouts other than FP32 column-major, or ones cuBLASLt checks", {}};
  const int64_t a_rows = p->a_transposed ? p->k : p->m, a_cols = p->a_transposed ? p->m : p->k;
  const int64_t b_rows = p->b_transposed ? p->n : p->k, b_cols = p->b_transposed ? p->k : p->n;
  if (a.rows != a_rows || a.cols != a_cols || b.rows != b_rows || b.cols != b_cols || c.rows != d.rows ||
      c.cols != d.cols || a.batch != d.batch || b.batch != d.batch || c.batch != d.batch)
    return {"layouts that do not fit together, which cuBLASLt checks", {}};
  if (const char *refusal = size_refusal(p->m, p->n, p->k, p->batch)) return {refusal, {}};
  if (call.alpha == nullptr || call.beta == nullptr) return {"a null scalar, which cuBLASLt checks", {}};
  const float alpha = *static_cast<const float *>(call.alpha), beta = *static_cast<const float *>(call.beta);
  if (alpha == 0.0f) return {"alpha = 0: C is only scaled", {}};
  if (call.c == call.d && (c.ld != d.ld || c.stride != d.stride))
    return {"C and D one matrix under two layouts, which cuBLASLt checks", {}};
  if (beta != 0.0f && call.c != call.d) {
    // D starts as a copy of C, made before fastgemm computes in place.
    if (c.ld != d.ld || c.stride != d.stride) return {"C and D apart, with other layouts", {}};
    if (regions_overlap(call.c, c, call.d, d)) return {"C and D overlapping apart", {}};
  }
  p->alpha = alpha, p->beta = beta, p->stream = call.stream;
  p->a = static_cast<const float *>(call.a), p->lda = a.ld, p->stride_a = a.stride;
  p->b = static_cast<const float *>(call.b), p->ldb = b.ld, p->stride_b = b.stride;
  p->c = static_cast<float *>(call.d), p->ldc = d.ld, p->stride_c = d.stride;
  if (beta != 0.0f && call.c != call.d) p->copy_from = static_cast<const float *>(call.c);
  return {};
}

}  // namespace
}  // namespace fastgemm_cublas

using namespace fastgemm_cublas;

extern "C" cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                                         const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                                         cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                                         cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
                                         const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspaceSizeInBytes,
                                         cudaStream_t stream) {
  static const auto real = real_function<decltype(&cublasLtMatmul)>(Library::cublas_lt, "cublasLtMatmul");
  if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  const LtCall call{lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, stream};
  Epilogue epilogue;
  return route_call(
      "cublasLtMatmul", [&](Product *p) { return decide_lt(call, p, &epilogue); },
      [&](const Product &p) {
        if (epilogue.bias == nullptr && !epilogue.relu) return CUBLAS_STATUS_SUCCESS;
        return apply_epilogue(p.c, p.m, p.n, p.ldc, p.stride_c, p.batch, epilogue.bias, epilogue.bias_stride,
                              epilogue.relu, p.stream) == cudaSuccess
                   ? CUBLAS_STATUS_SUCCESS
                   : CUBLAS_STATUS_EXECUTION_FAILED;
      },
      [&] {
        return real(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace,
                    workspaceSizeInBytes, stream);
      });
}
