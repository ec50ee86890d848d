/* SPDX-License-Identifier: Apache-2.0 */
/* fastgemm from C: C := alpha * A * B + beta * C on the GPU with fg_sgemm, checked against the CPU.
 * Without a GPU, fastgemm says so (FG_STATUS_NO_DEVICE); the program prints its message and exits 0.
 *
 * Build against fastgemm installed in /opt/fastgemm, static or shared (the run path lets the loader find a
 * shared libfastgemm; a static one needs none):
 *   export PKG_CONFIG_PATH=/opt/fastgemm/lib/pkgconfig
 *   cc -std=c99 sgemm.c -o sgemm $(pkg-config --cflags --libs fastgemm) -lm \
 *      -Wl,-rpath,$(pkg-config --variable=libdir fastgemm)
 * or with CMake: cmake -S samples -B build-samples -DCMAKE_PREFIX_PATH=/opt/fastgemm
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#include <fastgemm/fastgemm.h>

/* Row-major, as C arrays are: A is M x K, B is K x N, C is M x N, and each leading dimension is the
   length of a row. */
enum { M = 300, N = 200, K = 100 };

static int fastgemm_failed(fg_status_t status, const char *call) {
  if (status == FG_STATUS_SUCCESS) return 0;
  fprintf(stderr, "%s: %s: %s\n", call, fg_status_name(status), fg_last_error_message());
  return 1;
}

static int cuda_failed(cudaError_t error, const char *call) {
  if (error == cudaSuccess) return 0;
  fprintf(stderr, "%s: %s\n", call, cudaGetErrorString(error));
  return 1;
}

int main(void) {
  const float alpha = 1.5f, beta = -0.5f;
  static float a[M * K], b[K * N], c[M * N], expected[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = (float)(i % 17 - 8) / 8.0f;
  for (int i = 0; i < K * N; ++i) b[i] = (float)(i % 13 - 6) / 4.0f;
  for (int i = 0; i < M * N; ++i) c[i] = (float)(i % 5);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double sum = 0.0;
      for (int p = 0; p < K; ++p) sum += (double)a[i * K + p] * b[p * N + j];
      expected[i * N + j] = (float)(alpha * sum + beta * c[i * N + j]);
    }

  fg_handle_t handle = NULL;
  fg_status_t status = fg_create(&handle);
  if (status == FG_STATUS_NO_DEVICE) {
    printf("no usable CUDA device, as fastgemm reports: %s\n", fg_last_error_message());
    return 0;
  }
  if (fastgemm_failed(status, "fg_create")) return 1;

  int failed = 1;
  float *device_a = NULL, *device_b = NULL, *device_c = NULL;
  if (cuda_failed(cudaMalloc((void **)&device_a, sizeof a), "cudaMalloc") ||
      cuda_failed(cudaMalloc((void **)&device_b, sizeof b), "cudaMalloc") ||
      cuda_failed(cudaMalloc((void **)&device_c, sizeof c), "cudaMalloc") ||
      cuda_failed(cudaMemcpy(device_a, a, sizeof a, cudaMemcpyHostToDevice), "cudaMemcpy") ||
      cuda_failed(cudaMemcpy(device_b, b, sizeof b, cudaMemcpyHostToDevice), "cudaMemcpy") ||
      cuda_failed(cudaMemcpy(device_c, c, sizeof c, cudaMemcpyHostToDevice), "cudaMemcpy"))
    goto release;

  /* fg_sgemm only enqueues the product on the handle's stream; a failure of the running kernel surfaces
     at the next synchronization, which the copy back is. */
  if (fastgemm_failed(
          fg_sgemm(handle, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, M, N, K, alpha, device_a, K, device_b, N, beta, device_c, N),
          "fg_sgemm") ||
      cuda_failed(cudaMemcpy(c, device_c, sizeof c, cudaMemcpyDeviceToHost), "cudaMemcpy"))
    goto release;

  fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
  if (fastgemm_failed(fg_get_last_sgemm_algo(handle, &ran), "fg_get_last_sgemm_algo")) goto release;
  double worst = 0.0;
  for (int i = 0; i < M * N; ++i) worst = fmax(worst, fabs(c[i] - expected[i]) / (fabs(expected[i]) + 1.0));
  printf("fg_sgemm %dx%dx%d with %s: worst relative error %.1e\n", M, N, K, fg_sgemm_algo_name(ran), worst);
  failed = !(worst < 1e-5);

release:
  cudaFree(device_a);
  cudaFree(device_b);
  cudaFree(device_c);
  fg_destroy(handle);
  return failed;
}
