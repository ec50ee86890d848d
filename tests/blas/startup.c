/* SPDX-License-Identifier: Apache-2.0 */
/* A BLAS user whose products are all small: with libfastgemm_blas.so preloaded or linked, nothing of CUDA
   may be loaded (the tests time its start, too). Exits 1 when the results are wrong or when the CUDA
   runtime, cuBLAS or libfastgemm.so is in the process after the calls. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void sgemm_(const char *, const char *, const int *, const int *, const int *, const float *, const float *,
            const int *, const float *, const int *, const float *, float *, const int *);

int main(void) {
  enum { n = 24 };
  float a[n * n], b[n * n], c[n * n], d[n * n];
  for (int i = 0; i < n * n; ++i) a[i] = (float)((i * 7) % 11) - 5.0f, b[i] = (float)((i * 5) % 13) - 6.0f;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
  const int size = n;
  const float one = 1.0f, zero = 0.0f;
  sgemm_("N", "N", &size, &size, &size, &one, b, &size, a, &size, &zero, d, &size); /* the same, column-major */
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int l = 0; l < n; ++l) sum += (double)a[i * n + l] * b[l * n + j];
      if (fabs(c[i * n + j] - sum) > 1e-3 || fabs(d[i * n + j] - sum) > 1e-3) ++wrong;
    }
  FILE *maps = fopen("/proc/self/maps", "r");
  char line[4096];
  int loaded = 0;
  while (maps != NULL && fgets(line, sizeof line, maps) != NULL)
    if (strstr(line, "libcudart") || strstr(line, "libcublas") || strstr(line, "/libfastgemm.so")) {
      fprintf(stderr, "loaded although no product needed the GPU: %s", line);
      loaded = 1;
      break;
    }
  if (maps != NULL) fclose(maps);
  printf("startup: %d wrong elements, CUDA %s\n", wrong, loaded ? "loaded" : "not loaded");
  return wrong == 0 && !loaded ? 0 : 1;
}
