// SPDX-License-Identifier: Apache-2.0
#include "rank_device.hpp"

#include <cerrno>
#include <cstdlib>

namespace fastgemm_blas {

RankDevice rank_device(const char *(*lookup)(const char *), int device_count) {
  RankDevice chosen;
  for (const char *variable : kLocalRankVariables) {
    const char *text = lookup(variable);
    if (text == nullptr || *text == '\0') continue;
    chosen.variable = variable;
    char *end = nullptr;
    errno = 0;
    const long value = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || value < 0 || value > 1 << 20) return chosen;
    chosen.local_rank = static_cast<int>(value);
    if (device_count >= 1) chosen.device = chosen.local_rank % device_count;
    return chosen;
  }
  return chosen;
}

}  // namespace fastgemm_blas
