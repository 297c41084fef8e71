// The backends the module computes on: made once per name and kept, each used by one call at a
// time (Dask's threads may call at once).
#pragma once

#include <mutex>
#include <string>

#include "compute/backend.h"

namespace stacklens::python {

// A backend and the lock that makes its calls one at a time.
struct BackendUse {
  compute::Backend& backend;
  std::unique_lock<std::mutex> lock;
};

// "cpu", "cuda" or "auto" (CUDA when usable, else the CPU). Throws ValueError for another name
// and RuntimeError when CUDA is asked for and cannot be used. Call with the GIL released.
BackendUse useBackend(const std::string& name);

}  // namespace stacklens::python
