// SPDX-License-Identifier: Apache-2.0
// A thread's own text (its last error message, the line of the call being traced) that stays safe while the thread
// ends. A thread_local object is destroyed in the reverse order of its first use, and another thread_local's
// destructor may still call the library after this one is gone: libfastgemm_blas destroys each thread's handle
// from one, and so may any program. Such a call then finds no text (nullptr) instead of a destroyed string
// whose buffer has gone back to the allocator, which a write would corrupt.
//
//   thread_local bool t_gone = false;                 // trivially destructible: valid until the thread's end
//   thread_local ThreadText t_text(&t_gone);
//   std::string *text = ThreadText::of(t_text, t_gone);  // nullptr once t_text is destroyed
#pragma once

#include <string>

namespace fastgemm::capi {

class ThreadText {
 public:
  explicit ThreadText(bool *gone) : gone_(gone) {}
  ~ThreadText() { *gone_ = true; }
  ThreadText(const ThreadText &) = delete;
  ThreadText &operator=(const ThreadText &) = delete;

  // The text, or nullptr after its destructor ran (a thread_local is not made again once destroyed).
  static std::string *of(ThreadText &text, const bool &gone) { return gone ? nullptr : &text.text_; }

 private:
  bool *gone_;
  std::string text_;
};

}  // namespace fastgemm::capi
