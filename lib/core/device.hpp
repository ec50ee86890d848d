// What the kernels and AUTO's choices need to know about the device a handle is bound to.
#pragma once

#include <cstddef>

#include "core/status.hpp"

namespace fastgemm::detail {

struct DeviceInfo {
  int ordinal = 0;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  size_t smem_per_block_optin = 0;  // the most dynamic shared memory one block may ask for
  size_t l2_bytes = 0;

  int arch() const { return cc_major * 10 + cc_minor; }
};

// Reads the attributes of the calling thread's current device.
Status query_current_device(DeviceInfo *info);

// Makes `ordinal` current for the guard's lifetime and restores the previous device after, so that a
// handle works from a thread whose current device is another one.
class DeviceGuard {
 public:
  DeviceGuard() = default;
  DeviceGuard(const DeviceGuard &) = delete;
  DeviceGuard &operator=(const DeviceGuard &) = delete;
  ~DeviceGuard();
  Status enter(int ordinal);

 private:
  int previous_ = -1;
};

}  // namespace fastgemm::detail
