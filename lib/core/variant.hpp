// SPDX-License-Identifier: Apache-2.0
// The protocol every algorithm of every operation follows (after CUTLASS's device-level operators: can_implement,
// get_workspace_size, then run with everything it may use handed in), and the lookups its registries share. A
// registry is data: a table of variants, and AUTO's choice, a function of the problem and the device that returns an
// ordered preference; the first variant of it that can implement the problem runs (core/dispatch.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "core/device.hpp"
#include "core/problem.hpp"
#include "core/status.hpp"
#include "core/variant_state.hpp"

namespace fastgemm::detail {

// What a variant reports of the run it made, beyond its status, as its operation defines it (SGEMM's:
// sgemm/variant.hpp); only the variant and the operation's caller look inside, the dispatcher hands it on.
struct VariantReport;
// The variant a kDecidesOnDevice variant runs where it declines the operands on the device, as its operation
// defines it (sgemm/variant.hpp); only the two of them look inside.
struct FallbackVariant;

// What a variant's run() may use, all of it handed in by the caller: run() never allocates and never reaches into
// the handle. Filled member by member by the dispatcher.
struct RunArgs {
  cudaStream_t stream = nullptr;  // run() enqueues its work here
  // workspace_bytes(problem, device) bytes of device memory, 256-byte aligned, valid for work enqueued on `stream`;
  // nullptr when the variant asks for none.
  void *workspace = nullptr;
  size_t workspace_bytes = 0;
  // For a variant whose uses_cublas() says so: a cuBLAS handle bound to `stream` (FP32 math) and given its own
  // workspace with cublasSetWorkspace (the part of a caller's workspace past `workspace_bytes`, or one of the
  // handle's), so that cuBLAS allocates nothing. nullptr otherwise.
  cublasHandle_t cublas = nullptr;
  // The workspace `cublas` was given: a variant that binds it to another stream (which resets cuBLAS to a pool of
  // its own, allocated on use) gives it again, and binds both back before it returns.
  void *cublas_workspace = nullptr;
  size_t cublas_workspace_bytes = 0;
  const DeviceInfo *device = nullptr;
  // Where the variant reports what it did, on success, if its operation has anything to report; nullptr when nobody
  // asks.
  VariantReport *report = nullptr;
  // Whether `stream` is being captured into a CUDA graph (told to kDecidesOnDevice variants).
  bool captured = false;
  // Whether AUTO chose the variant (rather than the caller, by name): a kDecidesOnDevice variant then runs `fallback`
  // on the device where it declines the operands, instead of telling the host.
  bool auto_selected = false;
  // For a kDecidesOnDevice variant: its state in the handle (core/variant_state.hpp), which it makes on first use and
  // finds again on the next call (the graph it captured a call into, launched again for the same call). nullptr where
  // the caller keeps none.
  std::unique_ptr<VariantState> *state = nullptr;
  // For a kDecidesOnDevice variant, which chooses on the device between its own work and another variant's: that
  // variant, chosen by the operation together with this one (SGEMM's: the workspace-free AUTO choice in FP32,
  // sgemm/variant.hpp). nullptr where the operation has none.
  const FallbackVariant *fallback = nullptr;
};

// What a variant's run() does beyond enqueuing work on the stream, for the dispatcher, AUTO and the host engine.
enum VariantFlag : unsigned {
  // run() reads the operands' values, and what it does depends on them: it may decline them (not_supported, having
  // written nothing of the problem's output; AUTO then runs the next variant of its preference), or choose on the
  // device (kDecidesOnDevice).
  kInspectsOperands = 1u << 0,
  // A handle-owned workspace (or cuBLAS's) that cannot be allocated is a refusal (not_supported), not a failure, so
  // that AUTO runs the next variant, which needs less.
  kDeclinesWithoutWorkspace = 1u << 1,
  // run() makes its choices on the device, as graph nodes that its kernels decide at each launch (a conditional
  // node): on a stream being captured, and, when AUTO chose it, outside one too (a graph of its own, kept in
  // RunArgs::state), so that it synchronizes nothing and never declines. Chosen by name outside a capture, it
  // synchronizes the stream once instead, to decline with not_supported the operands it cannot take.
  kDecidesOnDevice = 1u << 2,
};

template <typename Problem, typename Id>
struct Variant {
  Id id;
  const char *name;
  // Success, or not_supported with a message naming the unmet condition. True answers only: a variant that
  // accepts a problem runs it itself, and never hands it to another.
  Status (*can_implement)(const Problem &, const DeviceInfo &);
  // The bytes of RunArgs::workspace run() uses on this problem and device; 0 when it uses none. The caller sizes
  // the workspace by it.
  size_t (*workspace_bytes)(const Problem &, const DeviceInfo &);
  // Enqueues the problem on args.stream. Only for a problem can_implement accepts. Never synchronizes, unless
  // `flags` says so.
  Status (*run)(const Problem &, const RunArgs &);
  unsigned flags = 0;  // VariantFlag bits
  // Whether run() calls cuBLAS on this problem and device (RunArgs::cublas is then set); nullptr: never.
  bool (*uses_cublas)(const Problem &, const DeviceInfo &) = nullptr;
};

// can_implement of a variant that runs every problem of its operation.
template <typename Problem>
Status accepts_any_problem(const Problem &, const DeviceInfo &) {
  return Status::success();
}

// workspace_bytes of a variant that needs no workspace.
template <typename Problem>
size_t no_workspace(const Problem &, const DeviceInfo &) {
  return 0;
}

// uses_cublas of a variant that calls cuBLAS on every problem.
template <typename Problem>
bool always_uses_cublas(const Problem &, const DeviceInfo &) {
  return true;
}

// AUTO's answer: algorithm ids, most preferred first.
template <typename Id>
class Preference {
 public:
  static constexpr int kCapacity = 8;
  Preference() = default;
  Preference(std::initializer_list<Id> ids) {
    for (Id id : ids) add(id);
  }
  // Appends `id` unless it is already there (a preference names each algorithm once).
  Preference &add(Id id) {
    for (int i = 0; i < count_; ++i)
      if (ids_[i] == id) return *this;
    if (count_ < kCapacity) ids_[count_++] = id;
    return *this;
  }
  const Id *begin() const { return ids_; }
  const Id *end() const { return ids_ + count_; }
  int size() const { return count_; }
  Id operator[](int index) const { return ids_[index]; }

 private:
  Id ids_[kCapacity] = {};
  int count_ = 0;
};

// A variant chosen for a problem, and the workspace it asks for on it.
template <typename Problem, typename Id>
struct Selection {
  const Variant<Problem, Id> *variant = nullptr;
  size_t workspace_bytes = 0;
};

// Where AUTO may choose: within `workspace_limit` bytes (a caller's workspace, fg_set_workspace), among variants with
// none of the `avoided_flags` (VariantFlag bits). A forced algorithm ignores both.
struct AutoLimits {
  size_t workspace_limit = SIZE_MAX;
  unsigned avoided_flags = 0;
};

template <typename Problem, typename Id, size_t Count>
const Variant<Problem, Id> *find_variant(const Variant<Problem, Id> *const (&table)[Count], Id id) {
  for (const Variant<Problem, Id> *variant : table)
    if (variant->id == id) return variant;
  return nullptr;
}

}  // namespace fastgemm::detail
