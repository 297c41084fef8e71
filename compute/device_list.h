// Which CUDA devices a whole-stack run uses: every visible one by default, a count, or a list.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compute/backend.h"

namespace stacklens::compute {

// "all" (every visible device), "N" (the first N) or "I,J,..." (those indices; a single index is
// written "I,"). Indices count the devices CUDA_VISIBLE_DEVICES leaves visible. Throws
// InvalidArgument naming what is wrong.
std::vector<int> parseDeviceList(const std::string& text, int visible);

// The visible CUDA devices' names, by index (empty without CUDA).
std::vector<std::string> cudaDeviceNames();

// One CUDA backend per device, in the order given (BackendUnavailable when one cannot start).
std::vector<std::unique_ptr<Backend>> makeCudaBackends(const std::vector<int>& devices);

// Lets go of the backends at once, one thread each: each device's teardown (its memory pool given
// back, its page-locked buffers unlocked) waits mostly on that device. Empties the list.
void releaseBackends(std::vector<std::unique_ptr<Backend>>& backends);

// The raw pointers of a list of backends, for the runs that take them.
std::vector<Backend*> pointersTo(const std::vector<std::unique_ptr<Backend>>& backends);

}  // namespace stacklens::compute
