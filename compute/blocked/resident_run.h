// 3D Richardson–Lucy by blocks whose frames stay where the backend computes and exchange halos
// there every iteration (BlockScheme::Resident, planResident in compute/blocked/exchange_plan.h).
// The blocks tile the same domain as the CPU's exchanging blocks (compute/blocked/exchange_run.h)
// and each frame's halo holds all that one step reads, so the result is the unblocked run's up
// to float rounding; but only halo voxels move between steps, on the device, and the volume
// crosses to it once each way.
#pragma once

#include "compute/backend.h"
#include "compute/blocked/blocked_deconvolution.h"

namespace stacklens::compute {

// Where each frame's voxels come from (compute/resident_frames.h), for a resident plan.
ResidentLayout residentLayout(const BlockPlan& plan);

// Runs a resident plan on backend: reads the domain slabSlices planes at a time (each plane
// once), fills every frame from it, iterates, then writes each block's part of the volume with
// the input's non-finite values put back. Throws Cancelled between steps, OutOfDeviceMemory when
// the frames do not fit, InvalidArgument when the backend keeps no resident frames.
BlockedRunReport deconvolveResident(Backend& backend, const BoxReader& read, const BoxWriter& write,
                                    const Image& psf, const DeconvolveParams& p,
                                    const BlockPlan& plan, const Job& job = {});

}  // namespace stacklens::compute
