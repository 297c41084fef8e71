// What the Richardson–Lucy cuFFT store callbacks read (shared by the offline-compiled callbacks
// in rl_callbacks.cu and the solver in cuda_deconvolve.cu); one device copy per cached plan set.
#pragma once

#include <cufft.h>

namespace stacklens::compute::cuda {

struct RlCallbackArgs {
  // The OTF (already scaled by 1/N); null while the OTF itself is being made, when the blur
  // callback stores the spectrum scaled by inverseCount instead.
  const cufftComplex* otf;
  float inverseCount;
  // ratio = observed / max(blurred, epsilon)
  const float* observed;
  float epsilon;
  // estimate ← max(estimate · correction [/ max(1 − λ div, 1e-3)], 0); change ← new − old when
  // not null.
  float* estimate;
  const float* divergence;
  float lambda;
  float* change;
};

}  // namespace stacklens::compute::cuda
