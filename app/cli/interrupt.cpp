// SIGINT/SIGTERM: set a flag the first time; a second signal a moment later ends the process.
#include "app/cli/interrupt.h"

#include <time.h>

#include <csignal>
#include <cstdint>

namespace stacklens::cli {
namespace {

std::atomic<bool> stopRequested{false};
std::atomic<int64_t> firstSignalNs{0};
static_assert(std::atomic<bool>::is_always_lock_free, "the handler stores into it");
static_assert(std::atomic<int64_t>::is_always_lock_free, "the handler stores into it");

int64_t monotonicNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);  // async-signal-safe
  return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

extern "C" void onInterrupt(int signal) {
  const int64_t now = monotonicNs();
  if (!stopRequested.exchange(true)) {
    firstSignalNs.store(now);
    return;
  }
  // The same request can arrive twice at once: timeout(1) signals the command and then its
  // whole process group. A second Ctrl-C after that ends the process at once.
  if (now - firstSignalNs.load() < 500000000) return;
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

const std::atomic<bool>* installInterruptHandler() {
  static const bool installed = [] {
    std::signal(SIGINT, onInterrupt);
    std::signal(SIGTERM, onInterrupt);
    return true;
  }();
  (void)installed;
  return &stopRequested;
}

bool interrupted() { return stopRequested.load(); }

void throwIfInterrupted() {
  if (interrupted()) throw compute::Cancelled();
}

compute::Job interruptible() { return compute::Job(installInterruptHandler()); }

}  // namespace stacklens::cli
