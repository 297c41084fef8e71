// Cancellation and progress for long-running operations.
#pragma once

#include <atomic>
#include <functional>
#include <stdexcept>

namespace stacklens::compute {

// Thrown by an operation that noticed its job was cancelled.
class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("operation cancelled") {}
};

// Passed to every operation. A default Job never cancels and reports nowhere.
// Operations call checkCancelled() inside long loops and report(fraction) as they go.
class Job {
 public:
  Job() = default;
  explicit Job(const std::atomic<bool>* cancelFlag, std::function<void(double)> progress = {})
      : cancel_(cancelFlag), progress_(std::move(progress)) {}

  bool cancelled() const { return cancel_ && cancel_->load(std::memory_order_relaxed); }
  void checkCancelled() const {
    if (cancelled()) throw Cancelled();
  }
  void report(double fraction) const {
    if (progress_) progress_(fraction);
  }
  // The flag this job polls (nullptr: never cancelled); lets a caller run sub-jobs that share it.
  const std::atomic<bool>* cancelFlag() const { return cancel_; }

 private:
  const std::atomic<bool>* cancel_ = nullptr;
  std::function<void(double)> progress_;
};

}  // namespace stacklens::compute
