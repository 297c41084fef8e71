// Blocks that exchange their halos every iteration (BlockScheme::Exchange), for 3D
// Richardson–Lucy on the CPU: the interiors tile the domain the unblocked run iterates on, and
// each frame adds a halo of the PSF's extent less one on every side, which is exactly what one
// iteration reads (a blur, then a correlation). Frames reach round the domain (its padding
// wraps, as the unblocked run's FFT does) or, for reflect-exact, mirror at the volume's faces.
#pragma once

#include <optional>

#include "compute/blocked/block_plan.h"

namespace stacklens::compute {

// The exchanging plan with the least expected compute whose domain arrays and one block's frame
// fit budgetBytes, or nothing when none does. maxInterior: interiors no longer than this (0: any
// length).
std::optional<BlockPlan> planExchange(Shape volume, Shape psf, const DeconvolveParams& p,
                                      const FrameCosts& costs, size_t budgetBytes,
                                      Shape maxInterior = {0, 0, 0});

// The host memory of the domain's arrays alone (exchangeDomainBytesPerVoxel each voxel).
size_t exchangeDomainBytes(Shape volume, Shape psf, const DeconvolveParams& p);

// Host memory per voxel of the domain (observed image, estimate and the next one; with
// acceleration, the previous result and two changes) and per voxel of a frame (the CPU's
// Richardson–Lucy arrays).
size_t exchangeDomainBytesPerVoxel(const DeconvolveParams& p);
size_t exchangeFrameBytesPerVoxel(const DeconvolveParams& p);

}  // namespace stacklens::compute
