// The PSF as Richardson–Lucy uses it, one rule for both backends: the mode's part (the centre
// slice in 2D mode), reflect-exact's symmetric part (compute/mirror_psf.h), normalised to sum 1.
#pragma once

#include "compute/image.h"
#include "compute/params.h"

namespace stacklens::compute {

// psf on the host. Throws InvalidArgument for an empty PSF, NaN or Inf, a sum ≤ 0, or
// (reflect-exact) a PSF that is not symmetric.
Image rlPsf(const Image& psf, const DeconvolveParams& p);

}  // namespace stacklens::compute
