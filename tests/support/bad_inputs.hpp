// SPDX-License-Identifier: Apache-2.0
// Every class of bad argument the contract names, as data: the unit tests feed them to the argument
// validator with a simulated device, the GPU tests to the real entry points with real memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fastgemm/fastgemm.h"

namespace fgtest {

struct SgemmCall {
  fg_layout_t layout;
  fg_op_t transa, transb;
  int64_t m, n, k;
  float alpha;
  const float *A;
  int64_t lda, stride_a;
  const float *B;
  int64_t ldb, stride_b;
  float beta;
  float *C;
  int64_t ldc, stride_c;
  int64_t batch_count;
};

struct BadSgemmCase {
  std::string what;
  SgemmCall call;
  bool batched_only;         // strides and batch_count: only fg_sgemm_strided_batched takes them
  std::string message_part;  // the message must contain this
};

// A valid batched call, row-major N N, m=4 n=5 k=6, two dense batches, over the given memory (A needs 48
// floats, B 60, C 40), then each bad variation of it. `host` is pageable host memory.
SgemmCall valid_sgemm_call(const float *A, const float *B, float *C);
std::vector<BadSgemmCase> bad_sgemm_cases(const float *A, const float *B, float *C, float *host);

struct RowmeanCall {
  fg_dtype_t dtype;
  const void *input, *matrix;
  void *output;
  int64_t L, M, N;
};

struct BadRowmeanCase {
  std::string what;
  RowmeanCall call;
  std::string message_part;
};

// A valid f32 call with L=4 M=3 N=2 (input 24 floats, matrix 16, output 8), then each bad variation.
RowmeanCall valid_rowmean_call(const void *input, const void *matrix, void *output);
std::vector<BadRowmeanCase> bad_rowmean_cases(const void *input, const void *matrix, void *output, void *host);

}  // namespace fgtest
