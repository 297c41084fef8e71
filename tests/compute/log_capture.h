// Test helper: what the library logs (compute/log.h) while a LogCapture lives, as text.
#pragma once

#include <mutex>
#include <string>
#include <utility>

#include "compute/log.h"

namespace stacklens::testing {

class LogCapture {
 public:
  LogCapture()
      : previous_(compute::setLogSink([this](compute::LogLevel, const std::string& line) {
          std::lock_guard<std::mutex> lock(mutex_);
          text_ += line + "\n";
        })) {}
  ~LogCapture() { compute::setLogSink(previous_); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // Everything logged so far, and empties the record.
  std::string take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(text_, {});
  }

 private:
  std::mutex mutex_;
  std::string text_;
  compute::LogSink previous_;
};

}  // namespace stacklens::testing
