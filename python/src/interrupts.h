// Ctrl-C during calls that compute with the GIL released: Python sees the signal only when the
// main thread runs Python again, so the calls must stop first. While any call is in flight SIGINT
// is hooked (Python's own handler still runs after the hook), and the hook stops every call in
// flight: a long deconvolve on the main thread, and the chunks Dask's threads compute while the
// main thread waits for them.
#pragma once

#include <pybind11/pybind11.h>

#include "compute/job.h"

namespace stacklens::python {

class InterruptibleCall {
 public:
  InterruptibleCall();  // with the GIL held
  ~InterruptibleCall();
  InterruptibleCall(const InterruptibleCall&) = delete;
  InterruptibleCall& operator=(const InterruptibleCall&) = delete;

  // A job that stops on Ctrl-C.
  compute::Job job() const;
  // After the call threw Cancelled, with the GIL held: on the main thread lets Python run its
  // SIGINT handler now and throws what it raised (KeyboardInterrupt), so that the signal is not
  // raised a second time at the next bytecode.
  void raiseWhatPythonRaises() const;

 private:
  int slot_ = -1;
};

}  // namespace stacklens::python
