// What an operation is given besides its inputs: cancellation, progress, and where its result
// goes.
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

// Where an operation puts its image result (labels included).
enum class ResultPlace {
  Backend,  // where its backend computes (CUDA: the device): the default
  // Host memory. CUDA's per-slice operations (median, outliers, 2D blur and Richardson-Lucy,
  // resampling that keeps z) then stream a host stack through the device in chunks, so a stack
  // larger than the device still goes.
  Host,
};

// Passed to every operation. A default Job never cancels, reports nowhere and asks for the result
// where the backend computes. Operations call checkCancelled() inside long loops and
// report(fraction) as they go.
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

  ResultPlace resultPlace() const { return place_; }
  // This job, asking for the result in host memory.
  Job onHost() const {
    Job j = *this;
    j.place_ = ResultPlace::Host;
    return j;
  }

 private:
  const std::atomic<bool>* cancel_ = nullptr;
  std::function<void(double)> progress_;
  ResultPlace place_ = ResultPlace::Backend;
};

}  // namespace stacklens::compute
