// The lookups that SGEMM's and rowmean's registries share: a registry is a table of variants and AUTO's
// preference order, read as data. A Variant has `id`, `name` and `can_implement(problem, device)`.
#pragma once

#include <cstddef>
#include <string>

#include "core/device.hpp"
#include "core/status.hpp"

namespace fastgemm::detail {

template <typename Variant, size_t Count, typename Id>
const Variant *find_variant(const Variant *const (&table)[Count], Id id) {
  for (const Variant *variant : table)
    if (variant->id == id) return variant;
  return nullptr;
}

// The first variant of `preference` that the table carries and that can implement the problem; the
// preference's last entry must accept every problem.
template <typename Variant, size_t Count, typename Id, size_t PreferenceCount, typename Problem>
Id choose_variant(const Variant *const (&table)[Count], const Id (&preference)[PreferenceCount],
                  const Problem &problem, const DeviceInfo &device) {
  for (Id id : preference) {
    const Variant *variant = find_variant(table, id);
    if (variant != nullptr && variant->can_implement(problem, device).ok()) return id;
  }
  return preference[PreferenceCount - 1];
}

// The variant `id` names, if the table carries it and it can implement the problem.
template <typename Variant, size_t Count, typename Id, typename Problem>
Status implementing_variant(const Variant *const (&table)[Count], Id id, const Problem &problem,
                            const DeviceInfo &device, const Variant **out) {
  const Variant *variant = find_variant(table, id);
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

}  // namespace fastgemm::detail
