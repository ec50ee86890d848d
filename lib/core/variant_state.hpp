// SPDX-License-Identifier: Apache-2.0
// What a variant keeps in the handle from one call to the next (the graphs it instantiated, say): made by
// the variant on first use, owned by the handle's context, which tells it when the workspace changes and releases it
// while the device is still held. The context knows no more of it than this.
#pragma once

namespace fastgemm::detail {

class VariantState {
 public:
  virtual ~VariantState() = default;
  // The handle's workspace was replaced: whatever holds the old one's addresses goes.
  virtual void workspace_changed() = 0;
  // Frees everything, only once the work that uses it is done; called once, before the device is released.
  virtual void release() = 0;
};

}  // namespace fastgemm::detail
