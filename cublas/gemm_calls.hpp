// SPDX-License-Identifier: Apache-2.0
// The way every entry point goes: a nested call straight to cuBLAS; otherwise the checks that decide whether
// fastgemm may compute the product, fastgemm if so, and cuBLAS unchanged for everything else, logged and counted.
#pragma once

#include <string>

#include "interposer.hpp"

namespace fastgemm_cublas {

// Where a check fails, the reason it gives; a product it fills in otherwise.
struct Decision {
  const char *refusal = nullptr;  // static text
  std::string detail;             // or a text made for this call
  bool refused() const { return refusal != nullptr || !detail.empty(); }
  std::string why() const { return refusal != nullptr ? std::string(refusal) : detail; }
};

void log_call(const Product &product, const char *route, const std::string &why);

// `decide(&product)` fills the product (entry, sizes, stream) and returns a Decision; `after(product)` runs once
// fastgemm has enqueued it (an epilogue) and returns the call's status; `real()` calls the real function.
template <typename Decide, typename After, typename Real>
cublasStatus_t route_call(const char *entry, Decide &&decide, After &&after, Real &&real) {
  if (Forwarding::active()) return real();
  CallRecord record(entry);
  Product product;
  product.entry = entry;
  const Decision decision = decide(&product);
  std::string why = decision.why();
  if (!decision.refused()) {
    const Served served = serve(product);
    if (served.computed) {
      record.route(Route::fastgemm);
      const cublasStatus_t status = served.status == CUBLAS_STATUS_SUCCESS ? after(product) : served.status;
      if (settings().log)
        log_call(product, "fastgemm", status == CUBLAS_STATUS_SUCCESS ? served.why : "failed: " + served.why);
      return status;
    }
    why = served.why;
  }
  if (settings().log) log_call(product, "cuBLAS", why);
  Forwarding forwarding;
  return real();
}

inline cublasStatus_t no_epilogue(const Product &) { return CUBLAS_STATUS_SUCCESS; }

}  // namespace fastgemm_cublas
