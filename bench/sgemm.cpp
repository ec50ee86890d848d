// sgemm problems: C = op(A) op(B) through fg_sgemm, or fg_sgemm_strided_batched for batches; with --host
// or --pinned, through fg_sgemm_host on operands in host memory, beside the same problem on the device.
#include <array>
#include <climits>
#include <cstring>
#include <memory>

#include "gpu.hpp"
#include "ops.hpp"
#include "sgemm_suite.hpp"
#include "text.hpp"
#include "vendor.hpp"

namespace bench {
namespace {

// Distinct seeds keep A and B different matrices.
constexpr uint64_t kSeedA = 0xA;
constexpr uint64_t kSeedB = 0xB;

struct LeadingDimensions {
  int64_t a;
  int64_t b;
  int64_t c;
};

// Dense operands: each leading dimension is the smallest the contract allows.
LeadingDimensions leading_dimensions(const GemmShape &s) {
  const bool ta = s.transa != FG_OP_N;
  const bool tb = s.transb != FG_OP_N;
  if (s.layout == FG_ROW_MAJOR) return {ta ? s.m : s.k, tb ? s.k : s.n, s.n};
  return {ta ? s.k : s.m, tb ? s.n : s.k, s.m};
}

std::string trans_name(const GemmShape &s) {
  return std::string(s.transa == FG_OP_N ? "N" : "T") + (s.transb == FG_OP_N ? "N" : "T");
}

const char *layout_name(fg_layout_t layout) { return layout == FG_ROW_MAJOR ? "row" : "col"; }

size_t float_bytes(int64_t count) { return static_cast<size_t>(count) * sizeof(float); }

// cuBLAS is column-major: the row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T. The
// classic 32-bit entry points, as most programs call them; the bench's problems all fit an int.
void direct_cublas_sgemm(const GemmShape &s, const LeadingDimensions &ld, const float *a, const float *b, float *c) {
  if (s.m > INT_MAX || s.n > INT_MAX || s.k > INT_MAX || s.batch > INT_MAX) {
    throw BenchError("the direct cuBLAS call takes sizes up to INT_MAX");
  }
  const bool row_major = s.layout == FG_ROW_MAJOR;
  const float *first = row_major ? b : a;
  const float *second = row_major ? a : b;
  const fg_op_t first_op = row_major ? s.transb : s.transa;
  const fg_op_t second_op = row_major ? s.transa : s.transb;
  const int rows = static_cast<int>(row_major ? s.n : s.m), cols = static_cast<int>(row_major ? s.m : s.n);
  const int first_ld = static_cast<int>(row_major ? ld.b : ld.a);
  const int second_ld = static_cast<int>(row_major ? ld.a : ld.b);
  const auto op = [](fg_op_t t) { return t == FG_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T; };
  const float alpha = 1.0f, beta = 0.0f;
  cublasHandle_t handle = vendor_blas().get();
  if (s.batch == 1) {
    check_cublas(cublasSgemm(handle, op(first_op), op(second_op), rows, cols, static_cast<int>(s.k), &alpha, first,
                             first_ld, second, second_ld, &beta, c, static_cast<int>(ld.c)),
                 "cublasSgemm");
    return;
  }
  const long long first_stride = row_major ? s.k * s.n : s.m * s.k;
  const long long second_stride = row_major ? s.m * s.k : s.k * s.n;
  check_cublas(cublasSgemmStridedBatched(handle, op(first_op), op(second_op), rows, cols, static_cast<int>(s.k), &alpha,
                                         first, first_ld, first_stride, second, second_ld, second_stride, &beta, c,
                                         static_cast<int>(ld.c), s.m * s.n, static_cast<int>(s.batch)),
               "cublasSgemmStridedBatched");
}

class SgemmWorkload : public Workload {
 public:
  explicit SgemmWorkload(const GemmShape &shape)
      : shape_(shape),
        ld_(leading_dimensions(shape)),
        a_(float_bytes(shape.m * shape.k * shape.batch)),
        b_(float_bytes(shape.k * shape.n * shape.batch)),
        c_(float_bytes(shape.m * shape.n * shape.batch)),
        reference_(c_.bytes()) {
    fill_uniform(a_.as<float>(), shape.m * shape.k * shape.batch, kSeedA);
    fill_uniform(b_.as<float>(), shape.k * shape.n * shape.batch, kSeedB);
  }

  fg_status_t run(fg_handle_t handle, Target target) override {
    const GemmShape &s = shape_;
    float *c = (target == Target::reference ? reference_ : c_).as<float>();
    if (s.batch == 1) {
      return fg_sgemm(handle, s.layout, s.transa, s.transb, s.m, s.n, s.k, 1.0f, a_.as<float>(), ld_.a, b_.as<float>(),
                      ld_.b, 0.0f, c, ld_.c);
    }
    return fg_sgemm_strided_batched(handle, s.layout, s.transa, s.transb, s.m, s.n, s.k, 1.0f, a_.as<float>(), ld_.a,
                                    s.m * s.k, b_.as<float>(), ld_.b, s.k * s.n, 0.0f, c, ld_.c, s.m * s.n, s.batch);
  }

  void run_direct_vendor() override {
    direct_cublas_sgemm(shape_, ld_, a_.as<float>(), b_.as<float>(), c_.as<float>());
  }

  void poison_output() override { poison(c_.get(), c_.bytes()); }

  double relative_error() const override {
    return bench::relative_error(c_.as<float>(), reference_.as<float>(), shape_.m * shape_.n * shape_.batch);
  }

 private:
  GemmShape shape_;
  LeadingDimensions ld_;
  DeviceBuffer a_;
  DeviceBuffer b_;
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
  explicit HostSgemmWorkload(const GemmShape &shape)
      : shape_(shape),
        ld_(leading_dimensions(shape)),
        a_(float_bytes(shape.m * shape.k)),
        b_(float_bytes(shape.k * shape.n)),
        reference_(float_bytes(shape.m * shape.n)),
        copied_c_(float_bytes(shape.m * shape.n)),
        a_host_(a_.bytes(), shape.memory == "pinned"),
        b_host_(b_.bytes(), shape.memory == "pinned"),
        c_host_(reference_.bytes(), shape.memory == "pinned") {
    fill_uniform(a_.as<float>(), shape.m * shape.k, kSeedA);
    fill_uniform(b_.as<float>(), shape.k * shape.n, kSeedB);
    check_cuda(cudaMemcpy(a_host_.get(), a_.get(), a_.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");
    check_cuda(cudaMemcpy(b_host_.get(), b_.get(), b_.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");
  }

  fg_status_t run(fg_handle_t handle, Target target) override {
    const GemmShape &s = shape_;
    if (target == Target::reference)
      return fg_sgemm(handle, s.layout, s.transa, s.transb, s.m, s.n, s.k, 1.0f, a_.as<float>(), ld_.a, b_.as<float>(),
                      ld_.b, 0.0f, reference_.as<float>(), ld_.c);
    return fg_sgemm_host(handle, s.layout, s.transa, s.transb, s.m, s.n, s.k, 1.0f, a_host_.get(), ld_.a, b_host_.get(),
                         ld_.b, 0.0f, c_host_.get(), ld_.c);
  }

  // The baseline of a host-memory problem is cuBLAS on device-resident copies of its operands: its ratio is
  // the share of the device-resident speed that fg_sgemm_host reaches.
  void run_direct_vendor() override {
    direct_cublas_sgemm(shape_, ld_, a_.as<float>(), b_.as<float>(), copied_c_.as<float>());
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
    return bench::relative_error(copied_c_.as<float>(), reference_.as<float>(), shape_.m * shape_.n);
  }

 private:
  GemmShape shape_;
  LeadingDimensions ld_;
  DeviceBuffer a_;
  DeviceBuffer b_;
  DeviceBuffer reference_;
  DeviceBuffer copied_c_;
  HostBuffer a_host_;
  HostBuffer b_host_;
  HostBuffer c_host_;
  bool direct_ran_last_ = false;  // the output is then copied_c_, on the device
};

class SgemmCase : public BenchCase {
 public:
  explicit SgemmCase(const GemmShape &shape) : shape_(shape) {}

  std::string describe() const override {
    const GemmShape &s = shape_;
    std::string text = format("%s %s  M N K = %5lld %5lld %5lld", layout_name(s.layout), trans_name(s).c_str(),
                              static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k));
    if (s.batch > 1) text += format(", batch %lld", static_cast<long long>(s.batch));
    if (s.memory != "device") text += ", " + s.memory + " host";
    return text;
  }

  std::vector<Field> fields() const override {
    return {text_field("layout", layout_name(shape_.layout)),
            text_field("trans", trans_name(shape_)),
            integer_field("m", shape_.m),
            integer_field("n", shape_.n),
            integer_field("k", shape_.k),
            integer_field("batch", shape_.batch),
            text_field("memory", shape_.memory)};
  }

  double work_per_call() const override {
    return 2.0 * static_cast<double>(shape_.m) * static_cast<double>(shape_.n) * static_cast<double>(shape_.k) *
           static_cast<double>(shape_.batch);
  }

  double tolerance() const override { return bench::tolerance<float>(shape_.k); }

  std::unique_ptr<Workload> allocate() const override {
    if (shape_.memory != "device") return std::make_unique<HostSgemmWorkload>(shape_);
    return std::make_unique<SgemmWorkload>(shape_);
  }

 private:
  GemmShape shape_;
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
  };
  return family;
}

Plan make_sgemm_plan(const Options &options) {
  if (options.dtype) throw UsageError("--dtype is a rowmean option");
  Plan plan;
  plan.metric = {"sgemm", "GFLOPS", "gflops", Ceiling::fp32_peak, "peak", "percent_of_peak"};
  plan.family = sgemm_algos();
  plan.algos = resolve_algos(options.algos, plan.family);
  if (!options.host_memory.empty() && options.batch) throw UsageError("--host and --pinned take no --batch");
  for (const GemmShape &s : options.suite ? suite_shapes(options) : requested_shapes(options)) {
    if (!options.host_memory.empty() && s.batch == 1) {
      GemmShape on_host = s;
      on_host.memory = options.host_memory;
      plan.cases.push_back(std::make_unique<SgemmCase>(on_host));
    }
    plan.cases.push_back(std::make_unique<SgemmCase>(s));
  }
  return plan;
}

}  // namespace bench
