// SIGINT/SIGTERM: set a flag the first time, restore the default action for the second.
#include "app/cli/interrupt.h"

#include <csignal>

namespace stacklens::cli {
namespace {

std::atomic<bool> stopRequested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the handler stores into it");

extern "C" void onInterrupt(int signal) {
  stopRequested.store(true);
  std::signal(signal, SIG_DFL);  // a second Ctrl-C ends the process at once
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

}  // namespace stacklens::cli
