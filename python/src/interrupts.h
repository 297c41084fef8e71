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
  // While the scope lives, the calls made on its thread share its stop flag (stacklens.dask's
  // task that reads a chunk's halo and then deconvolves it: Ctrl-C during the read stops the
  // deconvolution too, which starts after the signal). Scopes nest.
  class Scope;
  // After the call threw Cancelled, with the GIL held: on the main thread lets Python run its
  // SIGINT handler now and throws what it raised (KeyboardInterrupt), so that the signal is not
  // raised a second time at the next bytecode.
  void raiseWhatPythonRaises() const;

 private:
  int slot_ = -1;
  bool shared_ = false;  // the slot of the thread's Scope
};

// For a program that ends on Ctrl-C: from now on a SIGINT stops every call in flight and every
// call started after it, so that no thread goes on to compute another chunk (a chunk that began
// just after the signal, before Python's handler ran, would otherwise run to its end).
void stopCallsAfterInterrupt();

// stacklens._stacklens._InterruptScope: an InterruptibleCall::Scope as a Python context manager,
// and _stop_calls_after_interrupt(): stopCallsAfterInterrupt.
void addInterruptScope(pybind11::module_& m);

class InterruptibleCall::Scope {
 public:
  Scope();  // with the GIL held
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  InterruptibleCall call_;
  int outer_;  // the thread's scope slot before this one
};

}  // namespace stacklens::python
