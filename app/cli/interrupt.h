// Ctrl-C during a long command: the first SIGINT (or SIGTERM) asks the running job to stop, its
// operations see it between iterations and nothing is written; the second ends the process.
// main() installs the handlers before any command runs and hands the flag to the writers
// (io/write_stop.h), so that no output is renamed into place after Ctrl-C.
#pragma once

#include <atomic>

#include "compute/job.h"

namespace stacklens::cli {

// Installs the handlers (once) and returns the flag they set, for compute::Job.
const std::atomic<bool>* installInterruptHandler();
bool interrupted();
// Throws compute::Cancelled once interrupted (for the CLI's own loops: reading, converting).
void throwIfInterrupted();
// A job that stops on Ctrl-C.
compute::Job interruptible();

}  // namespace stacklens::cli
