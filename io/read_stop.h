// Stopping network reads: every one at once (stacklens-cli's Ctrl-C, the viewer closing), or
// those of one call (a Python call on Ctrl-C, an open the viewer no longer waits for). Transfers
// in flight look at the flags while they wait for bytes, so that a stalled server never holds the
// program up until its timeouts run out.
#pragma once

#include <atomic>
#include <string>

#include "io/io_error.h"

namespace stacklens::io {

// What a read throws once a flag is set.
class ReadsStopped : public IoError {
 public:
  explicit ReadsStopped(const std::string& location) : IoError(location, "stopped") {}
};

// The process-wide flag (nullptr, the default: never stopped). The program owns it.
void stopReadsWhen(const std::atomic<bool>* flag);

// While it lives, the reads of this thread also stop when flag is set; io::runTasks carries it
// to the threads it starts. Scopes nest (the inner flag applies).
class ReadStopScope {
 public:
  explicit ReadStopScope(const std::atomic<bool>* flag);
  ~ReadStopScope();
  ReadStopScope(const ReadStopScope&) = delete;
  ReadStopScope& operator=(const ReadStopScope&) = delete;

 private:
  const std::atomic<bool>* outer_;
};

// This thread's scope flag (nullptr without a scope), for runTasks to carry over.
const std::atomic<bool>* threadReadStop();

// Whether the process-wide flag or this thread's scope flag is set.
bool readsStopped();

}  // namespace stacklens::io
