// The PSF that Boundary::ReflectExact convolves by: equal to its mirror image along each axis, with
// odd sides (its centre sample, at index size / 2, on every axis of symmetry). Many PSFs are that
// only to within rounding: a Gaussian sampled on an even side, whose first sample has no partner
// past the last, or one whose two halves were rounded differently. Such a PSF is taken as its
// symmetric part when what that leaves out is below kMirrorTolerance of the PSF's sum: the
// convolutions then change by less than float rounding of the image's largest value. Measured
// PSFs are usually further from symmetric and are refused, with how far they are.
#pragma once

#include "compute/image.h"

namespace stacklens::compute {

constexpr double kMirrorTolerance = 1e-7;

// A PSF's mirror-symmetric part: the mean of its mirror images along each axis after dropping
// the first sample of each even side, and how far the PSF is from it (the dropped samples and
// the differences from the mean, in absolute value, as a fraction of the sum of the PSF's
// absolute values).
// psf: shape.count() values, row-major.
struct MirrorSymmetricPart {
  Image psf;  // on the host
  double differs = 0;
};
MirrorSymmetricPart mirrorSymmetricPart(const float* psf, Shape shape);

// The symmetric part when the PSF differs from it by rounding only (kMirrorTolerance); a PSF
// already symmetric with odd sides comes back unchanged. Throws InvalidArgument naming how far
// the PSF is from symmetric.
Image mirrorSymmetricPsf(const float* psf, Shape shape);

}  // namespace stacklens::compute
