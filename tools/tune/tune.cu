// SPDX-License-Identifier: Apache-2.0
// fastgemm-tune: times the pipelined kernel's tilings, each with several split counts, beside cuBLAS on
// the shapes of `fastgemm-bench sgemm --suite`, so that AUTO's measured choices (sgemm_auto_preference in
// lib/sgemm/registry.cpp) can be read off one run. The timing is the bench's (bench/measure.hpp: warm-up, an L2
// flush before every timed call, the median). A development tool: it reaches the library's internals and is not
// installed.
//   fastgemm-tune [--quick] [--csv FILE]   (--quick: only the problems of at most 1024^3 multiply-adds)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/context.hpp"
#include "gpu.hpp"
#include "measure.hpp"
#include "sgemm/registry.hpp"
#include "sgemm_suite.hpp"
#include "tune/tilings.hpp"

using fastgemm::detail::Context;
using fastgemm::detail::GemmProblem;
using fastgemm::detail::Status;

namespace {

#define TUNE_CHECK(call)                                               \
  do {                                                                 \
    cudaError_t e_ = (call);                                           \
    if (e_ != cudaSuccess) {                                           \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                    \
    }                                                                  \
  } while (0)

// A suite problem in the library's canonical form: row-major, a column-major one with its operands exchanged.
struct Shape {
  int64_t m, n, k, batch;
  bool ta, tb;
  std::string label;
};

Shape canonical(const bench::GemmShape &s) {
  Shape shape{s.m, s.n, s.k, s.batch, s.transa != FG_OP_N, s.transb != FG_OP_N, ""};
  if (s.layout == FG_COL_MAJOR) {
    std::swap(shape.m, shape.n);
    std::swap(shape.ta, shape.tb);
  }
  shape.label = s.m == s.n && s.n == s.k ? std::to_string(s.m) + "^3"
                                         : std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
  if (s.transa != FG_OP_N || s.transb != FG_OP_N)
    shape.label += std::string(" ") + (s.transa != FG_OP_N ? "T" : "N") + (s.transb != FG_OP_N ? "T" : "N");
  if (s.layout == FG_COL_MAJOR) shape.label += " col";
  if (s.batch > 1) shape.label = std::to_string(s.batch) + " x " + shape.label;
  return shape;
}

struct Buffers {
  float *a = nullptr, *b = nullptr, *c = nullptr, *ref = nullptr;
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

// The bench's median milliseconds of `run`; NaN when a call fails.
template <typename Run>
double time_ms(bench::Timer &timer, Run &&run) {
  try {
    return timer
        .measure([&] {
          const Status status = run();
          if (!status.ok()) throw bench::BenchError(status.message);
        })
        .median_ms;
  } catch (const bench::BenchError &error) {
    std::fprintf(stderr, "  %s\n", error.what());
    return NAN;
  }
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
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc)
      csv_path = argv[++i];
  }
  std::vector<tune::TilingEntry> entries;
  tune::add_large_tilings(entries);
  tune::add_small_tilings(entries);

  // The context's stream is the legacy default stream, the one the bench's timer records its events on.
  Context *context = nullptr;
  if (!Context::create(&context).ok()) {
    std::fprintf(stderr, "fastgemm-tune: no usable GPU\n");
    return 3;
  }
  cudaStream_t stream = context->stream();
  bench::Timer timer(bench::query_device(context->device().ordinal), bench::TimingPolicy{0.25, 0});

  std::vector<Shape> shapes;
  for (const bench::GemmShape &s : bench::sgemm_suite()) shapes.push_back(canonical(s));
  size_t most_a = 0, most_b = 0, most_c = 0;
  for (const Shape &s : shapes) {
    if (quick && s.m * s.n * s.k * s.batch > 1024LL * 1024 * 1024) continue;
    most_a = std::max<size_t>(most_a, s.m * s.k * s.batch);
    most_b = std::max<size_t>(most_b, s.k * s.n * s.batch);
    most_c = std::max<size_t>(most_c, s.m * s.n * s.batch);
  }
  Buffers buf;
  TUNE_CHECK(cudaMalloc(&buf.a, most_a * sizeof(float)));
  TUNE_CHECK(cudaMalloc(&buf.b, most_b * sizeof(float)));
  TUNE_CHECK(cudaMalloc(&buf.c, most_c * sizeof(float)));
  TUNE_CHECK(cudaMalloc(&buf.ref, most_c * sizeof(float)));
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
  // cuBLAS, the reference, runs as the dispatcher runs it: on the context's stream, with its cuBLAS handle.
  fastgemm::detail::RunArgs cublas_args;
  cublas_args.stream = stream;
  cublas_args.device = &context->device();
  if (!context->cublas(&cublas_args.cublas).ok()) {
    std::fprintf(stderr, "fastgemm-tune: cuBLAS could not be set up\n");
    return 3;
  }
  for (const Shape &s : shapes) {
    if (quick && s.m * s.n * s.k * s.batch > 1024LL * 1024 * 1024) continue;
    const double flop = 2.0 * s.m * s.n * s.k * s.batch;
    GemmProblem ref = problem_for(s, buf, buf.ref);
    const double cublas_ms =
        time_ms(timer, [&] { return fastgemm::detail::find_sgemm_variant(FG_SGEMM_CUBLAS)->run(ref, cublas_args); });
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
        const double ms = time_ms(timer, [&] { return e.run(p, *context, splits); });
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
    std::printf("%-16s %9.2f | %-22s %6lld %9.2f %6.2fx\n", s.label.c_str(), flop / cublas_ms * 1e-9, best_name.c_str(),
                static_cast<long long>(best_splits), flop / best_ms * 1e-9, cublas_ms / best_ms);
    std::fflush(stdout);
  }
  if (csv) std::fclose(csv);
  return 0;
}
