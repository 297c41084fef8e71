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

// Blocks whose frames stay where the backend computes and exchange halos there every iteration
// (BlockScheme::Resident, compute/blocked/resident_run.h): the cut with the least expected compute
// of at least two blocks whose frames (observed image and estimate, 8 bytes a voxel each) and the
// shared transform arrays fit budgetBytes; on CUDA, frames of fused FFT lengths only. Nothing
// with acceleration or TV (their sums and reach are not kept per frame), or when none fits.
std::optional<BlockPlan> planResident(Shape volume, Shape psf, const DeconvolveParams& p,
                                      const FrameCosts& costs, size_t budgetBytes,
                                      Shape maxInterior = {0, 0, 0});

// A resident frame's bytes per voxel (observed image and estimate); the shared transform arrays
// take about as much once more.
inline constexpr size_t kResidentBytesPerVoxel = 8;
// A resident step against an iteration of a frame that keeps its own arrays: a forward transform
// the step cannot fuse (the halo changed since) and the exchange.
inline constexpr double kResidentStepOverhead = 1.3;

// Host memory per voxel of the domain (observed image, estimate and the next one; with
// acceleration, the previous result and two changes) and per voxel of a frame (the CPU's
// Richardson–Lucy arrays).
size_t exchangeDomainBytesPerVoxel(const DeconvolveParams& p);
size_t exchangeFrameBytesPerVoxel(const DeconvolveParams& p);

}  // namespace stacklens::compute
