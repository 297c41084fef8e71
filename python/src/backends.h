// The backends the module computes on: made once per name and kept, each used by one call at a
// time (Dask's threads may call at once).
#pragma once

#include <mutex>
#include <string>

#include <pybind11/pybind11.h>

#include "compute/backend.h"
#include "python/src/interrupts.h"

namespace stacklens::python {

// A backend and the lock that makes its calls one at a time.
struct BackendUse {
  compute::Backend& backend;
  std::unique_lock<std::mutex> lock;
};

// "cpu", "cuda" (the first visible GPU), "cuda:N" or "auto" (CUDA when usable, else the CPU).
// Throws ValueError for another name and RuntimeError when CUDA is asked for and cannot be
// used. Call with the GIL released.
BackendUse useBackend(const std::string& name);

// The backend a call on in uses: the one named, or for an image on a GPU (a CuPy array) the
// CUDA backend of that GPU.
std::string backendFor(const std::string& name, const compute::Image& in);

// Runs op(backend, job) with the GIL released; the job asks for the result where the input was
// (on the host, or on the input's GPU, with the backend's work finished) and stops on Ctrl-C
// (python/src/interrupts.h).
template <class Op>
compute::Image run(const std::string& name, const compute::Image& in, const Op& op) {
  const std::string chosen = backendFor(name, in);
  const InterruptibleCall call;  // before the GIL goes, so that it ends with the GIL back
  try {
    pybind11::gil_scoped_release release;
    BackendUse use = useBackend(chosen);
    const compute::Job job = in.onHost() ? call.job().onHost() : call.job();
    compute::Image out = op(use.backend, job);
    if (in.onHost()) return out.onHost() ? out : use.backend.download(out);
    if (out.onHost()) out = use.backend.upload(out);
    use.backend.synchronize();
    return out;
  } catch (const compute::Cancelled&) {
    call.raiseWhatPythonRaises();
    throw;
  }
}

}  // namespace stacklens::python
