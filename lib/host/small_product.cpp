// SPDX-License-Identifier: Apache-2.0
#include "host/small_product.hpp"

#include <cstring>

#include "core/check.hpp"
#include "core/device.hpp"
#include "host/staging.hpp"

namespace fastgemm::detail {
namespace {

constexpr size_t kAlignment = 256;

size_t aligned(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// The region's lines, one after the other (its leading dimension becomes its length).
template <typename T>
void pack(const Region<T> &region, char *to) {
  const size_t line_bytes = static_cast<size_t>(region.length) * sizeof(T);
  if (region.ld == region.length || region.lines == 1) {
    std::memcpy(to, region.data, line_bytes * static_cast<size_t>(region.lines));
    return;
  }
  for (int64_t line = 0; line < region.lines; ++line)
    std::memcpy(to + static_cast<size_t>(line) * line_bytes, region.data + line * region.ld, line_bytes);
}

// C's rows back from their packed form into the caller's, ldc apart.
template <typename T>
void unpack(const char *from, T *c, int64_t ldc, int64_t rows, int64_t cols) {
  const size_t line_bytes = static_cast<size_t>(cols) * sizeof(T);
  if (ldc == cols || rows == 1) {
    std::memcpy(c, from, line_bytes * static_cast<size_t>(rows));
    return;
  }
  for (int64_t row = 0; row < rows; ++row)
    std::memcpy(c + row * ldc, from + static_cast<size_t>(row) * line_bytes, line_bytes);
}

}  // namespace

SmallProductLayout small_product_layout(int64_t m, int64_t n, int64_t k, bool product, size_t capacity,
                                        size_t element_bytes) {
  SmallProductLayout layout;
  if (m <= 0 || n <= 0 || (product && k <= 0)) return layout;
  // Sizes in elements, each bounded before it is multiplied, so that no product of extents overflows.
  const double elements_bound = static_cast<double>(capacity) / static_cast<double>(element_bytes);
  const double a_elements = product ? static_cast<double>(m) * static_cast<double>(k) : 0.0;
  const double b_elements = product ? static_cast<double>(k) * static_cast<double>(n) : 0.0;
  const double c_elements = static_cast<double>(m) * static_cast<double>(n);
  if (a_elements + b_elements + c_elements > elements_bound) return layout;
  layout.a = 0;
  layout.b = aligned(static_cast<size_t>(a_elements) * element_bytes);
  layout.c = layout.b + aligned(static_cast<size_t>(b_elements) * element_bytes);
  layout.c_bytes = static_cast<size_t>(c_elements) * element_bytes;
  layout.total = layout.c + layout.c_bytes;
  layout.fits = layout.total <= capacity;
  return layout;
}

bool single_step(const HostTiling &tiling, int64_t m, int64_t n, int64_t k, bool product) {
  return m <= tiling.tile_m && n <= tiling.tile_n && (!product || k <= tiling.tile_k);
}

SmallProduct::~SmallProduct() {
  // Nothing is in flight between calls; failures here mean a lost device and have no one to go to.
  if (host_ != nullptr) (void)cudaFreeHost(host_);
  if (device_ != nullptr) {
    DeviceGuard guard;
    if (guard.enter(device_ordinal_).ok()) (void)cudaFree(device_);
  }
}

Status SmallProduct::ensure(int device) {
  if (device_ != nullptr && device_ordinal_ != device) {
    FG_CUDA_CHECK(cudaFree(device_));  // the handle's device is current: a buffer of another is freed there
    device_ = nullptr;
  }
  if (host_ == nullptr)
    FG_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&host_), small_product_bytes, cudaHostAllocPortable));
  if (device_ == nullptr) {
    FG_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&device_), small_product_bytes));
    device_ordinal_ = device;
  }
  return Status::success();
}

template <typename T>
Status SmallProduct::run(const BasicGemmProblem<T> &p, bool product, const SmallProductLayout &layout, Context &context,
                         fg_sgemm_algo_t algo, const HostTileOps<T> &ops, fg_sgemm_algo_t *ran) {
  if (!layout.fits) return Status::failure(StatusCode::internal_error, "the small product's layout does not fit");
  FG_RETURN_IF_ERROR(ensure(context.device().ordinal));
  const cudaStream_t stream = context.stream();
  if (product) {
    pack(a_region(p.a, 0, p.m, 0, p.k), host_ + layout.a);
    pack(b_region(p.b, 0, p.k, 0, p.n), host_ + layout.b);
  }
  // beta == 0 writes C without reading it.
  if (p.beta != T(0)) pack(Region<T>{p.c, p.ldc, p.m, p.n}, host_ + layout.c);
  const size_t upload = p.beta != T(0) ? layout.total : layout.c;
  if (upload > 0) FG_CUDA_CHECK(cudaMemcpyAsync(device_, host_, upload, cudaMemcpyHostToDevice, stream));

  // The tile's device problem: dense operands, each line's length its leading dimension.
  BasicGemmProblem<T> part = step_problem(p, p.m, p.n, reinterpret_cast<T *>(device_ + layout.c), p.n);
  if (product) {
    const Region<T> a = a_region(p.a, 0, p.m, 0, p.k), b = b_region(p.b, 0, p.k, 0, p.n);
    part.k = p.k;
    part.a = staged_operand(reinterpret_cast<const T *>(device_ + layout.a), a, p.a.transposed);
    part.b = staged_operand(reinterpret_cast<const T *>(device_ + layout.b), b, p.b.transposed);
    FG_RETURN_IF_ERROR(run_step(ops, part, context, algo, ran));
  } else {
    FG_RETURN_IF_ERROR(ops.scale(part, stream));
  }
  FG_CUDA_CHECK(cudaMemcpyAsync(host_ + layout.c, device_ + layout.c, layout.c_bytes, cudaMemcpyDeviceToHost, stream));
  FG_CUDA_CHECK(cudaStreamSynchronize(stream));
  unpack(host_ + layout.c, p.c, p.ldc, p.m, p.n);
  return Status::success();
}

template Status SmallProduct::run<float>(const BasicGemmProblem<float> &, bool, const SmallProductLayout &, Context &,
                                         fg_sgemm_algo_t, const HostTileOps<float> &, fg_sgemm_algo_t *);
template Status SmallProduct::run<double>(const BasicGemmProblem<double> &, bool, const SmallProductLayout &, Context &,
                                          fg_sgemm_algo_t, const HostTileOps<double> &, fg_sgemm_algo_t *);

}  // namespace fastgemm::detail
