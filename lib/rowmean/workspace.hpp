// SPDX-License-Identifier: Apache-2.0
// Carving one workspace allocation into several arrays, for the rowmean algorithms that stage data in memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fastgemm::detail {

// Byte offsets of the workspace's arrays, each 256-byte aligned; `bytes` is the size to allocate.
struct WorkspaceCarver {
  size_t bytes = 0;
  size_t take(int64_t size) {
    const size_t at = bytes;
    bytes += static_cast<size_t>((size + 255) / 256 * 256);
    return at;
  }
};

}  // namespace fastgemm::detail
