// cuFFT store callbacks that fold Richardson–Lucy's element-wise work into its four transforms.
// Compiled offline to LTO-IR (see compute/CMakeLists.txt), embedded in the binary and linked by
// cuFFT when the plans are made. cuFFT calls a store callback once per output element, and the
// names must stay at global scope with C++ linkage: cuFFT declares them that way.
#include <cufftXt.h>

#include "compute/cuda/lto/rl_callback_args.h"

using stacklens::compute::cuda::RlCallbackArgs;

// R2C(estimate): spectrum = FFT · OTF (or FFT / N while the OTF is made).
__device__ void stacklensRlBlurStore(void* out, unsigned long long offset, cufftComplex e,
                                     void* info, void*) {
  const RlCallbackArgs* a = static_cast<const RlCallbackArgs*>(info);
  cufftComplex r;
  if (a->otf) {
    cufftComplex b = a->otf[offset];
    r = make_cuFloatComplex(e.x * b.x - e.y * b.y, e.x * b.y + e.y * b.x);
  } else {
    r = make_cuFloatComplex(e.x * a->inverseCount, e.y * a->inverseCount);
  }
  static_cast<cufftComplex*>(out)[offset] = r;
}

// C2R(blurred spectrum): ratio = observed / max(blurred, ε).
__device__ void stacklensRlRatioStore(void* out, unsigned long long offset, cufftReal e, void* info,
                                      void*) {
  const RlCallbackArgs* a = static_cast<const RlCallbackArgs*>(info);
  static_cast<float*>(out)[offset] = a->observed[offset] / fmaxf(e, a->epsilon);
}

// R2C(ratio): spectrum = FFT · conj(OTF), the adjoint of the blur.
__device__ void stacklensRlCorrelateStore(void* out, unsigned long long offset, cufftComplex e,
                                          void* info, void*) {
  const RlCallbackArgs* a = static_cast<const RlCallbackArgs*>(info);
  cufftComplex b = a->otf[offset];
  static_cast<cufftComplex*>(out)[offset] =
      make_cuFloatComplex(e.x * b.x + e.y * b.y, e.y * b.x - e.x * b.y);
}

// C2R(correction spectrum): the multiplicative update of the estimate, in place in the estimate
// (the transform's own output buffer is left alone), as updateEstimate in cuda_deconvolve.cu.
__device__ void stacklensRlUpdateStore(void*, unsigned long long offset, cufftReal e, void* info,
                                       void*) {
  const RlCallbackArgs* a = static_cast<const RlCallbackArgs*>(info);
  float old = a->estimate[offset];
  float next = old * e;
  if (a->divergence) next /= fmaxf(1.f - a->lambda * a->divergence[offset], 1e-3f);
  next = fmaxf(next, 0.f);
  if (a->change) a->change[offset] = next - old;
  a->estimate[offset] = next;
}
