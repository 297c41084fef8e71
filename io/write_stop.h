// Stopping every file being written at once (stacklens-cli's Ctrl-C): the writers look at one
// process-wide flag between slices, pages and frames and before an output is renamed into place,
// so that a stopped run leaves neither the output nor its temporary file.
#pragma once

#include <atomic>
#include <string>

#include "io/io_error.h"

namespace stacklens::io {

// What a writer throws when the flag is set; the temporary file is removed as it unwinds.
class WritesStopped : public IoError {
 public:
  explicit WritesStopped(const std::string& path) : IoError(path, "stopped; nothing written") {}
};

// The flag the writers look at (nullptr, the default: never stopped). The program owns it; the
// GUI cancels its own jobs instead and leaves this unset.
void stopWritesWhen(const std::atomic<bool>* flag);
// Throws WritesStopped naming path once the flag is set.
void throwIfWritesStopped(const std::string& path);

}  // namespace stacklens::io
