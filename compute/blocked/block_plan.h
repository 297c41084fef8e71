// How a volume too large for a memory budget is cut into overlapping blocks for 3D
// Richardson–Lucy: block interiors tile the volume; each block is read with a halo of real data
// around its interior, deconvolved on its own, and only its interior is kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compute/params.h"

namespace stacklens::compute {

// A box of voxels [z0, z1) × [y0, y1) × [x0, x1); it may reach outside the volume (halos of
// periodic boundaries wrap).
struct Box {
  int64_t z0 = 0, z1 = 0, y0 = 0, y1 = 0, x0 = 0, x1 = 0;
  Shape shape() const { return {z1 - z0, y1 - y0, x1 - x0}; }
  bool operator==(const Box&) const = default;
};

struct Block {
  Box interior;  // inside the volume; the interiors tile it without overlap
  Box read;      // interior plus at least the halo (clipped at the volume's faces unless
                 // periodic); the same shape for every block of a plan
};

struct BlockPlan {
  Shape volume, psf, halo;   // halo: voxels of real data past each interior face
  Shape counts{1, 1, 1};     // blocks along z, y, x
  Shape interior;            // the largest interior (the last block on an axis may be smaller)
  size_t bytesPerBlock = 0;  // the memory one block of the largest size needs (estimate)
  // With slabBytes: host memory per block, and for a slab reader (wholeSlices) the slices to keep.
  size_t hostBytesPerBlock = 0;
  int64_t slabSlices = 0;
  bool wholeSlices = true;
  size_t budget = 0;  // what it had to fit
  std::vector<Block> blocks;
  int64_t count() const { return counts.count(); }
  // Frame voxels × iterations over all blocks: the work, against the unblocked run's.
  double work(int iterations) const;
  std::string describe(int iterations) const;  // human-readable, for --dry-run
};

// Host memory a run may plan with when none is given: half the machine's memory.
size_t defaultHostBudget();

// Memory the deconvolution of one block of `read` voxels needs, in bytes: the backend's frame
// arrays (padded by the PSF on each axis) plus the block's input and output.
size_t blockBytes(Shape read, Shape psf, const DeconvolveParams& p, size_t bytesPerFrameVoxel);

// Bytes per voxel of the padded frame Richardson–Lucy keeps on each backend (both keep image,
// estimate, work and half-spectra; CUDA adds the cuFFT work area).
size_t frameBytesPerVoxel(const std::string& backend, const DeconvolveParams& p);

// The plan with the fewest blocks whose largest block fits the budget: the axis whose block is
// longest is cut into one more piece until it fits. halo: voxels on each side (a negative axis:
// half the PSF, rounded up). maxInterior: block interiors no longer than this (0: any length).
// slabBytes: when non-zero, host memory for reading the stack: three copies of a block's box
// (its input, the next one's read ahead, its result) plus, with wholeSlices (a slab reader), the
// whole y·x slices the block reads, else (a row reader) one band of its rows; the stack is then
// cut along z first. Throws InvalidArgument when not even a block of one voxel's interior fits,
// naming the budget and what the smallest block needs.
BlockPlan planBlocks(Shape volume, Shape psf, const DeconvolveParams& p, size_t budgetBytes,
                     size_t bytesPerFrameVoxel, Shape halo = {-1, -1, -1},
                     Shape maxInterior = {0, 0, 0}, size_t slabBytes = 0, bool wholeSlices = true);

}  // namespace stacklens::compute
