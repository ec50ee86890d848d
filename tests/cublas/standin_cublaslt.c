/* SPDX-License-Identifier: Apache-2.0 */
/* A stand-in for cuBLASLt (soname libcublasLt.so.<major>), for cublas.routing: descriptors that hold their
 * attributes, read back under cuBLASLt's contract (the interposer asks each attribute's size first, with no buffer),
 * and a cublasLtMatmul that prints the arguments that reached it and computes nothing. Only the attributes the
 * interposer reads or the test sets are known; the others are refused, as cuBLASLt refuses attributes it lacks. */
#include <stdlib.h>
#include <string.h>

#include "routing_calls.h"

enum { kDescAttributes = 64, kLayoutAttributes = 16 };

struct lt_desc {
  unsigned char value[kDescAttributes][8];
};

struct lt_layout {
  unsigned char value[kLayoutAttributes][8];
};

/* The sizes cuBLASLt stores each attribute in (cublasLt.h); 0 for one the stand-in does not know. */
static size_t desc_size(cublasLtMatmulDescAttributes_t attribute) {
  switch (attribute) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
    case CUBLASLT_MATMUL_DESC_POINTER_MODE:
    case CUBLASLT_MATMUL_DESC_TRANSA:
    case CUBLASLT_MATMUL_DESC_TRANSB:
    case CUBLASLT_MATMUL_DESC_TRANSC:
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: return 4;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE:
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_C_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_D_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_AMAX_D_POINTER:
    case CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR: return 8;
    default: return 0;
  }
}

static size_t layout_size(cublasLtMatrixLayoutAttribute_t attribute) {
  switch (attribute) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE:
    case CUBLASLT_MATRIX_LAYOUT_ORDER:
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return 4;
    case CUBLASLT_MATRIX_LAYOUT_ROWS:
    case CUBLASLT_MATRIX_LAYOUT_COLS:
    case CUBLASLT_MATRIX_LAYOUT_LD:
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return 8;
    default: return 0;
  }
}

/* `values` is indexed only once `size` says the attribute is known, and so within the array. */
static cublasStatus_t set_value(unsigned char (*values)[8], int attribute, size_t size, const void *buf, size_t bytes) {
  if (size == 0 || buf == NULL || bytes != size) return CUBLAS_STATUS_INVALID_VALUE;
  unsigned char *slot = values[attribute];
  memcpy(slot, buf, size);
  return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t get_value(const unsigned char (*values)[8], int attribute, size_t size, void *buf, size_t bytes,
                                size_t *written) {
  if (size == 0) return CUBLAS_STATUS_INVALID_VALUE;
  const unsigned char *slot = values[attribute];
  if (bytes == 0) {
    if (written == NULL) return CUBLAS_STATUS_INVALID_VALUE;
    *written = size;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (buf == NULL || bytes != size) return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(buf, slot, size);
  if (written != NULL) *written = size;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle) {
  static int context;
  if (handle == NULL) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = (cublasLtHandle_t)&context;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  return handle == NULL ? CUBLAS_STATUS_NOT_INITIALIZED : CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                                              const void *buf, size_t bytes) {
  if (desc == NULL) return CUBLAS_STATUS_INVALID_VALUE;
  struct lt_desc *d = (struct lt_desc *)desc;
  return set_value(d->value, attribute, desc_size(attribute), buf, bytes);
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                                              void *buf, size_t bytes, size_t *written) {
  if (desc == NULL) return CUBLAS_STATUS_INVALID_VALUE;
  const struct lt_desc *d = (const struct lt_desc *)desc;
  return get_value(d->value, attribute, desc_size(attribute), buf, bytes, written);
}

/* cuBLASLt's defaults: host scalars, no transposes, the DEFAULT epilogue, a bias of D's type (-1). */
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute, cudaDataType_t scale) {
  if (desc == NULL) return CUBLAS_STATUS_INVALID_VALUE;
  struct lt_desc *d = calloc(1, sizeof *d);
  if (d == NULL) return CUBLAS_STATUS_ALLOC_FAILED;
  *desc = (cublasLtMatmulDesc_t)d;
  const int32_t compute_value = compute, scale_value = scale, epilogue = CUBLASLT_EPILOGUE_DEFAULT, bias_type = -1;
  cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute_value, 4);
  cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale_value, 4);
  cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, 4);
  cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, 4);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  free(desc);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attribute, const void *buf,
                                                size_t bytes) {
  if (layout == NULL) return CUBLAS_STATUS_INVALID_VALUE;
  struct lt_layout *l = (struct lt_layout *)layout;
  return set_value(l->value, attribute, layout_size(attribute), buf, bytes);
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attribute, void *buf, size_t bytes,
                                                size_t *written) {
  if (layout == NULL) return CUBLAS_STATUS_INVALID_VALUE;
  const struct lt_layout *l = (const struct lt_layout *)layout;
  return get_value(l->value, attribute, layout_size(attribute), buf, bytes, written);
}

/* cuBLASLt's defaults: column-major, one matrix. */
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  if (layout == NULL) return CUBLAS_STATUS_INVALID_VALUE;
  struct lt_layout *l = calloc(1, sizeof *l);
  if (l == NULL) return CUBLAS_STATUS_ALLOC_FAILED;
  *layout = (cublasLtMatrixLayout_t)l;
  const uint32_t type_value = (uint32_t)type;
  const int32_t order = CUBLASLT_ORDER_COL, batch = 1;
  cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_TYPE, &type_value, 4);
  cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, 4);
  cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, 8);
  cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_COLS, &cols, 8);
  cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_LD, &ld, 8);
  cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, 4);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  free(layout);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
                              cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc,
                              const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,
                              size_t workspaceSizeInBytes, cudaStream_t stream) {
  routing_print_lt("real", handle, desc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace,
                   workspaceSizeInBytes, stream);
  return CUBLAS_STATUS_SUCCESS;
}
