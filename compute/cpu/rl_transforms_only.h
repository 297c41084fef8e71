// FFTW alone running the transforms one Richardson–Lucy run executes: the yardstick that
// `stacklens-cli bench` sets the CPU deconvolution against (its "fft_only_s" and "x_fft").
#pragma once

#include "compute/cpu/rl_deconvolver.h"
#include "compute/image.h"
#include "compute/params.h"

namespace stacklens::compute::cpu {

struct TransformsOnly {
  double seconds = 0;
  Deconvolver::TransformCount executed;
};

// What richardsonLucy(an image of `shape`, a PSF of shape `psf`, p) transforms, without the rest:
// the same frame, the same cached plans on `threads` threads, buffers of the same sizes, and the
// same number of runs as Deconvolver::transformsExecuted() counts (one deconvolver for the stack
// in 3D mode; in 2D mode one OTF and then every z-slice's iterations).
TransformsOnly runTransformsOnly(Shape shape, Shape psf, const DeconvolveParams& p, int threads);

}  // namespace stacklens::compute::cpu
