// SPDX-License-Identifier: Apache-2.0
#include "host/copy_pool.hpp"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace fastgemm::detail {
namespace {

// Copies count floats; large copies use streaming stores, which neither read the destination first nor
// fill the caches with it: the destination is a pinned buffer the device reads next, or the caller's C.
void copy_floats(float *dst, const float *src, size_t count) {
#if defined(__SSE2__)
  if (count >= 256 && (reinterpret_cast<uintptr_t>(dst) & 3) == 0) {
    while ((reinterpret_cast<uintptr_t>(dst) & 15) != 0) {
      *dst++ = *src++;
      --count;
    }
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
      const __m128 v0 = _mm_loadu_ps(src + i), v1 = _mm_loadu_ps(src + i + 4);
      const __m128 v2 = _mm_loadu_ps(src + i + 8), v3 = _mm_loadu_ps(src + i + 12);
      _mm_stream_ps(dst + i, v0);
      _mm_stream_ps(dst + i + 4, v1);
      _mm_stream_ps(dst + i + 8, v2);
      _mm_stream_ps(dst + i + 12, v3);
    }
    if (i < count) std::memcpy(dst + i, src + i, (count - i) * sizeof(float));
    return;
  }
#endif
  std::memcpy(dst, src, count * sizeof(float));
}

}  // namespace

void copy_lines_serial(float *dst, int64_t dst_ld, const float *src, int64_t src_ld, int64_t lines, int64_t length) {
  if (dst_ld == length && src_ld == length) {
    copy_floats(dst, src, static_cast<size_t>(lines) * static_cast<size_t>(length));
  } else {
    for (int64_t line = 0; line < lines; ++line)
      copy_floats(dst + line * dst_ld, src + line * src_ld, static_cast<size_t>(length));
  }
#if defined(__SSE2__)
  _mm_sfence();  // the streaming stores are visible before the copy is reported done
#endif
}

}  // namespace fastgemm::detail
