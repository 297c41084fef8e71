// The stop flags of the network reads: one process-wide, one per thread's scope.
#include "io/read_stop.h"

namespace stacklens::io {
namespace {

std::atomic<const std::atomic<bool>*> stopFlag{nullptr};
thread_local const std::atomic<bool>* scopeFlag = nullptr;

bool isSet(const std::atomic<bool>* flag) { return flag && flag->load(std::memory_order_relaxed); }

}  // namespace

void stopReadsWhen(const std::atomic<bool>* flag) { stopFlag.store(flag); }

ReadStopScope::ReadStopScope(const std::atomic<bool>* flag) : outer_(scopeFlag) {
  if (flag) scopeFlag = flag;
}

ReadStopScope::~ReadStopScope() { scopeFlag = outer_; }

const std::atomic<bool>* threadReadStop() { return scopeFlag; }

bool readsStopped() { return isSet(stopFlag.load(std::memory_order_relaxed)) || isSet(scopeFlag); }

}  // namespace stacklens::io
