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

// How far from its symmetric part a PSF may be for --symmetrize-psf (and
// stacklens.symmetric_psf) to deconvolve with that part instead. By Young's inequality the
// blurred model Richardson-Lucy fits then differs from the true one by at most `differs` times
// the object's brightest value: at 0.1 that is already a tenth of the peak, more than the noise
// of any image worth deconvolving (a peak signal-to-noise of 10). For a Gaussian PSF, differs is
// about 0.75 · d / sigma when its centre is off by d, so 0.1 is a PSF decentred by 0.13 sigma
// (0.06 FWHM), which measure-psf's sub-pixel centring never leaves; further off, the
// symmetric part is a broader, different PSF and the PSF should be recentred or measured again.
constexpr double kSymmetrizeLimit = 0.1;

// The symmetric part, or InvalidArgument naming how far the PSF is from it when that is more
// than limit.
MirrorSymmetricPart symmetrizedPsf(const float* psf, Shape shape, double limit = kSymmetrizeLimit);

// The symmetric part when the PSF differs from it by rounding only (kMirrorTolerance); a PSF
// already symmetric with odd sides comes back unchanged. Throws InvalidArgument naming how far
// the PSF is from symmetric.
Image mirrorSymmetricPsf(const float* psf, Shape shape);

}  // namespace stacklens::compute
