// SPDX-License-Identifier: Apache-2.0
// Choosing a registry's variant for a problem and running it with what it may use. The dispatcher is the one caller
// of Variant::run: it takes exactly workspace_bytes(problem, device) bytes of the handle's workspace, binds the
// handle's cuBLAS where the variant calls cuBLAS, and hands both, with the stream and the device, in a RunArgs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/context.hpp"
#include "core/variant.hpp"

namespace fastgemm::detail {

// Whether AUTO may run `variant` on the problem; if so, *bytes is the workspace it asks for.
template <typename Problem, typename Id>
bool auto_may_run(const Variant<Problem, Id> *variant, const Problem &problem, const DeviceInfo &device,
                  const AutoLimits &limits, size_t *bytes) {
  if (variant == nullptr || (variant->flags & limits.avoided_flags) != 0 ||
      !variant->can_implement(problem, device).ok())
    return false;
  *bytes = variant->workspace_bytes(problem, device);
  return *bytes <= limits.workspace_limit;
}

// The variant `id` names, if the table carries it and it can implement the problem; otherwise not_supported
// naming the algorithm and the unmet condition.
template <typename Problem, typename Id, size_t Count>
Status implementing_variant(const Variant<Problem, Id> *const (&table)[Count], Id id, const Problem &problem,
                            const DeviceInfo &device, Selection<Problem, Id> *out) {
  const Variant<Problem, Id> *variant = find_variant(table, id);
  if (variant == nullptr)
    return Status::failure(StatusCode::not_supported,
                           "algorithm " + std::to_string(static_cast<int>(id)) + " is not in this build");
  Status status = variant->can_implement(problem, device);
  if (!status.ok()) {
    status.message = std::string("algorithm ") + variant->name + " cannot run this problem: " + status.message;
    return status;
  }
  out->variant = variant;
  out->workspace_bytes = variant->workspace_bytes(problem, device);
  return Status::success();
}

// The variant that runs the problem: the selected one if it can, or, for id 0 (AUTO in every operation's enum), the
// first of auto_preference(problem, device) that AUTO may run within `limits`. AUTO looks at its preference only: a
// registry's preference ends with the workspace-free algorithms that run best where the faster ones do not fit, then
// one that accepts every problem where the operation has one.
template <typename Problem, typename Id, size_t Count, typename AutoPreference>
Status select_variant(const Variant<Problem, Id> *const (&table)[Count], Id selected, AutoPreference &&auto_preference,
                      const Problem &problem, const DeviceInfo &device, const AutoLimits &limits,
                      Selection<Problem, Id> *out) {
  if (selected != static_cast<Id>(0)) return implementing_variant(table, selected, problem, device, out);
  for (Id id : auto_preference(problem, device)) {
    const Variant<Problem, Id> *variant = find_variant(table, id);
    size_t bytes = 0;
    if (auto_may_run(variant, problem, device, limits, &bytes)) {
      *out = Selection<Problem, Id>{variant, bytes};
      return Status::success();
    }
  }
  if (limits.workspace_limit != SIZE_MAX)
    return Status::failure(StatusCode::not_supported, "no algorithm runs this problem within the " +
                                                          std::to_string(limits.workspace_limit) +
                                                          " bytes of workspace given with fg_set_workspace");
  return Status::failure(StatusCode::internal_error, "AUTO's preference has no algorithm that can run the problem");
}

// What the chosen variant may use besides the stream and the device: the workspace it asks for, taken from the
// context's, and the context's cuBLAS where it calls cuBLAS.
template <typename Problem, typename Id>
Status take_resources(const Selection<Problem, Id> &selection, const Problem &problem, Context &context,
                      RunArgs *args) {
  if (selection.workspace_bytes > 0) {
    FG_RETURN_IF_ERROR(context.workspace(selection.workspace_bytes, &args->workspace));
    args->workspace_bytes = selection.workspace_bytes;
  }
  const Variant<Problem, Id> &variant = *selection.variant;
  if (variant.uses_cublas != nullptr && variant.uses_cublas(problem, context.device())) {
    FG_RETURN_IF_ERROR(context.cublas(&args->cublas));
    args->cublas_workspace = context.given_cublas_workspace();
    args->cublas_workspace_bytes = context.given_cublas_workspace_bytes();
  }
  return Status::success();
}

// Runs the chosen variant on the context's stream, with what take_resources gives it. `report` is where the variant
// reports what it did (RunArgs::report, may be nullptr), handed on unread; `auto_selected` tells whether AUTO chose it.
template <typename Problem, typename Id>
Status run_variant(const Selection<Problem, Id> &selection, const Problem &problem, Context &context,
                   VariantReport *report, bool auto_selected, const FallbackVariant *fallback = nullptr) {
  const Variant<Problem, Id> &variant = *selection.variant;
  bool capturing = false;
  if ((variant.flags & kDecidesOnDevice) != 0) FG_RETURN_IF_ERROR(context.capturing(&capturing));
  const DeviceInfo &device = context.device();
  RunArgs args;
  args.stream = context.stream();
  args.device = &device;
  args.report = report;
  args.captured = capturing;
  args.auto_selected = auto_selected;
  if ((variant.flags & kDecidesOnDevice) != 0) args.state = &context.variant_state(&variant);
  args.fallback = fallback;
  const Status taken = take_resources(selection, problem, context, &args);
  if (taken.code == StatusCode::alloc_failed && (variant.flags & kDeclinesWithoutWorkspace) != 0) {
    (void)cudaGetLastError();  // the failed allocation's, so that no later launch check takes it for its own
    return Status::failure(StatusCode::not_supported, "its workspace of " + std::to_string(selection.workspace_bytes) +
                                                          " bytes could not be allocated: " + taken.message);
  }
  FG_RETURN_IF_ERROR(taken);
  return variant.run(problem, args);
}

// Runs the selected variant (AUTO resolved within `limits`) on the problem and stores its id in *ran. AUTO's choice
// that declines the operands at run time (not_supported from run_variant) is followed by the next of AUTO's
// preference that it may run.
template <typename Problem, typename Id, size_t Count, typename AutoPreference>
Status run_selected(const Variant<Problem, Id> *const (&table)[Count], Id selected, AutoPreference &&auto_preference,
                    const Problem &problem, Context &context, const AutoLimits &limits, VariantReport *report, Id *ran,
                    const FallbackVariant *fallback = nullptr) {
  const DeviceInfo &device = context.device();
  Selection<Problem, Id> selection;
  FG_RETURN_IF_ERROR(select_variant(table, selected, auto_preference, problem, device, limits, &selection));
  const bool auto_selected = selected == static_cast<Id>(0);
  Status status = run_variant(selection, problem, context, report, auto_selected, fallback);
  if (auto_selected && status.code == StatusCode::not_supported) {
    bool after_declined = false;
    for (Id id : auto_preference(problem, device)) {
      if (!after_declined) {
        after_declined = id == selection.variant->id;
        continue;
      }
      const Variant<Problem, Id> *next = find_variant(table, id);
      size_t bytes = 0;
      if (!auto_may_run(next, problem, device, limits, &bytes)) continue;
      selection = Selection<Problem, Id>{next, bytes};
      status = run_variant(selection, problem, context, report, auto_selected, fallback);
      if (status.code != StatusCode::not_supported) break;
    }
  }
  FG_RETURN_IF_ERROR(status);
  *ran = selection.variant->id;
  return Status::success();
}

}  // namespace fastgemm::detail
