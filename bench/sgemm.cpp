// SPDX-License-Identifier: Apache-2.0
// sgemm problems: C = op(A) op(B) through fg_sgemm, or fg_sgemm_strided_batched for batches; with --host
// or --pinned, through fg_sgemm_host on operands in host memory, beside the same problem on the device.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>

#include "distributions.hpp"
#include "error_measures.hpp"
#include "gpu.hpp"
#include "ops.hpp"
#include "products.hpp"
#include "sgemm_suite.hpp"
#include "text.hpp"

namespace bench {
namespace {

// Distinct seeds keep A and B different matrices.
constexpr uint64_t kSeedA = 0xA;
constexpr uint64_t kSeedB = 0xB;

std::string trans_name(const GemmShape &s) {
  return std::string(s.transa == FG_OP_N ? "N" : "T") + (s.transb == FG_OP_N ? "N" : "T");
}

const char *layout_name(fg_layout_t layout) { return layout == FG_ROW_MAJOR ? "row" : "col"; }

size_t float_bytes(int64_t count) { return static_cast<size_t>(count) * sizeof(float); }

OperandLayout operand_layout(const GemmShape &s, bool is_a) {
  const LeadingDimensions ld = leading_dimensions(s);
  OperandLayout layout;
  layout.is_a = is_a;
  layout.rows = is_a ? s.m : s.k;
  layout.cols = is_a ? s.k : s.n;
  layout.batch = s.batch;
  layout.row_major = s.layout == FG_ROW_MAJOR;
  layout.transposed = (is_a ? s.transa : s.transb) != FG_OP_N;
  layout.ld = is_a ? ld.a : ld.b;
  layout.stride = layout.rows * layout.cols;
  layout.depth = s.k;
  return layout;
}

// A and B of the distribution on the device, and |A||B| in double, which the result check divides by.
struct Operands {
  Operands(const GemmShape &shape, Distribution distribution)
      : a(float_bytes(a_elements(shape))),
        b(float_bytes(b_elements(shape))),
        absolute(static_cast<size_t>(c_elements(shape)) * sizeof(double)) {
    fill_distribution(a.as<float>(), operand_layout(shape, true), distribution, kSeedA);
    fill_distribution(b.as<float>(), operand_layout(shape, false), distribution, kSeedB);
    double_products(shape, a.as<float>(), b.as<float>(), nullptr, absolute.as<double>());
  }
  DeviceBuffer a;
  DeviceBuffer b;
  DeviceBuffer absolute;
};

class SgemmWorkload : public Workload {
 public:
  SgemmWorkload(const GemmShape &shape, Distribution distribution)
      : shape_(shape),
        ld_(leading_dimensions(shape)),
        operands_(shape, distribution),
        c_(float_bytes(c_elements(shape))),
        reference_(c_.bytes()) {}

  fg_status_t run(fg_handle_t handle, Target target) override {
    const GemmShape &s = shape_;
    const float *a = operands_.a.as<float>(), *b = operands_.b.as<float>();
    float *c = (target == Target::reference ? reference_ : c_).as<float>();
    if (s.batch == 1) {
      return fg_sgemm(handle, s.layout, s.transa, s.transb, s.m, s.n, s.k, 1.0f, a, ld_.a, b, ld_.b, 0.0f, c, ld_.c);
    }
    return fg_sgemm_strided_batched(handle, s.layout, s.transa, s.transb, s.m, s.n, s.k, 1.0f, a, ld_.a, s.m * s.k, b,
                                    ld_.b, s.k * s.n, 0.0f, c, ld_.c, s.m * s.n, s.batch);
  }

  void run_direct_vendor() override {
    cublas_product(shape_, operands_.a.as<float>(), operands_.b.as<float>(), c_.as<float>());
  }

  void poison_output() override { poison(c_.get(), c_.bytes()); }

  double relative_error() const override {
    return largest_error_over_absolute(c_.as<float>(), reference_.as<float>(), operands_.absolute.as<double>(),
                                       c_elements(shape_));
  }

 private:
  GemmShape shape_;
  LeadingDimensions ld_;
  Operands operands_;
  DeviceBuffer c_;
  DeviceBuffer reference_;
};

// Host memory of one operand: pageable (new[]) or pinned (cudaMallocHost).
class HostBuffer {
 public:
  HostBuffer(size_t bytes, bool pinned) : pinned_(pinned) {
    if (pinned) {
      void *data = nullptr;
      check_cuda(cudaMallocHost(&data, bytes), "cudaMallocHost");
      data_ = static_cast<float *>(data);
    } else {
      owned_.reset(new float[bytes / sizeof(float)]);
      data_ = owned_.get();
    }
  }
  ~HostBuffer() {
    if (pinned_) (void)cudaFreeHost(data_);
  }
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &operator=(const HostBuffer &) = delete;
  float *get() const { return data_; }

 private:
  bool pinned_;
  std::unique_ptr<float[]> owned_;
  float *data_ = nullptr;
};

// Operands in host memory: the output through fg_sgemm_host, the reference device-resident (cuBLAS, as
// for every case), compared on the device after C is copied there.
class HostSgemmWorkload : public Workload {
 public:
  HostSgemmWorkload(const GemmShape &shape, Distribution distribution)
      : shape_(shape),
        ld_(leading_dimensions(shape)),
        operands_(shape, distribution),
        reference_(float_bytes(c_elements(shape))),
        copied_c_(reference_.bytes()),
        a_host_(operands_.a.bytes(), shape.memory == "pinned"),
        b_host_(operands_.b.bytes(), shape.memory == "pinned"),
        c_host_(reference_.bytes(), shape.memory == "pinned") {
    check_cuda(cudaMemcpy(a_host_.get(), operands_.a.get(), operands_.a.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");
    check_cuda(cudaMemcpy(b_host_.get(), operands_.b.get(), operands_.b.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");
  }

  fg_status_t run(fg_handle_t handle, Target target) override {
    const GemmShape &s = shape_;
    if (target == Target::reference)
      return fg_sgemm(handle, s.layout, s.transa, s.transb, s.m, s.n, s.k, 1.0f, operands_.a.as<float>(), ld_.a,
                      operands_.b.as<float>(), ld_.b, 0.0f, reference_.as<float>(), ld_.c);
    return fg_sgemm_host(handle, s.layout, s.transa, s.transb, s.m, s.n, s.k, 1.0f, a_host_.get(), ld_.a, b_host_.get(),
                         ld_.b, 0.0f, c_host_.get(), ld_.c);
  }

  // The baseline of a host-memory problem is cuBLAS on device-resident copies of its operands: its ratio is
  // the share of the device-resident speed that fg_sgemm_host reaches.
  void run_direct_vendor() override {
    cublas_product(shape_, operands_.a.as<float>(), operands_.b.as<float>(), copied_c_.as<float>());
    direct_ran_last_ = true;
  }

  void poison_output() override {
    std::memset(c_host_.get(), 0xFF, reference_.bytes());
    poison(copied_c_.get(), copied_c_.bytes());
    direct_ran_last_ = false;
  }

  double relative_error() const override {
    if (!direct_ran_last_)
      check_cuda(cudaMemcpy(copied_c_.get(), c_host_.get(), copied_c_.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy");
    return largest_error_over_absolute(copied_c_.as<float>(), reference_.as<float>(), operands_.absolute.as<double>(),
                                       c_elements(shape_));
  }

 private:
  GemmShape shape_;
  LeadingDimensions ld_;
  Operands operands_;
  DeviceBuffer reference_;
  DeviceBuffer copied_c_;
  HostBuffer a_host_;
  HostBuffer b_host_;
  HostBuffer c_host_;
  bool direct_ran_last_ = false;  // the output is then copied_c_, on the device
};

// Row-major NN operands in pageable host memory too large for the device together: the output through
// fg_sgemm_host, checked on a sample of C's elements against double dot products on the host. The
// baseline is the device-resident speed on the same problem: cuBLAS on a device-resident slab of k / 10
// (the first columns of A and rows of B), called ten times, the same flops on the same m and n.
class BeyondDeviceWorkload : public Workload {
 public:
  static constexpr int64_t kSlabs = 10;
  static constexpr int kSamples = 64;

  explicit BeyondDeviceWorkload(const GemmShape &shape)
      : shape_(shape),
        slab_(slab_shape(shape)),
        a_(new float[elements(shape.m, shape.k)]),
        b_(new float[elements(shape.k, shape.n)]),
        c_(new float[elements(shape.m, shape.n)]),
        slab_a_(float_bytes(a_elements(slab_))),
        slab_b_(float_bytes(b_elements(slab_))),
        slab_c_(float_bytes(c_elements(slab_))),
        slab_c_host_(new float[elements(shape.m, shape.n)]) {
    if (shape.layout != FG_ROW_MAJOR || shape.transa != FG_OP_N || shape.transb != FG_OP_N)
      throw BenchError("a problem larger than the device is run row-major NN only");
    fill(a_.get(), static_cast<size_t>(shape.m * shape.k), kSeedA);
    fill(b_.get(), static_cast<size_t>(shape.k * shape.n), kSeedB);
    check_cuda(cudaMemcpy2D(slab_a_.get(), static_cast<size_t>(slab_.k) * sizeof(float), a_.get(),
                            static_cast<size_t>(shape.k) * sizeof(float), static_cast<size_t>(slab_.k) * sizeof(float),
                            static_cast<size_t>(shape.m), cudaMemcpyHostToDevice),
               "cudaMemcpy2D");
    check_cuda(cudaMemcpy(slab_b_.get(), b_.get(), slab_b_.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy");
  }

  static bool fits_on_device(const GemmShape &shape) {
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
      (void)cudaGetLastError();
      return true;
    }
    const double bytes = 4.0 * static_cast<double>(a_elements(shape) + b_elements(shape) + c_elements(shape));
    return bytes < static_cast<double>(total_bytes);
  }

  fg_status_t run(fg_handle_t handle, Target) override {
    const GemmShape &s = shape_;
    direct_ran_last_ = false;
    return fg_sgemm_host(handle, FG_ROW_MAJOR, FG_OP_N, FG_OP_N, s.m, s.n, s.k, 1.0f, a_.get(), s.k, b_.get(), s.n,
                         0.0f, c_.get(), s.n);
  }

  void run_direct_vendor() override {
    for (int64_t slab = 0; slab < kSlabs; ++slab)
      cublas_product(slab_, slab_a_.as<float>(), slab_b_.as<float>(), slab_c_.as<float>());
    direct_ran_last_ = true;
  }

  void poison_output() override {
    std::memset(c_.get(), 0xFF, static_cast<size_t>(shape_.m * shape_.n) * sizeof(float));
    poison(slab_c_.get(), slab_c_.bytes());
  }

  double relative_error() const override {
    const float *result = c_.get();
    int64_t depth = shape_.k;
    if (direct_ran_last_) {
      check_cuda(cudaMemcpy(slab_c_host_.get(), slab_c_.get(), slab_c_.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");
      result = slab_c_host_.get();
      depth = slab_.k;
    }
    double errors[kSamples] = {};
    std::vector<std::thread> threads;
    for (int sample = 0; sample < kSamples; ++sample)
      threads.emplace_back([&, sample] {
        const int64_t i = (sample * 7919 + 13) % shape_.m, j = (sample * 104729 + 7) % shape_.n;
        double sum = 0.0, absolute = 0.0;
        for (int64_t l = 0; l < depth; ++l) {
          const double term = static_cast<double>(a_[i * shape_.k + l]) * b_[l * shape_.n + j];
          sum += term;
          absolute += std::fabs(term);
        }
        errors[sample] = std::fabs(result[i * shape_.n + j] - sum) / absolute;
      });
    for (std::thread &thread : threads) thread.join();
    double worst = 0.0;
    for (double error : errors)
      if (!(error <= worst)) worst = error;  // a NaN stays
    return worst;
  }

 private:
  static size_t elements(int64_t rows, int64_t cols) { return static_cast<size_t>(rows) * static_cast<size_t>(cols); }
  static GemmShape slab_shape(const GemmShape &shape) {
    GemmShape slab = shape;
    slab.k = std::max<int64_t>(1, shape.k / kSlabs);
    slab.memory = "device";
    return slab;
  }
  // Uniform in (-1, 1), by every host thread: tens of GB take seconds, not minutes.
  static void fill(float *data, size_t count, uint64_t seed) {
    const size_t threads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> workers;
    for (size_t t = 0; t < threads; ++t)
      workers.emplace_back([=] {
        const size_t begin = count / threads * t, end = t + 1 == threads ? count : count / threads * (t + 1);
        uint64_t state = seed * 0x9E3779B97F4A7C15ull + (t + 1) * 0xBF58476D1CE4E5B9ull;
        for (size_t i = begin; i < end; ++i) {
          state ^= state << 13;
          state ^= state >> 7;
          state ^= state << 17;
          data[i] = static_cast<float>(static_cast<double>(state >> 11) * 0x1.0p-52 - 1.0);
        }
      });
    for (std::thread &worker : workers) worker.join();
  }

  GemmShape shape_;
  GemmShape slab_;
  std::unique_ptr<float[]> a_, b_, c_;
  DeviceBuffer slab_a_, slab_b_, slab_c_;
  std::unique_ptr<float[]> slab_c_host_;
  bool direct_ran_last_ = false;
};

class SgemmCase : public BenchCase {
 public:
  SgemmCase(const GemmShape &shape, Distribution distribution) : shape_(shape), distribution_(distribution) {}

  std::string describe() const override {
    const GemmShape &s = shape_;
    std::string text = format("%s %s  M N K = %5lld %5lld %5lld", layout_name(s.layout), trans_name(s).c_str(),
                              static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k));
    if (s.batch > 1) text += format(", batch %lld", static_cast<long long>(s.batch));
    if (s.memory != "device") text += ", " + s.memory + " host";
    if (distribution_ != Distribution::uniform) text += std::string(", ") + distribution_info(distribution_).name;
    return text;
  }

  std::vector<Field> fields() const override {
    return {text_field("layout", layout_name(shape_.layout)),
            text_field("trans", trans_name(shape_)),
            integer_field("m", shape_.m),
            integer_field("n", shape_.n),
            integer_field("k", shape_.k),
            integer_field("batch", shape_.batch),
            text_field("memory", shape_.memory),
            text_field("dist", distribution_info(distribution_).name)};
  }

  double work_per_call() const override {
    return 2.0 * static_cast<double>(shape_.m) * static_cast<double>(shape_.n) * static_cast<double>(shape_.k) *
           static_cast<double>(shape_.batch);
  }

  double tolerance() const override { return bench::tolerance<float>(shape_.k); }

  std::unique_ptr<Workload> allocate() const override {
    if (shape_.memory == "pageable" && !BeyondDeviceWorkload::fits_on_device(shape_))
      return std::make_unique<BeyondDeviceWorkload>(shape_);
    if (shape_.memory != "device") return std::make_unique<HostSgemmWorkload>(shape_, distribution_);
    return std::make_unique<SgemmWorkload>(shape_, distribution_);
  }

 private:
  GemmShape shape_;
  Distribution distribution_;
};

GemmShape shape(int64_t m, int64_t n, int64_t k) {
  GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  return s;
}

std::array<fg_op_t, 2> parse_trans(const std::string &text) {
  const auto op = [&](char c) {
    if (c == 'N') return FG_OP_N;
    if (c == 'T') return FG_OP_T;
    throw UsageError("--trans '" + text + "' is not NN, NT, TN or TT");
  };
  if (text.size() != 2) throw UsageError("--trans '" + text + "' is not NN, NT, TN or TT");
  return {op(text[0]), op(text[1])};
}

fg_layout_t parse_layout(const std::string &text) {
  if (text == "row") return FG_ROW_MAJOR;
  if (text == "col") return FG_COL_MAJOR;
  throw UsageError("--layout '" + text + "' is not row or col");
}

std::vector<GemmShape> suite_shapes(const Options &options) {
  if (!options.sizes.empty() || !options.shapes.empty() || !options.trans.empty() || !options.layouts.empty() ||
      options.batch) {
    throw UsageError("--suite fixes its own problems: it takes no --sizes, --shape, --trans, --layout or --batch");
  }
  return sgemm_suite();
}

// Every size and shape asked for, in each layout and transpose asked for.
std::vector<GemmShape> requested_shapes(const Options &options) {
  std::vector<std::array<int64_t, 3>> dimensions;
  for (int64_t size : options.sizes) dimensions.push_back({size, size, size});
  for (const std::string &text : options.shapes) {
    const std::vector<int64_t> mnk = parse_dimensions(text, 3, "MxNxK");
    dimensions.push_back({mnk[0], mnk[1], mnk[2]});
  }
  if (dimensions.empty()) {
    for (int64_t size : classic_sizes()) dimensions.push_back({size, size, size});
  }
  std::vector<fg_layout_t> layouts;
  for (const std::string &text : options.layouts) layouts.push_back(parse_layout(text));
  if (layouts.empty()) layouts.push_back(FG_ROW_MAJOR);
  std::vector<std::array<fg_op_t, 2>> transposes;
  for (const std::string &text : options.trans) transposes.push_back(parse_trans(text));
  if (transposes.empty()) transposes.push_back({FG_OP_N, FG_OP_N});

  std::vector<GemmShape> shapes;
  for (const auto &[m, n, k] : dimensions) {
    for (fg_layout_t layout : layouts) {
      for (const auto &[transa, transb] : transposes) {
        GemmShape s = shape(m, n, k);
        s.batch = options.batch.value_or(1);
        s.layout = layout;
        s.transa = transa;
        s.transb = transb;
        shapes.push_back(s);
      }
    }
  }
  return shapes;
}

}  // namespace

const AlgoFamily &sgemm_algos() {
  static const AlgoFamily family = {
      [](int id) {
        return id == kDirectVendorId ? "cublas_direct" : fg_sgemm_algo_name(static_cast<fg_sgemm_algo_t>(id));
      },
      [](fg_handle_t handle, int id) { return fg_set_sgemm_algo(handle, static_cast<fg_sgemm_algo_t>(id)); },
      "fg_set_sgemm_algo",
      [](fg_handle_t handle, int *id) {
        fg_sgemm_algo_t algo = FG_SGEMM_AUTO;
        const fg_status_t status = fg_get_last_sgemm_algo(handle, &algo);
        *id = algo;
        return status;
      },
      "fg_get_last_sgemm_algo",
      FG_SGEMM_CUBLAS,
      true,
      [](fg_handle_t handle) {
        fg_math_mode_t mode = FG_MATH_FP32;
        check_fastgemm(fg_get_math_mode(handle, &mode), "fg_get_math_mode");
        return fg_math_mode_name(mode);
      },
      nullptr,
      [](fg_handle_t handle, int *moduli) {
        int64_t fp32_elements = 0;
        return fg_get_last_sgemm_emulation(handle, moduli, &fp32_elements);
      },
  };
  return family;
}

Plan make_sgemm_plan(const Options &options) {
  if (options.dtype) throw UsageError("--dtype is a rowmean option");
  if (!options.depths.empty()) throw UsageError("--k is an accuracy option");
  if (options.distributions.size() > 1) throw UsageError("sgemm takes one --dist");
  if (options.stages && options.math != FG_MATH_FP32_EMULATED)
    throw UsageError("--stages times the emulated mode's stages: it needs --math fp32_emulated");
  if (options.stages && options.host_time)
    throw UsageError(
        "--host-time and --stages exclude each other: once CUPTI has traced a call, every call of the "
        "process costs the host more");
  const Distribution distribution =
      options.distributions.empty() ? Distribution::uniform : parse_distribution(options.distributions.front());
  Plan plan;
  plan.metric = {"sgemm", "GFLOPS", "gflops", Ceiling::fp32_peak, "peak", "percent_of_peak", "max err/(|A||B|)"};
  plan.math = options.math;
  plan.family = sgemm_algos();
  plan.algos = resolve_algos(options.algos, plan.family);
  if (!options.host_memory.empty() && options.batch) throw UsageError("--host and --pinned take no --batch");
  if (!options.host_devices.empty() && options.host_memory.empty())
    throw UsageError("--devices applies to --host and --pinned");
  for (const GemmShape &s : options.suite ? suite_shapes(options) : requested_shapes(options)) {
    if (!options.host_memory.empty() && s.batch == 1) {
      GemmShape on_host = s;
      on_host.memory = options.host_memory;
      plan.cases.push_back(std::make_unique<SgemmCase>(on_host, distribution));
      // A problem larger than the device has no device-resident twin: its row's baseline stands for it.
      if (on_host.memory == "pageable" && !BeyondDeviceWorkload::fits_on_device(on_host)) continue;
    }
    plan.cases.push_back(std::make_unique<SgemmCase>(s, distribution));
  }
  return plan;
}

}  // namespace bench
