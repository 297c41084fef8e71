// The process-wide stop flag of the writers.
#include "io/write_stop.h"

namespace stacklens::io {
namespace {

std::atomic<const std::atomic<bool>*> stopFlag{nullptr};

}  // namespace

void stopWritesWhen(const std::atomic<bool>* flag) { stopFlag.store(flag); }

void throwIfWritesStopped(const std::string& path) {
  const std::atomic<bool>* flag = stopFlag.load(std::memory_order_relaxed);
  if (flag && flag->load(std::memory_order_relaxed)) throw WritesStopped(path);
}

}  // namespace stacklens::io
