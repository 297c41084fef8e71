// Stopping every network read at once (stacklens-cli's Ctrl-C, the viewer closing): transfers in
// flight look at one process-wide flag while they wait for bytes, so that a stalled server never
// holds the program up until its timeouts run out.
#pragma once

#include <atomic>

namespace stacklens::io {

// The flag the HTTP transfers look at (nullptr, the default: never stopped). The program owns it.
void stopReadsWhen(const std::atomic<bool>* flag);
// Whether the flag is set; a transfer then ends with an IoError saying it was stopped.
bool readsStopped();

}  // namespace stacklens::io
