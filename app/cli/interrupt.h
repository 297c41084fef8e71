// Ctrl-C during a long command: the first SIGINT (or SIGTERM) asks the running job to stop, its
// operations see it between iterations and nothing is written; the second ends the process.
#pragma once

#include <atomic>

namespace stacklens::cli {

// Installs the handlers (once) and returns the flag they set, for compute::Job.
const std::atomic<bool>* installInterruptHandler();
bool interrupted();

}  // namespace stacklens::cli
