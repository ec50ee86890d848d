// SPDX-License-Identifier: Apache-2.0
// How the parts of one call of the host engine (fg_sgemm_host, or the drop-in's FP64 products; a worker's upload,
// product and download threads; the workers) report their outcome: a part that stops because another failed says so
// with StatusCode::aborted, and the call reports the failure that caused the others to stop, whatever its message.
#pragma once

#include <initializer_list>

#include "core/status.hpp"

namespace fastgemm::detail {

// What a part returns when it stops, unfinished, because another part of the call failed.
inline Status aborted_by_other_failure() {
  return Status::failure(StatusCode::aborted, "the host product stopped after another part of it failed");
}

// The call's outcome from its parts' outcomes, in a fixed order of the parts: the first failure that is not an
// abort (the cause); else the first abort (no cause recorded, which the parts never produce, but the call must not
// then report success); else success.
template <typename Results>
Status first_failure(const Results &results) {
  for (const Status &result : results)
    if (!result.ok() && result.code != StatusCode::aborted) return result;
  for (const Status &result : results)
    if (!result.ok()) return result;
  return Status::success();
}

inline Status first_failure(std::initializer_list<Status> results) {
  return first_failure<std::initializer_list<Status>>(results);
}

}  // namespace fastgemm::detail
