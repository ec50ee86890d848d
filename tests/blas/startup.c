/* SPDX-License-Identifier: Apache-2.0 */
/* A BLAS user whose products are all small: with libfastgemm_blas.so preloaded or linked, nothing of CUDA may be
   loaded (the tests time its start, too). Exits 1 when the results are wrong or when the CUDA runtime, cuBLAS or
   libfastgemm.so is in the process after the calls.
   With the argument "gpu-sized", run with FASTGEMM_BLAS_MIN_FLOPS=0 so that the drop-in sends the same products to
   the GPU: where the driver has a device, libfastgemm.so and the CUDA runtime must then be in the process; where it
   has none (no driver, or the toolkit's stub), the drop-in must have learnt so from the driver alone, so neither
   they, cuBLAS nor the driver may be. The program asks the driver itself after the calls, as the drop-in does, and
   prints "driver: N devices" or "driver: no device (why)". */
#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void sgemm_(const char *, const char *, const int *, const int *, const int *, const float *, const float *,
            const int *, const float *, const int *, const float *, float *, const int *);

/* The driver API's two calls, declared here: the program builds without the toolkit's headers. */
typedef int (*CuInit)(unsigned int);
typedef int (*CuDeviceGetCount)(int *);

/* The driver's device count, 0 without a usable driver; why there is none goes to why (size 256). */
static int driver_devices(char *why) {
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == NULL) {
    snprintf(why, 256, "%s", dlerror());
    return 0;
  }
  CuInit init = (CuInit)dlsym(driver, "cuInit");
  CuDeviceGetCount device_count = (CuDeviceGetCount)dlsym(driver, "cuDeviceGetCount");
  int count = 0, status = -1;
  if (init == NULL || device_count == NULL)
    snprintf(why, 256, "libcuda.so.1 lacks cuInit or cuDeviceGetCount");
  else if ((status = init(0)) != 0 || (status = device_count(&count)) != 0)
    snprintf(why, 256, "the driver answers %d", status), count = 0;
  else if (count == 0)
    snprintf(why, 256, "the driver counts 0");
  return count;
}

/* Whether the process maps a file whose path contains name. */
static int mapped(const char *name) {
  FILE *maps = fopen("/proc/self/maps", "r");
  char line[4096];
  int found = 0;
  while (!found && maps != NULL && fgets(line, sizeof line, maps) != NULL) found = strstr(line, name) != NULL;
  if (maps != NULL) fclose(maps);
  return found;
}

int main(int argc, char **argv) {
  const int gpu_sized = argc > 1 && strcmp(argv[1], "gpu-sized") == 0;
  enum { n = 24 };
  float a[n * n], b[n * n], c[n * n], d[n * n];
  for (int i = 0; i < n * n; ++i) a[i] = (float)((i * 7) % 11) - 5.0f, b[i] = (float)((i * 5) % 13) - 6.0f;
  for (int i = 0; i < n * n; ++i) c[i] = d[i] = NAN;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
  const int size = n;
  const float one = 1.0f, zero = 0.0f;
  sgemm_("N", "N", &size, &size, &size, &one, b, &size, a, &size, &zero, d, &size); /* the same, column-major */
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int l = 0; l < n; ++l) sum += (double)a[i * n + l] * b[l * n + j];
      if (!(fabs(c[i * n + j] - sum) <= 1e-3) || !(fabs(d[i * n + j] - sum) <= 1e-3)) ++wrong;
    }
  /* The mappings are read before the driver is asked here, which loads it. */
  const int fastgemm = mapped("/libfastgemm.so"), runtime = mapped("libcudart"), cublas = mapped("libcublas");
  const int driver = mapped("/libcuda.so");
  if (!gpu_sized) {
    const int loaded = fastgemm || runtime || cublas;
    if (loaded)
      fprintf(stderr, "libfastgemm.so, the CUDA runtime or cuBLAS is loaded although no product needed the GPU\n");
    printf("startup: %d wrong elements, CUDA %s\n", wrong, loaded ? "loaded" : "not loaded");
    return wrong == 0 && !loaded ? 0 : 1;
  }
  char why[256] = "";
  const int devices = driver_devices(why);
  /* With a device the products went to the GPU; without one, nothing of it had a reason to load. */
  const int right = devices > 0 ? fastgemm && runtime : !fastgemm && !runtime && !cublas && !driver;
  printf("startup: %d wrong elements, driver: ", wrong);
  if (devices > 0)
    printf("%d devices", devices);
  else
    printf("no device (%s)", why);
  printf("; mapped: libfastgemm.so %d, CUDA runtime %d, cuBLAS %d, driver %d (%s)\n", fastgemm, runtime, cublas, driver,
         right ? "as expected" : "NOT as expected");
  return wrong == 0 && right ? 0 : 1;
}
