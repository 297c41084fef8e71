// The backends the module computes on: made once per name and kept, each used by one call at a
// time (Dask's threads may call at once).
#pragma once

#include <mutex>
#include <string>
#include <utility>

#include <pybind11/pybind11.h>

#include "compute/backend.h"
#include "python/src/interrupts.h"

namespace stacklens::python {

// Puts the calling thread's current CUDA device back as it was when made: a call on "cuda:1"
// must not move the caller's (CuPy's) later work to device 1. Does nothing when not armed.
class CurrentDeviceKept {
 public:
  explicit CurrentDeviceKept(bool armed) : device_(armed ? compute::cudaCurrentDevice() : -1) {}
  CurrentDeviceKept(CurrentDeviceKept&& o) noexcept : device_(std::exchange(o.device_, -1)) {}
  CurrentDeviceKept& operator=(CurrentDeviceKept&&) = delete;
  ~CurrentDeviceKept() {
    if (device_ >= 0) compute::cudaSetCurrentDevice(device_);
  }

 private:
  int device_;
};

// A backend, the lock that makes its calls one at a time, and the caller's current device, given
// back when the use ends (the backend's device is current meanwhile: a thread of Dask's or the
// caller's may have another one current).
struct BackendUse {
  compute::Backend& backend;
  std::unique_lock<std::mutex> lock;
  CurrentDeviceKept callersDevice;
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
