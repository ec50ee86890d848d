// fastgemm-tune: times the pipelined kernel's tilings, each with several split counts, beside cuBLAS on
// the shapes of `fastgemm-bench sgemm --suite`, so that the choices in lib/sgemm/auto_table.hpp can be
// read off one run. A development tool: it reaches the library's internals and is not installed.
//   fastgemm-tune [--quick] [--csv FILE]   (--quick: only the problems of at most 1024^3 multiply-adds)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "sgemm/registry.hpp"
#include "tune/tilings.hpp"

using fastgemm::detail::Context;
using fastgemm::detail::GemmProblem;
using fastgemm::detail::Status;

namespace {

#define TUNE_CHECK(call)                                                                  \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                    \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

struct Shape {
  int64_t m, n, k, batch;
  bool ta, tb;
  std::string label;
};

std::vector<Shape> suite() {
  std::vector<Shape> s;
  for (int64_t x : {128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384})
    s.push_back({x, x, x, 1, false, false, std::to_string(x) + "^3"});
  for (int64_t x : {1000, 4097, 8191}) s.push_back({x, x, x, 1, false, false, std::to_string(x) + "^3"});
  s.push_back({4096, 4096, 256, 1, false, false, "4096x4096x256"});
  s.push_back({256, 256, 16384, 1, false, false, "256x256x16384"});
  s.push_back({16384, 128, 4096, 1, false, false, "16384x128x4096"});
  s.push_back({128, 16384, 4096, 1, false, false, "128x16384x4096"});
  s.push_back({8192, 1024, 8192, 1, false, false, "8192x1024x8192"});
  s.push_back({4096, 4096, 4096, 1, false, true, "4096^3 NT"});
  s.push_back({4096, 4096, 4096, 1, true, false, "4096^3 TN"});
  s.push_back({4096, 4096, 4096, 1, true, true, "4096^3 TT"});
  s.push_back({256, 256, 256, 64, false, false, "64 x 256^3"});
  s.push_back({64, 64, 64, 1024, false, false, "1024 x 64^3"});
  s.push_back({1024, 1024, 1024, 16, false, false, "16 x 1024^3"});
  return s;
}

struct Buffers {
  float *a = nullptr, *b = nullptr, *c = nullptr, *ref = nullptr, *flush = nullptr;
  size_t flush_bytes = 0;
};

GemmProblem problem_for(const Shape &s, const Buffers &buf, float *c) {
  GemmProblem p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.batch = s.batch;
  p.a = {buf.a, s.ta ? s.m : s.k, s.m * s.k, s.ta};
  p.b = {buf.b, s.tb ? s.k : s.n, s.k * s.n, s.tb};
  p.c = c;
  p.ldc = s.n;
  p.stride_c = s.m * s.n;
  return p;
}

// Median milliseconds of `run`, L2 flushed before each call; a budget of about 0.25 s per measurement.
template <typename Run>
double time_ms(Run &&run, const Buffers &buf, cudaStream_t stream, bool *failed) {
  cudaEvent_t start, stop;
  TUNE_CHECK(cudaEventCreate(&start));
  TUNE_CHECK(cudaEventCreate(&stop));
  std::vector<double> times;
  double total = 0;
  for (int rep = 0; rep < 200 && (rep < 3 || total < 250.0); ++rep) {
    TUNE_CHECK(cudaMemsetAsync(buf.flush, rep & 0xff, buf.flush_bytes, stream));
    TUNE_CHECK(cudaEventRecord(start, stream));
    if (!run()) {
      *failed = true;
      break;
    }
    TUNE_CHECK(cudaEventRecord(stop, stream));
    TUNE_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    TUNE_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (rep > 0) times.push_back(ms);  // the first call warms up
    total += ms;
  }
  TUNE_CHECK(cudaEventDestroy(start));
  TUNE_CHECK(cudaEventDestroy(stop));
  if (times.empty()) return NAN;
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double max_relative_difference(const float *x, const float *y, size_t count) {
  std::vector<float> hx(count), hy(count);
  TUNE_CHECK(cudaMemcpy(hx.data(), x, count * sizeof(float), cudaMemcpyDeviceToHost));
  TUNE_CHECK(cudaMemcpy(hy.data(), y, count * sizeof(float), cudaMemcpyDeviceToHost));
  double scale = 0, diff = 0;
  for (size_t i = 0; i < count; ++i) {
    scale = std::max(scale, std::fabs(static_cast<double>(hy[i])));
    const double d = std::fabs(static_cast<double>(hx[i]) - hy[i]);
    diff = std::isnan(d) ? INFINITY : std::max(diff, d);
  }
  return diff / std::max(scale, 1e-30);
}

}  // namespace

int main(int argc, char **argv) {
  bool quick = false;
  const char *csv_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
  }
  std::vector<tune::TilingEntry> entries;
  tune::add_large_tilings(entries);
  tune::add_small_tilings(entries);

  Context *context = nullptr;
  if (!Context::create(&context).ok()) {
    std::fprintf(stderr, "fastgemm-tune: no usable GPU\n");
    return 3;
  }
  cudaStream_t stream = context->stream();
  cublasHandle_t cublas = nullptr;
  if (!context->cublas(&cublas).ok()) return 1;

  const std::vector<Shape> shapes = suite();
  size_t most_a = 0, most_b = 0, most_c = 0;
  for (const Shape &s : shapes) {
    if (quick && s.m * s.n * s.k * s.batch > 1024LL * 1024 * 1024) continue;
    most_a = std::max<size_t>(most_a, s.m * s.k * s.batch);
    most_b = std::max<size_t>(most_b, s.k * s.n * s.batch);
    most_c = std::max<size_t>(most_c, s.m * s.n * s.batch);
  }
  Buffers buf;
  buf.flush_bytes = 256u << 20;
  TUNE_CHECK(cudaMalloc(&buf.a, most_a * sizeof(float)));
  TUNE_CHECK(cudaMalloc(&buf.b, most_b * sizeof(float)));
  TUNE_CHECK(cudaMalloc(&buf.c, most_c * sizeof(float)));
  TUNE_CHECK(cudaMalloc(&buf.ref, most_c * sizeof(float)));
  TUNE_CHECK(cudaMalloc(&buf.flush, buf.flush_bytes));
  {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> h(std::max(most_a, most_b));
    for (float &x : h) x = u(rng);
    TUNE_CHECK(cudaMemcpy(buf.a, h.data(), most_a * sizeof(float), cudaMemcpyHostToDevice));
    for (float &x : h) x = u(rng);
    TUNE_CHECK(cudaMemcpy(buf.b, h.data(), most_b * sizeof(float), cudaMemcpyHostToDevice));
  }
  FILE *csv = csv_path ? std::fopen(csv_path, "w") : nullptr;
  if (csv) std::fprintf(csv, "shape,m,n,k,batch,ta,tb,tiling,splits,ms,tflops,cublas_ms,ratio,max_rel_diff\n");

  std::printf("%-16s %9s | %-22s %6s %9s %7s\n", "shape", "cuBLAS TF", "best tiling", "splits", "TFLOPS", "ratio");
  const int sm_count = context->device().sm_count;
  for (const Shape &s : shapes) {
    if (quick && s.m * s.n * s.k * s.batch > 1024LL * 1024 * 1024) continue;
    const double flop = 2.0 * s.m * s.n * s.k * s.batch;
    GemmProblem ref = problem_for(s, buf, buf.ref);
    const auto cublas_run = [&] {
      return fastgemm::detail::find_sgemm_variant(FG_SGEMM_CUBLAS)->run(ref, *context).ok();
    };
    bool failed = false;
    const double cublas_ms = time_ms(cublas_run, buf, stream, &failed);
    TUNE_CHECK(cudaStreamSynchronize(stream));
    double best_ms = INFINITY;
    std::string best_name;
    int64_t best_splits = 1;
    for (const tune::TilingEntry &e : entries) {
      GemmProblem p = problem_for(s, buf, buf.c);
      if (!e.supported(p, context->device()).ok()) continue;
      const int64_t tiles = s.batch * ((s.m + e.block_m - 1) / e.block_m) * ((s.n + e.block_n - 1) / e.block_n);
      for (int64_t splits : {1, 2, 4, 8, 16, 32}) {
        if (splits > 1 && (tiles * splits > 8 * sm_count || s.k / splits < 32)) continue;
        TUNE_CHECK(cudaMemsetAsync(buf.c, 0xff, s.m * s.n * s.batch * sizeof(float), stream));
        bool bad = !e.run(p, *context, splits).ok();
        TUNE_CHECK(cudaStreamSynchronize(stream));
        const double diff = bad ? INFINITY : max_relative_difference(buf.c, buf.ref, s.m * s.n * s.batch);
        if (diff > 1e-4) {
          std::printf("  %s splits %lld on %s: WRONG (max relative difference %.3g)\n", e.name,
                      static_cast<long long>(splits), s.label.c_str(), diff);
          continue;
        }
        const double ms = time_ms([&] { return e.run(p, *context, splits).ok(); }, buf, stream, &bad);
        if (csv)
          std::fprintf(csv, "%s,%lld,%lld,%lld,%lld,%d,%d,%s,%lld,%.5f,%.3f,%.5f,%.4f,%.3g\n", s.label.c_str(),
                       (long long)s.m, (long long)s.n, (long long)s.k, (long long)s.batch, s.ta, s.tb, e.name,
                       (long long)splits, ms, flop / ms * 1e-9, cublas_ms, cublas_ms / ms, diff);
        if (ms < best_ms) {
          best_ms = ms;
          best_name = e.name;
          best_splits = splits;
        }
      }
    }
    std::printf("%-16s %9.2f | %-22s %6lld %9.2f %6.2fx\n", s.label.c_str(), flop / cublas_ms * 1e-9,
                best_name.c_str(), static_cast<long long>(best_splits), flop / best_ms * 1e-9, cublas_ms / best_ms);
    std::fflush(stdout);
  }
  if (csv) std::fclose(csv);
  return 0;
}
