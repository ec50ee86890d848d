// SPDX-License-Identifier: Apache-2.0
// The fuzzer's simulated device (fuzz_validate.cpp): its memory, the driver's answers about it, the poison and
// the inputs' picks, and the checks every call's outcome goes through.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "capi/calls.hpp"

namespace fuzzsim {

using namespace fastgemm;

constexpr int kAllocations = 3;
constexpr int64_t kAllocationFloats = 256;
constexpr int64_t kAllocationBytes = kAllocationFloats * 4;

// Everything the calls may touch: compared byte by byte before and after each call.
struct SimulatedMemory {
  alignas(256) unsigned char device[kAllocations][kAllocationBytes];
  unsigned char host[256];
  unsigned char other_device[256];
};
inline SimulatedMemory memory;

inline const unsigned char *device_begin() { return &memory.device[0][0]; }

inline bool in_bytes(const void *pointer, const unsigned char *begin, size_t bytes) {
  const auto address = reinterpret_cast<uintptr_t>(pointer), first = reinterpret_cast<uintptr_t>(begin);
  return address >= first && address - first < bytes;
}

inline capi::PointerKind classify(const void *pointer) {
  if (in_bytes(pointer, device_begin(), sizeof memory.device)) return capi::PointerKind::device_accessible;
  if (in_bytes(pointer, memory.host, sizeof memory.host)) return capi::PointerKind::pageable_host;
  if (in_bytes(pointer, memory.other_device, sizeof memory.other_device)) return capi::PointerKind::other_device;
  return capi::PointerKind::unknown;
}

// An address whose query fails, as every driver query does on a context lost to an earlier fault.
inline const float *const lost_context_address = reinterpret_cast<const float *>(uintptr_t{0x2000});
constexpr int kIllegalAddress = 700;  // cudaErrorIllegalAddress

// Each row of memory.device is one allocation, as the driver would report it.
inline capi::Status simulated(const void *pointer, capi::PointerInfo *info) {
  if (pointer == lost_context_address)
    return capi::Status::failure(detail::StatusCode::cuda_error,
                                 "cuPointerGetAttributes failed: an illegal memory access was encountered",
                                 kIllegalAddress);
  info->kind = classify(pointer);
  if (info->kind == capi::PointerKind::device_accessible) {
    const size_t row = (reinterpret_cast<uintptr_t>(pointer) - reinterpret_cast<uintptr_t>(device_begin())) /
                       static_cast<size_t>(kAllocationBytes);
    info->range_begin = reinterpret_cast<uintptr_t>(memory.device[row]);
    info->range_bytes = sizeof memory.device[row];
  }
  return capi::Status::success();
}

[[noreturn]] inline void fail(const char *what, const std::string &message) {
  std::fprintf(stderr, "fuzz_validate: %s: %s\n", what, message.c_str());
  std::abort();
}

// Element access by address: the simulated memory holds floats or doubles as a call sees it.
template <typename T>
T load(const void *address) {
  T value;
  std::memcpy(&value, address, sizeof value);
  return value;
}
template <typename T>
void store(void *address, T value) {
  std::memcpy(address, &value, sizeof value);
}
// `base` + `index` elements of T, as an address (the caller knows it lies in the simulated memory).
template <typename T>
const unsigned char *element(const void *base, int64_t index) {
  return static_cast<const unsigned char *>(base) + index * static_cast<int64_t>(sizeof(T));
}
template <typename T>
unsigned char *element(void *base, int64_t index) {
  return static_cast<unsigned char *>(base) + index * static_cast<int64_t>(sizeof(T));
}
// Where an address of the simulated memory lies in a copy of it.
template <typename T>
const unsigned char *in_copy(const SimulatedMemory &copy, const T *address) {
  return reinterpret_cast<const unsigned char *>(&copy) +
         (reinterpret_cast<uintptr_t>(address) - reinterpret_cast<uintptr_t>(&memory));
}

// The poison: values in [-1, 1) with a few NaN, Inf and huge ones where the input says, of the element type
// the call reads.
struct Random {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 40) / double(1 << 23) - 1.0; }
};

template <typename T>
void poison(FuzzedDataProvider &data) {
  Random random{data.ConsumeIntegral<uint64_t>()};
  constexpr int64_t count = sizeof memory.device / sizeof(T);
  for (int64_t i = 0; i < count; ++i) store(element<T>(memory.device, i), static_cast<T>(random.uniform()));
  for (unsigned char &byte : memory.host) byte = static_cast<unsigned char>(random.next());
  for (unsigned char &byte : memory.other_device) byte = static_cast<unsigned char>(random.next());
  static const T specials[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                               -std::numeric_limits<T>::infinity(), std::numeric_limits<T>::max() / 4};
  for (int planted = data.ConsumeIntegralInRange<int>(0, 2); planted > 0; --planted)
    store(element<T>(memory.device, data.ConsumeIntegralInRange<int64_t>(0, count - 1)),
          data.PickValueInArray(specials));
}

inline int64_t pick_size(FuzzedDataProvider &data) {
  static const int64_t interesting[] = {0,
                                        1,
                                        2,
                                        3,
                                        4,
                                        5,
                                        7,
                                        8,
                                        16,
                                        17,
                                        127,
                                        128,
                                        129,
                                        1000,
                                        4096,
                                        1 << 20,
                                        int64_t(1) << 31,
                                        int64_t(1) << 32,
                                        int64_t(1) << 62,
                                        std::numeric_limits<int64_t>::max(),
                                        std::numeric_limits<int64_t>::max() / 2,
                                        std::numeric_limits<int64_t>::min(),
                                        -1,
                                        -2,
                                        -4096};
  if (data.ConsumeBool()) return data.PickValueInArray(interesting);
  return data.ConsumeIntegral<int64_t>();
}

inline const float *device_float(int allocation, int64_t index) {
  return reinterpret_cast<const float *>(element<float>(memory.device[allocation], index));
}

inline const float *pick_pointer(FuzzedDataProvider &data) {
  switch (data.ConsumeIntegralInRange<int>(0, 8)) {
    case 0: return nullptr;
    case 6: return lost_context_address;
    case 1: return reinterpret_cast<const float *>(memory.host);
    case 2: return reinterpret_cast<const float *>(memory.other_device);
    case 3: return reinterpret_cast<const float *>(uintptr_t{0x1000});  // unknown to the driver
    case 4: return device_float(0, 1);                                  // off 8 and 16 bytes
    case 5:
      return device_float(data.ConsumeIntegralInRange<int>(0, kAllocations - 1),
                          data.ConsumeIntegralInRange<int64_t>(0, kAllocationFloats - 1));
    default: return device_float(data.ConsumeIntegralInRange<int>(0, kAllocations - 1), 0);
  }
}

inline float pick_scalar(FuzzedDataProvider &data) {
  static const float interesting[] = {
      0.0f, -0.0f, 1.0f, -0.5f, 2.25f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()};
  return data.ConsumeBool() ? data.PickValueInArray(interesting) : data.ConsumeFloatingPoint<float>();
}

inline int pick_enum(FuzzedDataProvider &data, std::initializer_list<int> valid) {
  if (data.ConsumeBool()) return *(valid.begin() + data.ConsumeIntegralInRange<size_t>(0, valid.size() - 1));
  return data.ConsumeIntegral<int>();
}

inline fg_math_mode_t pick_math(FuzzedDataProvider &data) {
  return data.ConsumeBool() ? FG_MATH_FP32 : FG_MATH_FP32_EMULATED;
}

// A refusal's message starts with the argument it names.
inline void check_refusal(const capi::Status &status, std::initializer_list<const char *> names) {
  if (status.code != detail::StatusCode::invalid_value)
    fail("a refusal is not FG_STATUS_INVALID_VALUE", status.message);
  for (const char *name : names) {
    const std::string prefix(name);
    if (status.message.compare(0, prefix.size(), prefix) == 0) {
      const char next = status.message.size() > prefix.size() ? status.message[prefix.size()] : '\0';
      if (next == ' ' || next == '\'') return;
    }
  }
  fail("a refusal names no argument", status.message);
}

// A failed pointer query reaches the caller as it was, and only for a pointer whose query fails.
inline bool passed_on_query_failure(const capi::Status &status, std::initializer_list<const void *> pointers) {
  if (status.code != detail::StatusCode::cuda_error) return false;
  if (status.cuda_error != kIllegalAddress || status.message.find("cuPointerGetAttributes failed") == std::string::npos)
    fail("a failed pointer query was not passed on as it was", status.message);
  for (const void *pointer : pointers)
    if (pointer == lost_context_address) return true;
  fail("a pointer query failed for no pointer whose query fails", status.message);
}

// What a runner returns when the input makes it fail (a device out of memory, say): the call passes it on.
constexpr int kRunnerCudaError = 2;  // cudaErrorMemoryAllocation
inline capi::Status runner_failure() {
  return capi::Status::failure(detail::StatusCode::alloc_failed, "simulated runner: out of device memory",
                               kRunnerCudaError);
}
inline bool is_runner_failure(const capi::Status &status) {
  return status.code == detail::StatusCode::alloc_failed && status.cuda_error == kRunnerCudaError &&
         status.message == runner_failure().message;
}

// No byte of the simulated memory changed.
inline void check_unchanged(const SimulatedMemory &before, const char *what) {
  if (std::memcmp(&before, &memory, sizeof memory) != 0) fail(what, "the simulated memory changed");
}

// One element the reference computed: where it is, its value, and the sum of the magnitudes of its terms
// (the scale of its rounding error).
struct Expected {
  const unsigned char *address;
  double value, scale;
};

// NaN where the reference has NaN, an infinity where it has that infinity, else within `tolerance` of the
// terms' scale; every byte outside the expected elements as it was.
template <typename T>
void check_result(const SimulatedMemory &before, const std::vector<Expected> &expected, double tolerance,
                  const char *what) {
  std::vector<bool> covered(sizeof memory, false);
  const auto offset = [](const unsigned char *address) {
    return static_cast<size_t>(reinterpret_cast<uintptr_t>(address) - reinterpret_cast<uintptr_t>(&memory));
  };
  for (const Expected &e : expected) {
    const T got = load<T>(e.address), want = static_cast<T>(e.value);
    bool right;
    if (std::isnan(want) || std::isnan(got))
      right = std::isnan(want) && std::isnan(got);
    else if (std::isinf(want) || std::isinf(got))
      right = got == want;
    else
      right = std::fabs(static_cast<double>(got) - e.value) <=
              tolerance * e.scale + std::fabs(e.value) * std::numeric_limits<T>::epsilon();
    if (!right) {
      char text[160];
      std::snprintf(text, sizeof text, "element at byte %zu is %.9g, the reference %.9g (scale %.3g)",
                    offset(e.address), static_cast<double>(got), e.value, e.scale);
      fail(what, text);
    }
    for (size_t byte = 0; byte < sizeof(T); ++byte) covered[offset(e.address) + byte] = true;
  }
  const auto *now = reinterpret_cast<const unsigned char *>(&memory);
  const auto *then = reinterpret_cast<const unsigned char *>(&before);
  for (size_t byte = 0; byte < sizeof memory; ++byte)
    if (!covered[byte] && now[byte] != then[byte]) fail(what, "a byte outside the result changed");
}

// More work than this is not computed (accepted problems fit the simulated memory, far below it).
constexpr __int128 kMostWork = __int128{1} << 22;

// A pointer's distance from the simulated device memory's first float, in floats (any pointer, NULL included).
inline int64_t float_index(const void *pointer) {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(pointer) - reinterpret_cast<uintptr_t>(device_begin())) /
         static_cast<int64_t>(sizeof(float));
}

// One operand as the caller laid it out: `count` matrices of `lines` runs of `length` floats.
struct Operand {
  const float *data;
  int64_t lines, length, ld, stride, count;

  // One past the farthest element, exactly.
  __int128 extent() const { return (__int128)(lines - 1) * ld + length + (__int128)(count - 1) * stride; }
  // Its elements as indices into the simulated device memory (the caller checked they lie inside it).
  std::vector<int64_t> elements() const {
    std::vector<int64_t> out;
    const int64_t base = float_index(data);
    for (int64_t b = 0; b < count; ++b)
      for (int64_t r = 0; r < lines; ++r)
        for (int64_t c = 0; c < length; ++c) out.push_back(base + b * stride + r * ld + c);
    return out;
  }
};

// Whether the operand lies inside the simulated allocation its pointer is in.
inline bool inside_allocation(const Operand &x) {
  if (x.lines < 1 || x.length < 1 || x.ld < 1 || x.stride < 0 || x.count < 1) return false;
  if (classify(x.data) != capi::PointerKind::device_accessible) return false;
  const int64_t offset = float_index(x.data);
  const int64_t row_end = (offset / kAllocationFloats + 1) * kAllocationFloats;
  return (__int128)offset + x.extent() <= row_end;
}

inline bool small(const Operand &x) {
  return x.extent() <= kAllocations * kAllocationFloats && (__int128)x.lines * x.length * x.count <= 4096;
}

inline bool writes_twice(const Operand &c) {
  std::set<int64_t> seen;
  for (int64_t e : c.elements())
    if (!seen.insert(e).second) return true;
  return false;
}

inline bool share_elements(const Operand &x, const Operand &y) {
  const std::vector<int64_t> xs = x.elements();
  const std::set<int64_t> ys(xs.begin(), xs.end());
  for (int64_t e : y.elements())
    if (ys.count(e) != 0) return true;
  return false;
}

}  // namespace fuzzsim
