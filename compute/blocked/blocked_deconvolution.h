// 3D Richardson–Lucy on volumes larger than a memory budget, block by block (compute/blocked/
// block_plan.h), on any backend.
//
// Boundary semantics: at the volume's faces each block continues the volume by the run's rule
// (reflect or zero) exactly as the unblocked run does; periodic runs read their halos wrapped
// around the volume. At a face between blocks a block sees `halo` voxels of real data, and past
// them its own frame continues by reflection. A plan of one block is the unblocked run. Inside,
// the results differ from the unblocked run's by what reaches a voxel from beyond the halo in
// the given iterations (tests/compute/blocked_deconvolution_test.cpp measures it).
#pragma once

#include <functional>

#include "compute/backend.h"
#include "compute/blocked/block_plan.h"
#include "compute/job.h"

namespace stacklens::compute {

// Reads the voxels of a box that lies inside the volume into out (C order, x fastest).
using BoxReader = std::function<void(const Box& box, float* out)>;
// Receives a block's interior (C order).
using BoxWriter = std::function<void(const Box& box, const float* data)>;

// Reads boxes out of a host volume (which must outlive the reader).
BoxReader boxReader(const Image& volume);

struct BlockedRunReport {
  int blocks = 0;
  double readSeconds = 0, computeSeconds = 0, writeSeconds = 0;  // computeSeconds: upload,
                                                                 // RL and download
};

// Deconvolves plan.blocks in order: the next block is read on another thread while one is
// deconvolved. Throws Cancelled (between blocks and inside each, as the backend checks) after
// which the writer may have received some blocks but not all.
BlockedRunReport deconvolveBlocked(Backend& backend, const BoxReader& read, const BoxWriter& write,
                                   const Image& psf, const DeconvolveParams& p,
                                   const BlockPlan& plan, const Job& job = {});

// The same on a host volume, returning a host volume.
Image deconvolveBlocked(Backend& backend, const Image& volume, const Image& psf,
                        const DeconvolveParams& p, const BlockPlan& plan, const Job& job = {},
                        BlockedRunReport* report = nullptr);

}  // namespace stacklens::compute
