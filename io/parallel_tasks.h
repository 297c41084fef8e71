// Tasks of one read or write spread over a few threads, the first failure rethrown.
#pragma once

#include <cstdint>
#include <functional>

namespace stacklens::io {

// Runs task(0) ... task(count - 1), each once, on up to `threads` threads, the caller's among
// them. After a task throws no further task starts; the first failure is rethrown once every
// thread has stopped.
void runTasks(int64_t count, int threads, const std::function<void(int64_t)>& task);

}  // namespace stacklens::io
