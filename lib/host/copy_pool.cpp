// SPDX-License-Identifier: Apache-2.0
#include "host/copy_pool.hpp"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace fastgemm::detail {
namespace {

// Copies `count` bytes; large copies use streaming stores, which neither read the destination first nor fill the
// caches with it: the destination is a pinned buffer the device reads next, or the caller's C.
void copy_bytes(char *dst, const char *src, size_t count) {
#if defined(__SSE2__)
  if (count >= 1024) {
    const size_t head = (16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15;
    std::memcpy(dst, src, head);
    dst += head, src += head, count -= head;
    size_t i = 0;
    for (; i + 64 <= count; i += 64) {
      const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i));
      const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 16));
      const __m128i v2 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 32));
      const __m128i v3 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 48));
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i), v0);
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 16), v1);
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 32), v2);
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 48), v3);
    }
    if (i < count) std::memcpy(dst + i, src + i, count - i);
    return;
  }
#endif
  std::memcpy(dst, src, count);
}

}  // namespace

void copy_lines_serial(char *dst, int64_t dst_ld_bytes, const char *src, int64_t src_ld_bytes, int64_t lines,
                       int64_t length_bytes) {
  if (dst_ld_bytes == length_bytes && src_ld_bytes == length_bytes) {
    copy_bytes(dst, src, static_cast<size_t>(lines) * static_cast<size_t>(length_bytes));
  } else {
    for (int64_t line = 0; line < lines; ++line)
      copy_bytes(dst + line * dst_ld_bytes, src + line * src_ld_bytes, static_cast<size_t>(length_bytes));
  }
#if defined(__SSE2__)
  _mm_sfence();  // the streaming stores are visible before the copy is reported done
#endif
}

}  // namespace fastgemm::detail
