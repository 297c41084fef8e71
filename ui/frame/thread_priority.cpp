// Lowering a processing thread's priority below the GUI thread's (Linux only).
#include "ui/frame/thread_priority.h"

#include <algorithm>
#include <cstdlib>
#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace stacklens::ui {

void lowerThreadPriority() {
#if defined(__linux__)
  // Nice +5 gives the GUI thread and the renderer about three times the CPU share of a busy
  // processing thread without starving processing on a machine shared with other work (+10 made
  // scrubbing twice as slow on our loaded 2-core machine). STACKLENS_PROCESSING_NICE overrides.
  static const int nice = [] {
    const char* text = std::getenv("STACKLENS_PROCESSING_NICE");
    return text ? std::clamp(std::atoi(text), 0, 19) : 5;
  }();
  // On Linux the nice value is per thread (PRIO_PROCESS with a thread id); failure only means
  // processing competes with the GUI at equal priority.
  if (nice > 0) (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), nice);
#endif
}

}  // namespace stacklens::ui
