#include "compute/auto_boundary.h"

#include <cstdio>

#include "compute/mirror_psf.h"

namespace stacklens::compute {

namespace {
constexpr const char* kSymmetric = "the PSF is mirror-symmetric";
BoundaryChoice tvNeedsPadding() {
  return {Boundary::Reflect, "the TV term needs the padded frame"};
}
}  // namespace

BoundaryChoice autoBoundaryForGaussian(const DeconvolveParams& p) {
  if (p.tvLambda > 0) return tvNeedsPadding();
  return {Boundary::ReflectExact, kSymmetric};
}

BoundaryChoice autoBoundary(const Image& psf, const DeconvolveParams& p) {
  if (p.tvLambda > 0) return tvNeedsPadding();
  if (psf.empty()) return {Boundary::Reflect, "no PSF"};
  Shape shape = psf.shape();
  const float* start = psf.data();
  if (!p.threeD) {
    start = psf.slice(shape.z / 2);
    shape.z = 1;
  }
  const double differs = mirrorSymmetricPart(start, shape).differs;
  if (differs <= kMirrorTolerance) return {Boundary::ReflectExact, kSymmetric};
  char reason[128];
  std::snprintf(reason, sizeof reason,
                "the PSF differs from its mirror image by %.2g of its sum (reflect-exact needs "
                "%.0e)",
                differs, kMirrorTolerance);
  return {Boundary::Reflect, reason};
}

}  // namespace stacklens::compute
