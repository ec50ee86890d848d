// SPDX-License-Identifier: Apache-2.0
#include "host/profile.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace fastgemm::detail {

const char *host_activity_name(HostActivity activity) {
  switch (activity) {
    case HostActivity::product: return "product";
    case HostActivity::upload: return "upload";
    case HostActivity::download: return "download";
    case HostActivity::peer_copy: return "peer_copy";
    case HostActivity::pack: return "pack";
    case HostActivity::pack_shared: return "pack_shared";
    case HostActivity::unpack: return "unpack";
    case HostActivity::wait_uploads: return "wait_uploads";
    case HostActivity::wait_c_slot: return "wait_c_slot";
    case HostActivity::wait_one_tile: return "wait_one_tile";
    case HostActivity::wait_slot: return "wait_slot";
    case HostActivity::wait_upload: return "wait_upload";
    case HostActivity::wait_download: return "wait_download";
    case HostActivity::wait_peer: return "wait_peer";
    case HostActivity::setup_workers: return "setup_workers";
    case HostActivity::setup_buffers: return "setup_buffers";
    case HostActivity::setup_pinned: return "setup_pinned";
    case HostActivity::setup_peers: return "setup_peers";
  }
  return "unknown";
}

std::unique_ptr<HostProfile> HostProfile::from_environment() {
  const char *path = std::getenv("FASTGEMM_HOST_PROFILE");
  if (path == nullptr || *path == '\0') return nullptr;
  try {
    return std::make_unique<HostProfile>(path);
  } catch (...) {
    return nullptr;  // no memory for a profile: the call goes on without one
  }
}

HostProfile::HostProfile(std::string path) : path_(std::move(path)), start_(std::chrono::steady_clock::now()) {}

HostProfile::~HostProfile() {
  for (Mark &mark : marks_) release(mark);
  for (Origin &origin : origins_)
    if (origin.event != nullptr) (void)cudaEventDestroy(origin.event);
}

double HostProfile::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void HostProfile::host(int worker, int device, HostActivity activity, double begin, int64_t amount) {
  const double end = now();
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    spans_.push_back(Span{worker, device, activity, begin, end, amount});
  } catch (...) {
    // The span is lost; the call is not.
  }
}

cudaEvent_t HostProfile::make_event() {
  cudaEvent_t event = nullptr;
  if (cudaEventCreate(&event) != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: the profile's failure must not reach the call
    return nullptr;
  }
  return event;
}

void HostProfile::release(Mark &mark) {
  if (mark.begin != nullptr) (void)cudaEventDestroy(mark.begin);
  if (mark.end != nullptr) (void)cudaEventDestroy(mark.end);
  mark.begin = mark.end = nullptr;
}

int64_t HostProfile::gpu_begin(int worker, int device, HostActivity activity, int64_t amount, cudaStream_t stream) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!device_times_) return -1;
  }
  Mark mark;
  mark.span = Span{worker, device, activity, 0, 0, amount};
  mark.begin = make_event();
  mark.end = make_event();
  if (mark.begin == nullptr || mark.end == nullptr || cudaEventRecord(mark.begin, stream) != cudaSuccess) {
    (void)cudaGetLastError();
    release(mark);
    std::lock_guard<std::mutex> lock(mutex_);
    device_times_ = false;
    return -1;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    marks_.push_back(mark);
  } catch (...) {
    release(mark);
    device_times_ = false;
    return -1;
  }
  return static_cast<int64_t>(marks_.size()) - 1;
}

void HostProfile::gpu_end(int64_t mark, cudaStream_t stream) {
  if (mark < 0) return;
  cudaEvent_t end = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    end = marks_[static_cast<size_t>(mark)].end;
  }
  if (cudaEventRecord(end, stream) != cudaSuccess) {
    (void)cudaGetLastError();
    std::lock_guard<std::mutex> lock(mutex_);
    device_times_ = false;
  }
}

void HostProfile::gpu_origin(int worker, cudaStream_t stream) {
  Origin origin;
  origin.worker = worker;
  origin.event = make_event();
  if (origin.event == nullptr || cudaEventRecord(origin.event, stream) != cudaSuccess ||
      cudaEventSynchronize(origin.event) != cudaSuccess) {
    (void)cudaGetLastError();
    if (origin.event != nullptr) (void)cudaEventDestroy(origin.event);
    std::lock_guard<std::mutex> lock(mutex_);
    device_times_ = false;
    return;
  }
  origin.host_seconds = now();
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    origins_.push_back(origin);
  } catch (...) {
    (void)cudaEventDestroy(origin.event);
    device_times_ = false;
  }
}

void HostProfile::resolve(int worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Origin *origin = nullptr;
  for (const Origin &candidate : origins_)
    if (candidate.worker == worker) origin = &candidate;
  for (Mark &mark : marks_) {
    if (mark.span.worker != worker || mark.resolved) continue;
    mark.resolved = true;
    float begin_ms = 0, end_ms = 0;
    if (device_times_ && origin != nullptr) {
      if (cudaEventElapsedTime(&begin_ms, origin->event, mark.begin) != cudaSuccess ||
          cudaEventElapsedTime(&end_ms, origin->event, mark.end) != cudaSuccess) {
        (void)cudaGetLastError();  // not sticky (an end never recorded, after a failed step): the span is dropped
      } else {
        Span span = mark.span;
        span.begin = origin->host_seconds + 1e-3 * begin_ms;
        span.end = origin->host_seconds + 1e-3 * end_ms;
        try {
          spans_.push_back(span);
        } catch (...) {
          // The span is lost; the call is not.
        }
      }
    }
    release(mark);
  }
}

void HostProfile::write(const std::string &header) {
  const double total = now();
  std::lock_guard<std::mutex> lock(mutex_);
  std::sort(spans_.begin(), spans_.end(), [](const Span &a, const Span &b) { return a.begin < b.begin; });
  // The call's lines in one write, so that calls of other handles, threads or processes appending to the same file
  // land before or after them, never between.
  std::string text;
  char line[256];
  try {
    std::snprintf(line, sizeof line, " total_ms=%.3f device_times=%d\n", 1e3 * total, device_times_ ? 1 : 0);
    text = "# " + header + line + "worker,device,activity,begin_ms,end_ms,amount\n";
    for (const Span &span : spans_) {
      std::snprintf(line, sizeof line, "%d,%d,%s,%.4f,%.4f,%lld\n", span.worker, span.device,
                    host_activity_name(span.activity), 1e3 * span.begin, 1e3 * span.end,
                    static_cast<long long>(span.amount));
      text += line;
    }
  } catch (...) {
    return;  // no memory for the text: the profile is dropped
  }
  static std::mutex file_mutex;
  std::lock_guard<std::mutex> file_lock(file_mutex);
  std::FILE *file = std::fopen(path_.c_str(), "a");
  if (file == nullptr) return;
  std::setvbuf(file, nullptr, _IONBF, 0);
  (void)std::fwrite(text.data(), 1, text.size(), file);
  (void)std::fclose(file);
}

}  // namespace fastgemm::detail
