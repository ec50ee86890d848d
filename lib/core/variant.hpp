// SPDX-License-Identifier: Apache-2.0
// The protocol every algorithm of every operation follows (after CUTLASS's device-level operators), and the
// lookups its registries share. A registry is data: a table of variants, and AUTO's choice, a function of the
// problem and the device that returns an ordered preference; the first variant of it that can implement the
// problem runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "core/context.hpp"
#include "core/device.hpp"
#include "core/status.hpp"

namespace fastgemm::detail {

template <typename Problem, typename Id>
struct Variant {
  Id id;
  const char *name;
  // Success, or not_supported with a message naming the unmet condition. True answers only: a variant that
  // accepts a problem runs it itself, and never hands it to another.
  Status (*can_implement)(const Problem &, const DeviceInfo &);
  // The bytes run() asks Context::workspace() for on this problem and device; 0 when it asks for none.
  size_t (*workspace_bytes)(const Problem &, const DeviceInfo &);
  // Enqueues the problem on the context's stream. Only for a problem can_implement accepts. A variant whose
  // ability depends on the operands' values, which can_implement cannot see, may look at them first (it may
  // then synchronize the stream) and return not_supported having written nothing of the problem's output:
  // AUTO then runs the next variant of its preference. Any other variant never synchronizes.
  Status (*run)(const Problem &, Context &);
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
  Preference &add(const Preference &other) {
    for (Id id : other) add(id);
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

template <typename Problem, typename Id, size_t Count>
const Variant<Problem, Id> *find_variant(const Variant<Problem, Id> *const (&table)[Count], Id id) {
  for (const Variant<Problem, Id> *variant : table)
    if (variant->id == id) return variant;
  return nullptr;
}

// The first variant of `preference` that the table carries, that can implement the problem and whose workspace
// fits in `workspace_limit` bytes; nullptr when none can. A registry's preference ends with workspace-free
// algorithms chosen for speed, then one that accepts every problem where the operation has one, so that AUTO
// finds an algorithm within a caller's workspace without falling back on the table's (ladder) order.
template <typename Problem, typename Id, size_t Count>
const Variant<Problem, Id> *first_implementing(const Variant<Problem, Id> *const (&table)[Count],
                                               const Preference<Id> &preference, const Problem &problem,
                                               const DeviceInfo &device, size_t workspace_limit = SIZE_MAX) {
  for (Id id : preference) {
    const Variant<Problem, Id> *variant = find_variant(table, id);
    if (variant != nullptr && variant->can_implement(problem, device).ok() &&
        variant->workspace_bytes(problem, device) <= workspace_limit)
      return variant;
  }
  return nullptr;
}

// The variant `id` names, if the table carries it and it can implement the problem; otherwise not_supported
// naming the algorithm and the unmet condition.
template <typename Problem, typename Id, size_t Count>
Status implementing_variant(const Variant<Problem, Id> *const (&table)[Count], Id id, const Problem &problem,
                            const DeviceInfo &device, const Variant<Problem, Id> **out) {
  const Variant<Problem, Id> *variant = find_variant(table, id);
  if (variant == nullptr)
    return Status::failure(StatusCode::not_supported,
                           "algorithm " + std::to_string(static_cast<int>(id)) + " is not in this build");
  Status status = variant->can_implement(problem, device);
  if (!status.ok()) {
    status.message = std::string("algorithm ") + variant->name + " cannot run this problem: " + status.message;
    return status;
  }
  *out = variant;
  return Status::success();
}

// The variant that runs the problem: the selected one if it can (id 0, AUTO in every operation's enum, selects the
// first of auto_preference(problem, device) that can and whose workspace fits in `workspace_limit` bytes, the
// caller's workspace given with fg_set_workspace). AUTO looks at its preference only: the preference itself ends
// with the workspace-free algorithms that run best where the faster ones do not fit.
template <typename Problem, typename Id, size_t Count, typename AutoPreference>
Status select_variant(const Variant<Problem, Id> *const (&table)[Count], Id selected, AutoPreference &&auto_preference,
                      const Problem &problem, const DeviceInfo &device, const Variant<Problem, Id> **out,
                      size_t workspace_limit = SIZE_MAX) {
  if (selected != static_cast<Id>(0)) return implementing_variant(table, selected, problem, device, out);
  *out = first_implementing(table, auto_preference(problem, device), problem, device, workspace_limit);
  if (*out == nullptr && workspace_limit != SIZE_MAX)
    return Status::failure(StatusCode::not_supported, "no algorithm runs this problem within the " +
                                                          std::to_string(workspace_limit) +
                                                          " bytes of workspace given with fg_set_workspace");
  if (*out == nullptr)
    return Status::failure(StatusCode::internal_error, "AUTO's preference has no algorithm that can run the problem");
  return Status::success();
}

// The workspace the selected variant asks for on the problem.
template <typename Problem, typename Id, size_t Count, typename AutoPreference>
Status selected_workspace_bytes(const Variant<Problem, Id> *const (&table)[Count], Id selected,
                                AutoPreference &&auto_preference, const Problem &problem, const DeviceInfo &device,
                                size_t *bytes, size_t workspace_limit = SIZE_MAX) {
  const Variant<Problem, Id> *variant = nullptr;
  FG_RETURN_IF_ERROR(select_variant(table, selected, auto_preference, problem, device, &variant, workspace_limit));
  *bytes = variant->workspace_bytes(problem, device);
  return Status::success();
}

// Runs the selected variant on the problem and stores its id in *ran. AUTO's choice that declines the operands
// at run time (not_supported from run) is followed by the next of AUTO's preference that can run the problem.
template <typename Problem, typename Id, size_t Count, typename AutoPreference>
Status run_selected(const Variant<Problem, Id> *const (&table)[Count], Id selected, AutoPreference &&auto_preference,
                    const Problem &problem, Context &context, Id *ran) {
  const Variant<Problem, Id> *variant = nullptr;
  FG_RETURN_IF_ERROR(
      select_variant(table, selected, auto_preference, problem, context.device(), &variant, context.workspace_limit()));
  Status status = variant->run(problem, context);
  if (selected == static_cast<Id>(0) && status.code == StatusCode::not_supported) {
    bool after_declined = false;
    for (Id id : auto_preference(problem, context.device())) {
      if (!after_declined) {
        after_declined = id == variant->id;
        continue;
      }
      const Variant<Problem, Id> *next = find_variant(table, id);
      if (next == nullptr || !next->can_implement(problem, context.device()).ok() ||
          next->workspace_bytes(problem, context.device()) > context.workspace_limit())
        continue;
      variant = next;
      status = variant->run(problem, context);
      if (status.code != StatusCode::not_supported) break;
    }
  }
  FG_RETURN_IF_ERROR(status);
  *ran = variant->id;
  return Status::success();
}

}  // namespace fastgemm::detail
