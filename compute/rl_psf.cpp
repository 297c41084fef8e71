// rlPsf: take the mode's part, check it, take reflect-exact's symmetric part, normalise.
#include "compute/rl_psf.h"

#include <cmath>

#include "compute/mirror_psf.h"

namespace stacklens::compute {

Image rlPsf(const Image& psf, const DeconvolveParams& p) {
  if (psf.empty()) throw InvalidArgument("richardson_lucy: the PSF is empty");
  Shape shape = psf.shape();
  const float* start = psf.data();
  if (!p.threeD) {
    start = psf.slice(shape.z / 2);
    shape.z = 1;
  }
  double sum = 0;
  for (int64_t i = 0; i < shape.count(); ++i) {
    if (!std::isfinite(start[i]))
      throw InvalidArgument("richardson_lucy: the PSF contains NaN or Inf");
    sum += start[i];
  }
  if (!(sum > 0)) throw InvalidArgument("richardson_lucy: the PSF must sum to more than 0");
  Image mirrored;
  if (p.boundary == Boundary::ReflectExact) {
    mirrored = mirrorSymmetricPsf(start, shape);
    start = mirrored.data();
    if (!(mirrored.shape() == shape)) {  // samples were dropped
      shape = mirrored.shape();
      sum = 0;
      for (int64_t i = 0; i < shape.count(); ++i) sum += start[i];
    }
  }
  Image out = Image::host(shape);
  for (int64_t i = 0; i < shape.count(); ++i) out.data()[i] = static_cast<float>(start[i] / sum);
  return out;
}

}  // namespace stacklens::compute
