// The sink is copied out under the lock and called outside it, so a sink may log or be replaced
// from within a message without deadlock.
#include "compute/log.h"

#include <mutex>

namespace stacklens::compute {
namespace {

std::mutex& sinkMutex() {
  static std::mutex m;
  return m;
}

LogSink& currentSink() {
  static LogSink sink;
  return sink;
}

}  // namespace

LogSink setLogSink(LogSink sink) {
  std::lock_guard<std::mutex> lock(sinkMutex());
  std::swap(currentSink(), sink);
  return sink;
}

void logMessage(LogLevel level, const std::string& text) {
  LogSink sink;
  {
    std::lock_guard<std::mutex> lock(sinkMutex());
    sink = currentSink();
  }
  if (sink) sink(level, text);
}

}  // namespace stacklens::compute
