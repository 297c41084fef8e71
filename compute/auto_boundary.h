// The boundary a Richardson–Lucy run takes when its user names none ("auto"), one rule for the
// CLI, the viewer, Python and Dask. Reflect and reflect-exact both continue the image as its
// mirror image past its faces; reflect mirrors it once into a padded frame, reflect-exact at every
// convolution, with no padding, and so runs on smaller frames (the seed job's 950 × 2048² in
// frames of the volume's own size) and never lets the frame's far side wrap in. It needs a PSF
// equal to its mirror image (compute/mirror_psf.h) and no TV term; "auto" takes it whenever
// those hold, and reflect otherwise, which takes any PSF.
#pragma once

#include <string>

#include "compute/image.h"
#include "compute/params.h"

namespace stacklens::compute {

inline constexpr const char* kAutoBoundaryWord = "auto";

struct BoundaryChoice {
  Boundary boundary = Boundary::Reflect;
  std::string reason;  // why, for the plan and HISTORY: "the PSF is mirror-symmetric"
};

// The boundary for p (its mode and TV weight) and this PSF (on the host; in 2D mode its centre
// slice is what counts, as in compute/rl_psf.h).
BoundaryChoice autoBoundary(const Image& psf, const DeconvolveParams& p);
// The same for the Gaussian PSF gaussianPsf makes at its default size: its sides are odd, so it
// equals its mirror image exactly and only p decides. The choice costs nothing, where building
// a wide 3D Gaussian only to check it cost seconds whenever a pipeline was parsed.
BoundaryChoice autoBoundaryForGaussian(const DeconvolveParams& p);

}  // namespace stacklens::compute
