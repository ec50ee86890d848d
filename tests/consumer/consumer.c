/* SPDX-License-Identifier: Apache-2.0 */
/* A C program linked against an installed fastgemm: without a GPU it checks that fastgemm says so; with
   one it computes a small product and compares it with the CPU's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#include <fastgemm/fastgemm.h>

enum { SIZE = 64 };

int main(void) {
  fg_handle_t handle = NULL;
  fg_status_t status = fg_create(&handle);
  if (status == FG_STATUS_NO_DEVICE) {
    printf("consumer.c: no device, as fastgemm reports: %s\n", fg_last_error_message());
    return fg_last_error_message()[0] != '\0' ? 0 : 1;
  }
  if (status != FG_STATUS_SUCCESS) {
    fprintf(stderr, "fg_create: %s: %s\n", fg_status_name(status), fg_last_error_message());
    return 1;
  }
  static float a[SIZE * SIZE], b[SIZE * SIZE], c[SIZE * SIZE];
  for (int i = 0; i < SIZE * SIZE; ++i) {
    a[i] = (float)((i * 7 % 13) - 6) / 8.0f;
    b[i] = (float)((i * 5 % 11) - 5) / 4.0f;
  }
  float *da = NULL, *db = NULL, *dc = NULL;
  const size_t bytes = sizeof a;
  if (cudaMalloc((void **)&da, bytes) != cudaSuccess || cudaMalloc((void **)&db, bytes) != cudaSuccess ||
      cudaMalloc((void **)&dc, bytes) != cudaSuccess ||
      cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    fprintf(stderr, "CUDA set-up failed\n");
    return 1;
  }
  status = fg_sgemm(handle, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, SIZE, SIZE, SIZE, 1.0f, da, SIZE, db, SIZE, 0.0f, dc, SIZE);
  if (status != FG_STATUS_SUCCESS || cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
    fprintf(stderr, "fg_sgemm: %s: %s\n", fg_status_name(status), fg_last_error_message());
    return 1;
  }
  double worst = 0.0;
  for (int i = 0; i < SIZE; ++i)
    for (int j = 0; j < SIZE; ++j) {
      double expected = 0.0;
      for (int p = 0; p < SIZE; ++p) expected += (double)a[i * SIZE + p] * b[p * SIZE + j];
      worst = fmax(worst, fabs(expected - c[i * SIZE + j]) / (fabs(expected) + 1.0));
    }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  fg_destroy(handle);
  printf("consumer.c: fg_sgemm %dx%dx%d, worst relative error %.2e\n", SIZE, SIZE, SIZE, worst);
  return worst < 1e-5 ? 0 : 1;
}
