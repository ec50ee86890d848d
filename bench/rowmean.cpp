// SPDX-License-Identifier: Apache-2.0
// rowmean problems: output (L x N) = matrix (L x L) times the row means of input (N x L x M), through
// fg_rowmean_matvec.
#include <utility>

#include "gpu.hpp"
#include "ops.hpp"
#include "text.hpp"

namespace bench {
namespace {

// Square-ish, skinny, wide, tiny-M and huge-M problems, in both dtypes.
const char *const kDefaultShapes[] = {"f64:512x512x1024", "f32:512x512x1024", "f64:128x4096x2048", "f32:1024x64x8192",
                                      "f32:4096x8x16384", "f64:64x1x1000000", "f32:8192x2048x16",  "f32:3x100000x100"};

constexpr uint64_t kSeedInput = 0x1;
constexpr uint64_t kSeedMatrix = 0x2;

struct RowmeanShape {
  fg_dtype_t dtype = FG_F32;
  int64_t L = 0;
  int64_t M = 0;
  int64_t N = 0;
};

const char *dtype_name(fg_dtype_t dtype) { return dtype == FG_F64 ? "f64" : "f32"; }

size_t dtype_bytes(fg_dtype_t dtype) { return dtype == FG_F64 ? sizeof(double) : sizeof(float); }

template <typename T>
class RowmeanWorkload : public Workload {
 public:
  explicit RowmeanWorkload(const RowmeanShape &shape)
      : shape_(shape),
        input_(bytes(shape.N * shape.L * shape.M)),
        matrix_(bytes(shape.L * shape.L)),
        output_(bytes(shape.L * shape.N)),
        reference_(output_.bytes()) {
    fill_uniform(input_.as<T>(), shape.N * shape.L * shape.M, kSeedInput);
    fill_uniform(matrix_.as<T>(), shape.L * shape.L, kSeedMatrix);
  }

  fg_status_t run(fg_handle_t handle, Target target) override {
    void *output = (target == Target::reference ? reference_ : output_).get();
    return fg_rowmean_matvec(handle, shape_.dtype, input_.get(), matrix_.get(), output, shape_.L, shape_.M, shape_.N);
  }

  void poison_output() override { poison(output_.get(), output_.bytes()); }

  double relative_error() const override {
    return bench::relative_error(output_.as<T>(), reference_.as<T>(), shape_.L * shape_.N);
  }

 private:
  static size_t bytes(int64_t count) { return static_cast<size_t>(count) * sizeof(T); }

  RowmeanShape shape_;
  DeviceBuffer input_;
  DeviceBuffer matrix_;
  DeviceBuffer output_;
  DeviceBuffer reference_;
};

class RowmeanCase : public BenchCase {
 public:
  explicit RowmeanCase(const RowmeanShape &shape) : shape_(shape) {}

  std::string describe() const override {
    return format("%s  L M N = %6lld %6lld %7lld", dtype_name(shape_.dtype), static_cast<long long>(shape_.L),
                  static_cast<long long>(shape_.M), static_cast<long long>(shape_.N));
  }

  std::vector<Field> fields() const override {
    return {text_field("dtype", dtype_name(shape_.dtype)), integer_field("L", shape_.L), integer_field("M", shape_.M),
            integer_field("N", shape_.N)};
  }

  // Every byte the op must move once: input and matrix read, output written.
  double work_per_call() const override {
    const double L = static_cast<double>(shape_.L);
    const double elements =
        static_cast<double>(shape_.N) * L * static_cast<double>(shape_.M) + L * L + L * static_cast<double>(shape_.N);
    return elements * static_cast<double>(dtype_bytes(shape_.dtype));
  }

  // Each output sums M values into a mean, then L products.
  double tolerance() const override {
    const int64_t length = shape_.M + shape_.L;
    return shape_.dtype == FG_F64 ? bench::tolerance<double>(length) : bench::tolerance<float>(length);
  }

  std::unique_ptr<Workload> allocate() const override {
    if (shape_.dtype == FG_F64) return std::make_unique<RowmeanWorkload<double>>(shape_);
    return std::make_unique<RowmeanWorkload<float>>(shape_);
  }

 private:
  RowmeanShape shape_;
};

fg_dtype_t parse_dtype(const std::string &text) {
  if (text == "f32") return FG_F32;
  if (text == "f64") return FG_F64;
  throw UsageError("dtype '" + text + "' is not f32 or f64");
}

// "[f32:|f64:]LxMxN".
RowmeanShape parse_shape(const std::string &text, fg_dtype_t default_dtype) {
  const size_t colon = text.find(':');
  RowmeanShape shape;
  shape.dtype = colon == std::string::npos ? default_dtype : parse_dtype(text.substr(0, colon));
  const std::vector<int64_t> lmn =
      parse_dimensions(colon == std::string::npos ? text : text.substr(colon + 1), 3, "[f32:|f64:]LxMxN");
  shape.L = lmn[0];
  shape.M = lmn[1];
  shape.N = lmn[2];
  return shape;
}

void reject_sgemm_options(const Options &options) {
  const std::pair<bool, const char *> sgemm_only[] = {{!options.sizes.empty(), "--sizes"},
                                                      {options.suite, "--suite"},
                                                      {!options.trans.empty(), "--trans"},
                                                      {!options.layouts.empty(), "--layout"},
                                                      {options.batch.has_value(), "--batch"},
                                                      {!options.host_memory.empty(), "--host or --pinned"},
                                                      {!options.host_devices.empty(), "--devices"},
                                                      {options.math.has_value(), "--math"},
                                                      {!options.distributions.empty(), "--dist"},
                                                      {options.stages, "--stages"},
                                                      {options.host_time, "--host-time"}};
  for (const auto &[given, name] : sgemm_only) {
    if (given) throw UsageError(std::string(name) + " is an sgemm option");
  }
}

}  // namespace

const AlgoFamily &rowmean_algos() {
  static const AlgoFamily family = {
      [](int id) { return fg_rowmean_algo_name(static_cast<fg_rowmean_algo_t>(id)); },
      [](fg_handle_t handle, int id) { return fg_set_rowmean_algo(handle, static_cast<fg_rowmean_algo_t>(id)); },
      "fg_set_rowmean_algo",
      [](fg_handle_t handle, int *id) {
        fg_rowmean_algo_t algo = FG_ROWMEAN_AUTO;
        const fg_status_t status = fg_get_last_rowmean_algo(handle, &algo);
        *id = algo;
        return status;
      },
      "fg_get_last_rowmean_algo",
      FG_ROWMEAN_CUBLAS,
      false,
      nullptr,
      [](int id) -> const char * { return id == FG_ROWMEAN_RELAY ? "pipelined" : nullptr; },
  };
  return family;
}

Plan make_rowmean_plan(const Options &options) {
  reject_sgemm_options(options);
  if (!options.depths.empty()) throw UsageError("--k is an accuracy option");
  const fg_dtype_t default_dtype = parse_dtype(options.dtype.value_or("f32"));
  Plan plan;
  plan.metric = {"rowmean", "GB/s", "gb_per_s", Ceiling::read_bandwidth, "read bandwidth", "percent_of_read_bandwidth"};
  plan.family = rowmean_algos();
  plan.algos = resolve_algos(options.algos, plan.family);
  std::vector<std::string> shapes = options.shapes;
  if (shapes.empty()) shapes.assign(std::begin(kDefaultShapes), std::end(kDefaultShapes));
  for (const std::string &text : shapes) {
    plan.cases.push_back(std::make_unique<RowmeanCase>(parse_shape(text, default_dtype)));
  }
  return plan;
}

}  // namespace bench
