// SPDX-License-Identifier: Apache-2.0
// fg_sgemm_host's short way for a product of one step (one tile, k in one chunk) whose operands, all in host
// memory, fit one small buffer: on the calling thread and the handle's stream, the host packs A, B and (when beta
// reads it) C into one pinned buffer, one copy takes it to the device, the product runs there as the tile would,
// and one copy brings C back. The tile machinery (worker threads, rings, events) costs tens of microseconds of
// hand-offs per call, which is most of a tiny product's time; LAPACK-style callers make millions of those.
//
// The same bits as the tile path: the device problem is the tile's (each operand packed dense, its leading
// dimension its line's length, every buffer 256-byte aligned), run by the same algorithm path on the same context.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/context.hpp"
#include "core/problem.hpp"
#include "core/status.hpp"
#include "host/host_gemm.hpp"

namespace fastgemm::detail {

// The pinned host buffer and the device buffer of the short way, each this large, allocated on first use.
constexpr size_t small_product_bytes = size_t(4) << 20;

// Where A, B and C lie in the small buffers (byte offsets, 256-byte aligned), and whether they fit.
struct SmallProductLayout {
  size_t a = 0, b = 0, c = 0;
  size_t c_bytes = 0, total = 0;
  bool fits = false;
};

// The layout of an m x n x k product (`product` false: C := beta * C, no A or B) of elements of `element_bytes`
// each, in `capacity` bytes. Pure.
SmallProductLayout small_product_layout(int64_t m, int64_t n, int64_t k, bool product, size_t capacity,
                                        size_t element_bytes = sizeof(float));

// Whether the product is one step of the grid: one tile, and k (for a product) in one chunk. Pure.
bool single_step(const HostTiling &tiling, int64_t m, int64_t n, int64_t k, bool product);

// The buffers and the short way itself. Used by one thread at a time (the handle's).
class SmallProduct {
 public:
  SmallProduct() = default;
  ~SmallProduct();
  SmallProduct(const SmallProduct &) = delete;
  SmallProduct &operator=(const SmallProduct &) = delete;

  // Computes the product (problem as HostGemm::run takes it, its operands in host memory the caller has checked)
  // laid out by `layout`, which fits. Allocates the buffers on first use, on the context's device. C is written
  // only after the device has finished, so a failure leaves it untouched. The layout is that of T's size.
  // Instantiated for float and double.
  template <typename T>
  Status run(const BasicGemmProblem<T> &problem, bool product, const SmallProductLayout &layout, Context &context,
             fg_sgemm_algo_t algo, const HostTileOps<T> &ops, fg_sgemm_algo_t *ran);

 private:
  Status ensure(int device);

  char *host_ = nullptr;    // pinned
  char *device_ = nullptr;  // on device_ordinal_
  int device_ordinal_ = -1;
};

}  // namespace fastgemm::detail
