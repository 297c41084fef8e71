// How the host waits for the device's work (compute/cuda/host/cuda_context.cu, waitFor). (For
// compute/cuda/*.cu only.)
#pragma once

namespace stacklens::compute::cuda::tuning {

struct HostWaitPolicy {
  // The host polls the stream this long before it sleeps until the device signals. Polling sees
  // the work finish soonest, so an operation shorter than this (a blur, a sigma clip, a zoom)
  // returns as soon as it can; a sleeping thread is woken later, which a longer job hardly
  // notices, and it leaves the core to other work while Richardson–Lucy runs for seconds.
  static constexpr int pollMicroseconds = 5000;
};

}  // namespace stacklens::compute::cuda::tuning
