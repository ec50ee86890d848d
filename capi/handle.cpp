// SPDX-License-Identifier: Apache-2.0
// The C ABI's handle and its settings: status names, the last error, fg_create and fg_destroy, the stream,
// the workspace, the devices of fg_sgemm_host, the math mode, the reproducibility level and the selected
// algorithms. Every entry point runs its body inside guarded() (capi/entry.hpp): nothing escapes.
#include "fastgemm/fastgemm.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "capi/calls.hpp"
#include "capi/entry.hpp"
#include "capi/handle.hpp"
#include "capi/statuses.hpp"
#include "capi/trace.hpp"
#include "core/context.hpp"
#include "rowmean/registry.hpp"
#include "sgemm/registry.hpp"

namespace fastgemm::capi {
namespace {

using detail::Context;
using detail::StatusCode;

// Algorithm ids: the enums reserve 0..99 for the project's algorithms and 100 for cuBLAS. A value in that
// range that this build does not carry is not supported; any other value is invalid.
bool in_algo_range(int value) { return (value >= 0 && value <= 99) || value == 100; }

template <typename Id, typename Find>
Status check_algo(Id algo, Id auto_id, Find &&find) {
  if (!in_algo_range(static_cast<int>(algo)))
    return Status::failure(StatusCode::invalid_value,
                           "algo = " + std::to_string(static_cast<int>(algo)) + " is no algorithm id");
  if (algo != auto_id && find(algo) == nullptr)
    return Status::failure(StatusCode::not_supported,
                           "algo = " + std::to_string(static_cast<int>(algo)) + " is not in this build");
  return Status::success();
}

bool is_math_mode(int value) { return value == FG_MATH_FP32 || value == FG_MATH_FP32_EMULATED; }

bool is_reproducibility(int value) { return value == FG_REPRODUCIBLE_RUN || value == FG_REPRODUCIBLE_SHAPE; }

// The setting an environment variable names (by the setting's name function); left as it is when the variable
// is unset; any other value is refused, naming the variable and the settings it may name.
template <typename Setting, size_t Count>
Status setting_from_environment(const char *variable, const Setting (&settings)[Count], const char *(*name)(Setting),
                                const char *what, Setting *out) {
  const char *value = std::getenv(variable);
  if (value == nullptr) return Status::success();
  std::string names;
  for (size_t i = 0; i < Count; ++i) {
    if (std::strcmp(value, name(settings[i])) == 0) {
      *out = settings[i];
      return Status::success();
    }
    names += std::string(i == 0 ? "" : i + 1 == Count ? " or " : ", ") + name(settings[i]);
  }
  return Status::failure(StatusCode::invalid_value, std::string(variable) + " = \"" + std::string(value).substr(0, 64) +
                                                        "\" is no " + what + " (" + names + ")");
}

// FASTGEMM_MATH and FASTGEMM_REPRODUCIBLE, read by each fg_create: unset means the handle's default.
Status math_mode_from_environment(fg_math_mode_t *mode) {
  const fg_math_mode_t modes[] = {FG_MATH_FP32, FG_MATH_FP32_EMULATED};
  return setting_from_environment("FASTGEMM_MATH", modes, fg_math_mode_name, "math mode", mode);
}

Status reproducibility_from_environment(fg_reproducibility_t *level) {
  const fg_reproducibility_t levels[] = {FG_REPRODUCIBLE_RUN, FG_REPRODUCIBLE_SHAPE};
  return setting_from_environment("FASTGEMM_REPRODUCIBLE", levels, fg_reproducibility_name, "reproducibility level",
                                  level);
}

// The handle's workspace: the caller's memory, or NULL, 0 for one of its own.
class ContextWorkspace final : public WorkspaceHolder {
 public:
  explicit ContextWorkspace(Context &context) : context_(context) {}
  Status set(void *workspace, size_t bytes) override { return context_.set_workspace(workspace, bytes); }

 private:
  Context &context_;
};

// A setting's getter: the handle and the output checked (NULL output named `name`), then *out = read(handle).
// Settings are the handle's own: no device is made current.
template <typename T, typename Read>
fg_status_t get_setting(const char *function, fg_handle_t handle, T *out, const char *name, Read &&read) {
  CallTrace trace(function, "handle=%p", static_cast<void *>(handle));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    if (out == nullptr) return null_argument(name);
    *out = read(*handle);
    return Status::success();
  });
}

// A setting's setter: the handle checked, then check(value), then write(handle) on success.
template <typename Check, typename Write>
fg_status_t set_setting(CallTrace &trace, fg_handle_t handle, Check &&check, Write &&write) {
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    FG_RETURN_IF_ERROR(check());
    write(*handle);
    return Status::success();
  });
}

Status check_math_mode(fg_math_mode_t mode) {
  if (is_math_mode(static_cast<int>(mode))) return Status::success();
  return Status::failure(StatusCode::invalid_value,
                         "mode = " + std::to_string(static_cast<int>(mode)) + " is no fg_math_mode_t");
}

Status check_reproducibility(fg_reproducibility_t level) {
  if (is_reproducibility(static_cast<int>(level))) return Status::success();
  return Status::failure(StatusCode::invalid_value,
                         "level = " + std::to_string(static_cast<int>(level)) + " is no fg_reproducibility_t");
}

}  // namespace
}  // namespace fastgemm::capi

using namespace fastgemm;
using namespace fastgemm::capi;
using fastgemm::detail::Context;

extern "C" {

int fg_version(void) { return FG_VERSION; }

const char *fg_status_name(fg_status_t status) { return status_name(status); }

const char *fg_status_string(fg_status_t status) {
  switch (status) {
    case FG_STATUS_SUCCESS: return "The call succeeded.";
    case FG_STATUS_INVALID_VALUE: return "An argument is outside its domain.";
    case FG_STATUS_INVALID_HANDLE: return "The handle is NULL.";
    case FG_STATUS_NOT_SUPPORTED: return "The selected algorithm cannot run this problem.";
    case FG_STATUS_NO_DEVICE: return "No usable CUDA device or driver was found.";
    case FG_STATUS_ALLOC_FAILED: return "Memory could not be allocated; nothing was written.";
    case FG_STATUS_CUDA_ERROR: return "A CUDA runtime call failed.";
    case FG_STATUS_CUBLAS_ERROR: return "A cuBLAS call failed.";
    case FG_STATUS_INTERNAL_ERROR: return "An internal error occurred in fastgemm.";
  }
  return "The status value is not one fastgemm defines.";
}

const char *fg_last_error_message(void) { return last_error_message(); }

int fg_last_cuda_error(void) { return last_cuda_error(); }

fg_status_t fg_create(fg_handle_t *handle) {
  CallTrace trace("fg_create", "handle=%p", static_cast<void *>(handle));
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_argument("handle");
    *handle = nullptr;
    HandleSettings settings;
    FG_RETURN_IF_ERROR(math_mode_from_environment(&settings.math_mode));
    FG_RETURN_IF_ERROR(reproducibility_from_environment(&settings.reproducibility));
    Context *context = nullptr;
    FG_RETURN_IF_ERROR(Context::create(&context));
    std::unique_ptr<Context> owned(context);
    auto made = std::make_unique<fg_context>();
    made->context = std::move(owned);
    made->settings = settings;
    *handle = made.release();
    return Status::success();
  });
}

fg_status_t fg_destroy(fg_handle_t handle) {
  if (handle == nullptr) return FG_STATUS_SUCCESS;
  CallTrace trace("fg_destroy", "handle=%p", static_cast<void *>(handle));
  return with_handle(trace, handle, [&](fg_context &) -> Status {
    delete handle;
    return Status::success();
  });
}

fg_status_t fg_set_stream(fg_handle_t handle, cudaStream_t stream) {
  CallTrace trace("fg_set_stream", "handle=%p, stream=%p", static_cast<void *>(handle), static_cast<void *>(stream));
  return with_handle(trace, handle, [&](fg_context &h) { return h.context->set_stream(stream); });
}

fg_status_t fg_get_stream(fg_handle_t handle, cudaStream_t *stream) {
  return get_setting("fg_get_stream", handle, stream, "stream", [](fg_context &h) { return h.context->stream(); });
}

fg_status_t fg_set_workspace(fg_handle_t handle, void *workspace, size_t bytes) {
  CallTrace trace("fg_set_workspace", "handle=%p, workspace=%p, bytes=%zu", static_cast<void *>(handle), workspace,
                  bytes);
  return with_handle(trace, handle, [&](fg_context &h) -> Status {
    ContextWorkspace holder(*h.context);
    return set_workspace_call(workspace, bytes, driver_inspector(*h.context), holder);
  });
}

fg_status_t fg_set_devices(fg_handle_t handle, const int *devices, int count) {
  CallTrace trace("fg_set_devices", "handle=%p, devices=%p, count=%d", static_cast<void *>(handle),
                  static_cast<const void *>(devices), count);
  return with_handle(trace, handle, [&](fg_context &h) { return host_engine(h).set_devices(devices, count); });
}

fg_status_t fg_get_devices(fg_handle_t handle, int *devices, int capacity, int *count) {
  CallTrace trace("fg_get_devices", "handle=%p, devices=%p, capacity=%d", static_cast<void *>(handle),
                  static_cast<void *>(devices), capacity);
  return guarded(trace, [&]() -> Status {
    if (handle == nullptr) return null_handle();
    if (count == nullptr) return null_argument("count");
    if (capacity < 0)
      return Status::failure(StatusCode::invalid_value, "capacity = " + std::to_string(capacity) + " must be >= 0");
    if (capacity > 0 && devices == nullptr) return null_argument("devices (with capacity > 0)");
    const std::vector<int> &list = host_engine(*handle).devices();
    const int listed = static_cast<int>(list.size());
    for (int i = 0; i < listed && i < capacity; ++i) devices[i] = list[i];
    *count = listed;
    return Status::success();
  });
}

fg_status_t fg_set_math_mode(fg_handle_t handle, fg_math_mode_t mode) {
  CallTrace trace("fg_set_math_mode", "handle=%p, mode=%d", static_cast<void *>(handle), static_cast<int>(mode));
  return set_setting(
      trace, handle, [&] { return check_math_mode(mode); }, [&](fg_context &h) { h.settings.math_mode = mode; });
}

fg_status_t fg_get_math_mode(fg_handle_t handle, fg_math_mode_t *mode) {
  return get_setting("fg_get_math_mode", handle, mode, "mode", [](fg_context &h) { return h.settings.math_mode; });
}

const char *fg_math_mode_name(fg_math_mode_t mode) {
  switch (mode) {
    case FG_MATH_FP32: return "fp32";
    case FG_MATH_FP32_EMULATED: return "fp32_emulated";
  }
  return "unknown";
}

fg_status_t fg_set_reproducibility(fg_handle_t handle, fg_reproducibility_t level) {
  CallTrace trace("fg_set_reproducibility", "handle=%p, level=%d", static_cast<void *>(handle),
                  static_cast<int>(level));
  return set_setting(
      trace, handle, [&] { return check_reproducibility(level); },
      [&](fg_context &h) { h.settings.reproducibility = level; });
}

fg_status_t fg_get_reproducibility(fg_handle_t handle, fg_reproducibility_t *level) {
  return get_setting("fg_get_reproducibility", handle, level, "level",
                     [](fg_context &h) { return h.settings.reproducibility; });
}

const char *fg_reproducibility_name(fg_reproducibility_t level) {
  switch (level) {
    case FG_REPRODUCIBLE_RUN: return "run";
    case FG_REPRODUCIBLE_SHAPE: return "shape";
  }
  return "unknown";
}

fg_status_t fg_set_sgemm_algo(fg_handle_t handle, fg_sgemm_algo_t algo) {
  CallTrace trace("fg_set_sgemm_algo", "handle=%p, algo=%d", static_cast<void *>(handle), static_cast<int>(algo));
  return set_setting(
      trace, handle, [&] { return check_algo(algo, FG_SGEMM_AUTO, detail::find_sgemm_variant); },
      [&](fg_context &h) { h.settings.sgemm_algo = algo; });
}

fg_status_t fg_get_sgemm_algo(fg_handle_t handle, fg_sgemm_algo_t *algo) {
  return get_setting("fg_get_sgemm_algo", handle, algo, "algo", [](fg_context &h) { return h.settings.sgemm_algo; });
}

const char *fg_sgemm_algo_name(fg_sgemm_algo_t algo) {
  if (algo == FG_SGEMM_AUTO) return "auto";
  const auto *variant = detail::find_sgemm_variant(algo);
  return variant != nullptr ? variant->name : "unknown";
}

fg_status_t fg_set_rowmean_algo(fg_handle_t handle, fg_rowmean_algo_t algo) {
  CallTrace trace("fg_set_rowmean_algo", "handle=%p, algo=%d", static_cast<void *>(handle), static_cast<int>(algo));
  return set_setting(
      trace, handle, [&] { return check_algo(algo, FG_ROWMEAN_AUTO, detail::find_rowmean_variant); },
      [&](fg_context &h) { h.settings.rowmean_algo = algo; });
}

fg_status_t fg_get_rowmean_algo(fg_handle_t handle, fg_rowmean_algo_t *algo) {
  return get_setting("fg_get_rowmean_algo", handle, algo, "algo",
                     [](fg_context &h) { return h.settings.rowmean_algo; });
}

const char *fg_rowmean_algo_name(fg_rowmean_algo_t algo) {
  if (algo == FG_ROWMEAN_AUTO) return "auto";
  const auto *variant = detail::find_rowmean_variant(algo);
  return variant != nullptr ? variant->name : "unknown";
}

}  // extern "C"
