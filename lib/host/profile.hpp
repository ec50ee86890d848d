// SPDX-License-Identifier: Apache-2.0
// Where an fg_sgemm_host call's time goes, when FASTGEMM_HOST_PROFILE names a file: each worker's host copies and
// waits (timed on the host) and its transfers and products (timed by events on its streams), appended to that file as
// CSV after the call, one span a line. A development aid: with the variable unset the engine makes none of this, and a
// profile that cannot be kept (an event or the file that cannot be made) is dropped without touching the call.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

namespace fastgemm::detail {

enum class HostActivity {
  product,        // device: one step's product (amount: its flops)
  upload,         // device: a host-to-device transfer (amount: bytes)
  download,       // device: a device-to-host transfer (amount: bytes)
  peer_copy,      // device: a piece of B copied from another worker's device (amount: bytes; FASTGEMM_HOST_PEER)
  pack,           // host: packing a pageable piece into a pinned ring chunk (amount: bytes)
  pack_shared,    // host: a shared piece of B, packed here or waited for while another worker packs it
  unpack,         // host: unpacking a downloaded chunk into the caller's C (amount: bytes)
  wait_uploads,   // host, product thread: its step's pieces are not yet enqueued
  wait_c_slot,    // host, product thread: the C slot's previous tile is not yet downloaded
  wait_one_tile,  // host, product thread: before helping another band, its own device still computes
  wait_slot,      // host, upload thread: the slot it fills is still read by earlier steps
  wait_upload,    // host, upload thread: a ring chunk or shared piece is still being transferred
  wait_download,  // host, download thread: a chunk of C is still being transferred
  wait_peer,      // host, upload thread: another worker is still bringing a piece of B to its device
  // The call's setup, on the calling thread (worker -1): the workers (contexts, streams, events), each worker's device
  // buffers and pinned rings (device: the worker's), the pinned pieces of B shared by the workers, and peer access.
  setup_workers,
  setup_buffers,
  setup_pinned,
  setup_peers,
};

const char *host_activity_name(HostActivity activity);

class HostProfile {
 public:
  // The profile FASTGEMM_HOST_PROFILE asks for, or nullptr when it is unset or empty.
  static std::unique_ptr<HostProfile> from_environment();
  explicit HostProfile(std::string path);
  ~HostProfile();
  HostProfile(const HostProfile &) = delete;
  HostProfile &operator=(const HostProfile &) = delete;

  // Seconds since the profile was made.
  double now() const;
  // A span of host work from `begin` (now() when it began) to now.
  void host(int worker, int device, HostActivity activity, double begin, int64_t amount = 0);
  // Device work on `stream`: gpu_begin before it is enqueued, gpu_end after, with the mark gpu_begin returned.
  int64_t gpu_begin(int worker, int device, HostActivity activity, int64_t amount, cudaStream_t stream);
  void gpu_end(int64_t mark, cudaStream_t stream);
  // The reference of a worker's device times: recorded on `stream` and waited for, so that its host time is known.
  // Called by the worker before its first device span.
  void gpu_origin(int worker, cudaStream_t stream);
  // Turns the worker's device spans into times once its streams are idle, and frees their events.
  void resolve(int worker);
  // Appends the call: a comment line `# ` + `header` + its total time, then every span.
  void write(const std::string &header);

 private:
  struct Span {
    int worker = 0, device = 0;
    HostActivity activity = HostActivity::product;
    double begin = 0, end = 0;
    int64_t amount = 0;
  };
  struct Mark {
    Span span;
    cudaEvent_t begin = nullptr, end = nullptr;
    bool resolved = false;
  };
  struct Origin {
    int worker = -1;
    cudaEvent_t event = nullptr;
    double host_seconds = 0;
  };
  cudaEvent_t make_event();
  void release(Mark &mark);

  std::string path_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::vector<Span> spans_;
  std::vector<Mark> marks_;
  std::vector<Origin> origins_;
  bool device_times_ = true;  // false once an event could not be made or timed: the device spans are dropped
};

}  // namespace fastgemm::detail
