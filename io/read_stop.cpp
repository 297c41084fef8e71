// The process-wide stop flag of the network reads.
#include "io/read_stop.h"

namespace stacklens::io {
namespace {

std::atomic<const std::atomic<bool>*> stopFlag{nullptr};

}  // namespace

void stopReadsWhen(const std::atomic<bool>* flag) { stopFlag.store(flag); }

bool readsStopped() {
  const std::atomic<bool>* flag = stopFlag.load(std::memory_order_relaxed);
  return flag && flag->load(std::memory_order_relaxed);
}

}  // namespace stacklens::io
