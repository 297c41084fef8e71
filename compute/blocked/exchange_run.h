// 3D Richardson–Lucy by blocks that exchange their halos every iteration
// (BlockScheme::Exchange, compute/blocked/exchange_plan.h), on the CPU. The observed image, the
// estimate and the next estimate are kept over the whole domain (the unblocked run's frame, or
// the volume) in host memory; each iteration, every block fills its frame from them, takes one
// Richardson–Lucy step with periodic boundaries and writes its interior into the next estimate.
// A frame's halo holds all that one step reads, so the interiors come out as the unblocked run's
// (up to the rounding of other FFT lengths), and so does the whole after any number of
// iterations. Acceleration extrapolates over the whole domain, with the unblocked run's sums; TV
// reads one voxel past each interior voxel, inside the halo.
#pragma once

#include "compute/backend.h"
#include "compute/blocked/blocked_deconvolution.h"

namespace stacklens::compute {

// Runs an exchanging plan on the CPU backend's threads; reads the volume once (slabSlices
// slices at a time, from the reader) and writes it once at the end (slab by slab, with the
// input's non-finite values put back). Throws Cancelled between and within blocks.
BlockedRunReport deconvolveExchanging(Backend& cpu, const BoxReader& read, const BoxWriter& write,
                                      const Image& psf, const DeconvolveParams& p,
                                      const BlockPlan& plan, const Job& job = {});

}  // namespace stacklens::compute
