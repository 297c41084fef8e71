// FFTW alone running Richardson–Lucy's transforms (see rl_transforms_only.h).
#include "compute/cpu/rl_transforms_only.h"

#include <algorithm>
#include <chrono>

namespace stacklens::compute::cpu {

TransformsOnly runTransformsOnly(Shape shape, Shape psf, const DeconvolveParams& p, int threads) {
  const Shape data = p.threeD ? shape : Shape{1, shape.y, shape.x};
  const int64_t blocks = p.threeD ? 1 : shape.z;
  const FftPlans& plans = Deconvolver::plansOf(Deconvolver::frameOf(data, psf, p), p, threads);
  const bool cosine = p.boundary == Boundary::ReflectExact;
  // As the deconvolver: the forward transform reads one real array, the backward one writes
  // another; the cosine transforms work in place. Zeros stay zeros (an FFT's time does not depend
  // on the values), and the arrays are touched before the clock starts.
  const size_t n = plans.realCount();
  FftwFloats source = allocFloats(n), result = allocFloats(n);
  FftwComplex spectrum = allocComplex(cosine ? 1 : plans.complexCount());
  std::fill(source.get(), source.get() + n, 0.f);
  std::fill(result.get(), result.get() + n, 0.f);
  if (!cosine) {
    float* values = reinterpret_cast<float*>(spectrum.get());  // fftwf_complex is float[2]
    std::fill(values, values + 2 * plans.complexCount(), 0.f);
  }

  TransformsOnly t;
  auto convolution = [&] {
    if (cosine) {
      plans.dct2(result.get());
      plans.dct3(result.get());
    } else {
      plans.r2c(source.get(), spectrum.get());
      plans.c2r(spectrum.get(), result.get());
    }
    ++t.executed.forward;
    ++t.executed.backward;
  };
  const auto start = std::chrono::steady_clock::now();
  if (!cosine) {  // the OTF
    plans.r2c(source.get(), spectrum.get());
    ++t.executed.forward;
  }
  for (int64_t b = 0; b < blocks; ++b)
    for (int k = 0; k < p.iterations; ++k) {
      convolution();
      convolution();
    }
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return t;
}

}  // namespace stacklens::compute::cpu
