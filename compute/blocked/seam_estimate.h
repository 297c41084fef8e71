// The seam error overlapping blocks are expected to leave, measured before the run on a small
// synthetic trial: the unblocked run and the same cut, with the run's PSF, halo, boundary and
// iterations, over point sources on a flat background blurred by the PSF. Overlapping blocks
// iterate on their own, so what reaches a voxel from beyond the halo is missing; how much that
// changes the result depends on the PSF's tails and the iterations, which the trial has, far
// more than on the scene.
#pragma once

#include <string>

#include "compute/backend.h"
#include "compute/blocked/block_plan.h"
#include "compute/job.h"

namespace stacklens::compute {

struct SeamEstimate {
  bool estimated = false;
  // Within one halo of a seam: the relative L2 difference between the blocked and the
  // unblocked trial, and the largest difference relative to the unblocked trial's largest
  // value there.
  double relativeL2 = 0, maxRelative = 0;
  Shape trial;         // the trial's volume
  std::string reason;  // why there is no estimate (estimated == false)
  // "expected seam error 3.1e-03 relative L2 within a halo of the seams (a synthetic trial of
  // 256 x 128 x 128 with this PSF, halo and iterations)", or why there is none.
  std::string describe() const;
  // For HISTORY: "expected seam error 3.1e-03 relative L2 near the seams (synthetic trial)", or
  // "seam error not estimated (the trial would take about 40 s)".
  std::string provenance() const;
};

// The estimate for an overlapping plan of more than one block (others need none: estimated is
// false with a reason). The trial is skipped (with a reason) when its expected compute on this
// backend exceeds maxSeconds. psf: the run's PSF (host).
SeamEstimate estimateSeamError(Backend& backend, const BlockPlan& plan, const Image& psf,
                               const DeconvolveParams& p, double maxSeconds, const Job& job = {});

// The trial's scene: point sources (fixed positions and brightnesses for a shape) on a flat
// background, blurred by psf (normalised to a sum of 1). Exposed for the tests.
Image seamTrialScene(Shape volume, const Image& psf);

}  // namespace stacklens::compute
