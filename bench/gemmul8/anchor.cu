// SPDX-License-Identifier: Apache-2.0
// gemmul8-anchor: GEMMul8's FP32 gemm on INT8 tensor cores (Ozaki scheme II, fast and accurate scaling),
// timed in one process beside cuBLAS SGEMM (FP32, TF32 off) and, given libfastgemm.so.0, beside fastgemm's
// FG_MATH_FP32_EMULATED. Each method is also checked against a double-precision reference on two input
// families. Built by build.sh against GEMMul8's own objects; see README.md.
#include "anchor_support.cuh"

namespace {

using namespace anchor;

// ------------------------------------------------------------------------------------------------
// One shape: every method on the uniform family (timed and checked), then on the wide one (checked).
// ------------------------------------------------------------------------------------------------
struct Method {
  std::string name;
  std::function<void()> call;             // C := A B on the bench stream
  std::function<std::string()> note;      // what the call ran, after it (may be empty)
  std::vector<double> *phases = nullptr;  // GEMMul8's phase sums of the timed calls
};

std::vector<Row> run_shape(const Options &options, const Shape &shape, Bench &bench, cublasHandle_t sgemm_handle,
                           cublasHandle_t gemmul8_handle, cublasHandle_t reference_handle, Fastgemm *fastgemm,
                           FILE *csv_file) {
  const int64_t m = shape.m, n = shape.n, k = shape.k;
  const int64_t count_a = m * k, count_b = k * n, count_c = m * n;
  float *A = nullptr, *B = nullptr, *C = nullptr;
  double *R = nullptr;
  void *work = nullptr;
  const size_t work_bytes = gemmul8::workSize<false, gemmul8::Backend::INT8, gemmul8::Func::gemm>(
      static_cast<size_t>(m), static_cast<size_t>(n), static_cast<size_t>(k), options.moduli);
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::fprintf(stderr,
               "gemmul8-anchor: %s: A, B, C %.2f GiB, reference %.2f GiB (+%.2f GiB while it is made), GEMMul8 "
               "workspace %.2f GiB; %.2f GiB free\n",
               shape_text(shape).c_str(), 4.0 * (count_a + count_b + count_c) / (1 << 30), 8.0 * count_c / (1 << 30),
               8.0 * (count_a + count_b) / (1 << 30), static_cast<double>(work_bytes) / (1 << 30),
               static_cast<double>(free_bytes) / (1 << 30));
  CUDA_CHECK(cudaMalloc(&A, count_a * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&B, count_b * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&C, count_c * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&R, count_c * sizeof(double)));
  CUDA_CHECK(cudaMalloc(&work, work_bytes));

  const float alpha = 1.0f, beta = 0.0f;
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);

  std::vector<Method> methods;
  methods.push_back({"cublas_sgemm",
                     [&] {
                       CUBLAS_CHECK(cublasSgemm(sgemm_handle, CUBLAS_OP_N, CUBLAS_OP_N, mi, ni, ki, &alpha, A, mi, B,
                                                ki, &beta, C, mi));
                     },
                     nullptr});
  std::vector<double> phases_fast, phases_accurate;
  auto gemmul8_call = [&](bool fastmode, std::vector<double> *phases) {
    const std::vector<double> t = gemmul8::gemm<float, gemmul8::Backend::INT8>(
        gemmul8_handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<size_t>(m), static_cast<size_t>(n),
        static_cast<size_t>(k), &alpha, A, static_cast<size_t>(m), B, static_cast<size_t>(k), &beta, C,
        static_cast<size_t>(m), options.moduli, fastmode, work);
    CUDA_CHECK(cudaGetLastError());
    double sum = 0;
    for (double phase : t) sum += phase;
    if (phases != nullptr) phases->push_back(sum * 1e3);
  };
  const std::string moduli = std::to_string(options.moduli);
  methods.push_back({"gemmul8_int8_fast_" + moduli, [&] { gemmul8_call(true, &phases_fast); }, nullptr, &phases_fast});
  if (options.accurate) {
    methods.push_back(
        {"gemmul8_int8_accurate_" + moduli, [&] { gemmul8_call(false, &phases_accurate); }, nullptr, &phases_accurate});
  }
  if (fastgemm != nullptr) {
    methods.push_back({"fastgemm_fp32_emulated",
                       [&] {
                         fastgemm->check(fastgemm->sgemm(fastgemm->handle, FG_COL_MAJOR, FG_OP_N, FG_OP_N, m, n, k,
                                                         alpha, A, m, B, k, beta, C, m),
                                         "fg_sgemm");
                       },
                       [&] { return fastgemm->last_call(); }});
  }

  std::vector<Row> rows(methods.size());
  for (size_t i = 0; i < methods.size(); ++i) {
    rows[i].shape = shape;
    rows[i].method = methods[i].name;
  }

  for (Family family : {Family::kUniform, Family::kWideExponent}) {
    const int f = family == Family::kUniform ? 0 : 1;
    const bool wide = family == Family::kWideExponent;
    fill_kernel<<<grid_for(count_a), kThreads, 0, bench.stream>>>(A, count_a, options.seed * 2 + f * 7919, wide);
    CUDA_CHECK(cudaGetLastError());
    fill_kernel<<<grid_for(count_b), kThreads, 0, bench.stream>>>(B, count_b, options.seed * 2 + 1 + f * 7919, wide);
    CUDA_CHECK(cudaGetLastError());

    // The reference: the same inputs in double, multiplied by cublasDgemm (pedantic math: plain FP64).
    {
      double *Ad = nullptr, *Bd = nullptr;
      CUDA_CHECK(cudaMalloc(&Ad, count_a * sizeof(double)));
      CUDA_CHECK(cudaMalloc(&Bd, count_b * sizeof(double)));
      to_double_kernel<<<grid_for(count_a), kThreads, 0, bench.stream>>>(A, Ad, count_a);
      CUDA_CHECK(cudaGetLastError());
      to_double_kernel<<<grid_for(count_b), kThreads, 0, bench.stream>>>(B, Bd, count_b);
      CUDA_CHECK(cudaGetLastError());
      const double one = 1.0, zero = 0.0;
      CUBLAS_CHECK(
          cublasDgemm(reference_handle, CUBLAS_OP_N, CUBLAS_OP_N, mi, ni, ki, &one, Ad, mi, Bd, ki, &zero, R, mi));
      CUDA_CHECK(cudaStreamSynchronize(bench.stream));
      CUDA_CHECK(cudaFree(Ad));
      CUDA_CHECK(cudaFree(Bd));
    }
    for (size_t i = 0; i < methods.size(); ++i) {
      const Method &method = methods[i];
      std::fprintf(stderr, "gemmul8-anchor: %s %s %s\n", shape_text(shape).c_str(), family_name(family),
                   method.name.c_str());
      CUDA_CHECK(cudaMemsetAsync(C, 0, count_c * sizeof(float), bench.stream));
      method.call();
      CUDA_CHECK(cudaStreamSynchronize(bench.stream));
      if (method.note) rows[i].note[f] = method.note();
      rows[i].error[f] = bench.normwise_error(C, R, count_c);
      if (family == Family::kUniform) {
        if (method.phases != nullptr) method.phases->clear();
        rows[i].timing = bench.time(options, method.call);
        if (method.phases != nullptr) {
          // Only the timed calls' phases: the warm-ups came first.
          std::vector<double> timed(method.phases->end() - options.repeats, method.phases->end());
          rows[i].phases_ms = median_of(timed);
        }
      }
    }
  }

  CUDA_CHECK(cudaFree(A));
  CUDA_CHECK(cudaFree(B));
  CUDA_CHECK(cudaFree(C));
  CUDA_CHECK(cudaFree(R));
  CUDA_CHECK(cudaFree(work));

  const double cublas_ms = rows[0].timing.median_ms;
  for (const Row &row : rows) {
    print_csv(stdout, row, cublas_ms);
    if (csv_file != nullptr) print_csv(csv_file, row, cublas_ms);
  }
  return rows;
}

void print_table(const std::vector<std::vector<Row>> &all) {
  std::printf("\n%-18s %-26s %10s %8s %9s %11s %11s  %s\n", "shape (MxNxK)", "method", "ms", "TFLOPS", "x cuBLAS",
              "err uniform", "err wide", "note (uniform / wide)");
  for (const std::vector<Row> &rows : all) {
    const double cublas_ms = rows[0].timing.median_ms;
    for (const Row &row : rows) {
      const double flops = 2.0 * row.shape.m * row.shape.n * row.shape.k;
      std::string note = row.note[0];
      if (!row.note[1].empty() && row.note[1] != row.note[0]) note += " / " + row.note[1];
      std::printf("%-18s %-26s %10.3f %8.2f %9.3f %11.3e %11.3e  %s\n", shape_text(row.shape).c_str(),
                  row.method.c_str(), row.timing.median_ms, flops / (row.timing.median_ms * 1e-3) / 1e12,
                  cublas_ms / row.timing.median_ms, row.error[0], row.error[1], note.c_str());
    }
  }
}

}  // namespace

int main(int argc, char **argv) {
  const Options options = parse_options(argc, argv);

  CUDA_CHECK(cudaSetDevice(options.device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, options.device));
  int runtime_version = 0, driver_version = 0;
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime_version));
  CUDA_CHECK(cudaDriverGetVersion(&driver_version));

  Bench bench;
  CUDA_CHECK(cudaStreamCreateWithFlags(&bench.stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaEventCreate(&bench.start));
  CUDA_CHECK(cudaEventCreate(&bench.stop));
  CUDA_CHECK(cudaMalloc(&bench.flush, kFlushBytes));
  CUDA_CHECK(cudaMalloc(&bench.sums, 2 * sizeof(double)));

  // cuBLAS SGEMM: FP32 math (CUBLAS_DEFAULT_MATH does not use TF32).
  cublasHandle_t sgemm_handle = nullptr, gemmul8_handle = nullptr, reference_handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&sgemm_handle));
  CUBLAS_CHECK(cublasSetStream(sgemm_handle, bench.stream));
  CUBLAS_CHECK(cublasSetMathMode(sgemm_handle, CUBLAS_DEFAULT_MATH));
  // GEMMul8 runs its INT8 products through its own handle, with the 32 MiB workspace its documentation asks for.
  void *gemmul8_cublas_workspace = nullptr;
  CUBLAS_CHECK(cublasCreate(&gemmul8_handle));
  CUBLAS_CHECK(cublasSetStream(gemmul8_handle, bench.stream));
  CUDA_CHECK(cudaMalloc(&gemmul8_cublas_workspace, kGemmul8CublasWorkspace));
  CUBLAS_CHECK(cublasSetWorkspace(gemmul8_handle, gemmul8_cublas_workspace, kGemmul8CublasWorkspace));
  // The FP64 reference: pedantic math keeps it native FP64 (no emulation whatever the environment says).
  CUBLAS_CHECK(cublasCreate(&reference_handle));
  CUBLAS_CHECK(cublasSetStream(reference_handle, bench.stream));
  CUBLAS_CHECK(cublasSetMathMode(reference_handle, CUBLAS_PEDANTIC_MATH));
  int cublas_version = 0;
  CUBLAS_CHECK(cublasGetVersion(sgemm_handle, &cublas_version));

  Fastgemm fastgemm_library;
  Fastgemm *fastgemm = nullptr;
  if (!options.fastgemm_path.empty()) {
    fastgemm_library.open(options.fastgemm_path, bench.stream);
    fastgemm = &fastgemm_library;
  }

  std::printf("# device %d: %s (sm_%d%d, %d SMs, %.1f GiB), driver %d, runtime %d, cuBLAS %d\n", options.device,
              prop.name, prop.major, prop.minor, prop.multiProcessorCount,
              static_cast<double>(prop.totalGlobalMem) / (1 << 30), driver_version, runtime_version, cublas_version);
  std::printf("# GEMMul8 %s: gemmul8::gemm<float, Backend::INT8>, %d moduli, fast%s scaling\n", gemmul8::version_string,
              options.moduli, options.accurate ? " and accurate" : "");
  if (fastgemm != nullptr) {
    std::printf("# fastgemm %s (version %d): fg_sgemm, FG_MATH_FP32_EMULATED, FG_SGEMM_AUTO\n",
                options.fastgemm_path.c_str(), fastgemm->version ? fastgemm->version() : -1);
  }
  std::printf(
      "# timing: %d warm-up calls, then the median of %d calls, each after a 100 MiB write (L2 flush), between "
      "two CUDA events on one stream\n",
      options.warmup, options.repeats);
  std::printf(
      "# error: ||C - R||_F / ||R||_F, R from cublasDgemm on the same inputs; uniform: U[-1,1); wide: U[-1,1) "
      "times 2^e, e uniform in [-16,16]\n");
  const char *tf32_override = std::getenv("NVIDIA_TF32_OVERRIDE");
  if (tf32_override != nullptr) std::printf("# NVIDIA_TF32_OVERRIDE=%s\n", tf32_override);

  FILE *csv_file = nullptr;
  if (!options.csv_path.empty()) {
    csv_file = std::fopen(options.csv_path.c_str(), "w");
    if (csv_file == nullptr) die("cannot write %s: %s", options.csv_path.c_str(), std::strerror(errno));
    print_header(csv_file);
  }
  print_header(stdout);

  std::vector<std::vector<Row>> all;
  for (const Shape &shape : options.shapes) {
    all.push_back(run_shape(options, shape, bench, sgemm_handle, gemmul8_handle, reference_handle, fastgemm, csv_file));
  }
  print_table(all);

  if (csv_file != nullptr) std::fclose(csv_file);
  if (fastgemm != nullptr) fastgemm->close();
  CUBLAS_CHECK(cublasDestroy(sgemm_handle));
  CUBLAS_CHECK(cublasDestroy(gemmul8_handle));
  CUBLAS_CHECK(cublasDestroy(reference_handle));
  CUDA_CHECK(cudaFree(gemmul8_cublas_workspace));
  CUDA_CHECK(cudaFree(bench.flush));
  CUDA_CHECK(cudaFree(bench.sums));
  CUDA_CHECK(cudaEventDestroy(bench.start));
  CUDA_CHECK(cudaEventDestroy(bench.stop));
  CUDA_CHECK(cudaStreamDestroy(bench.stream));
  return 0;
}
