// How a volume too large for a memory budget is cut into overlapping blocks for 3D
// Richardson–Lucy. Block interiors tile the volume. Each block deconvolves a frame: its interior
// with at least a halo of voxels on every side, grown to an FFT length its backend transforms
// fast. Where a frame reaches past the volume's faces it is filled by the run's boundary rule, so
// the frame is deconvolved with periodic boundaries and only its interior is kept. Frames have
// one shape, except under Boundary::ReflectExact, whose frames lie inside the volume and may
// differ in length (two pieces of an axis of 950 with halos of 64: frames of 576 and 512).
//
// On the CPU, when host memory holds whole-volume arrays, blocks may instead exchange their
// halos every iteration (BlockScheme::Exchange, compute/blocked/exchange_plan.h): then the
// blocks give the unblocked run's result.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compute/params.h"

namespace stacklens::compute {

// A box of voxels [z0, z1) × [y0, y1) × [x0, x1); it may reach outside the volume.
struct Box {
  int64_t z0 = 0, z1 = 0, y0 = 0, y1 = 0, x0 = 0, x1 = 0;
  Shape shape() const { return {z1 - z0, y1 - y0, x1 - x0}; }
  bool operator==(const Box&) const = default;
};

struct Block {
  Box interior;  // inside the volume; the interiors tile it without overlap
  Box frame;     // what the block deconvolves: the interior and at least the halo around it
};

// What 3D Richardson–Lucy costs a backend per frame (tuning data, compute/blocked/frame_costs.cpp).
struct FrameCosts {
  std::string backend;
  size_t bytesPerVoxel = 0;            // memory one block needs per frame voxel, transfers included
  size_t fastBytesPerVoxel = 0;        // the same on the fast path
  double nsPerVoxelIteration = 0;      // frames of 2, 3, 5, 7-smooth lengths
  double fastNsPerVoxelIteration = 0;  // frames the fast path takes (0: no fast path)
  double mixedNsPerVoxelIteration = 0;  // the same with a mixed length (1152, ...) on some axis
  int64_t fastMin = 0, fastMax = 0;     // its power-of-two side lengths (x: twice these); and
                                        // the mixed lengths of compute/rl_frame.h
  bool fast(Shape frame) const;         // whether the fast path takes this frame
  size_t bytes(Shape frame) const;      // the memory one block of this frame needs
  double secondsPerIteration(Shape frame) const;
  // The least any frame voxel costs per iteration, of the rates above (for bounds).
  double leastSecondsPerVoxel() const;
};

FrameCosts frameCosts(const std::string& backend, const DeconvolveParams& p);

// How the blocks make up the result. Overlap: each block deconvolves its frame for all the
// iterations on its own and keeps its interior; what reaches a voxel from beyond the halo in
// those iterations is missing, so near the seams the result may differ from the unblocked run's
// (any backend). Exchange: every iteration, each block steps once from whole-domain arrays in
// host memory and gives its interior back, so that the halos are always current: the unblocked
// run's result, up to float rounding (the CPU; compute/blocked/exchange_run.h). Resident: the
// same exchange, with every block's frame kept where the backend computes and only the halos
// moving there (compute/blocked/resident_run.h).
enum class BlockScheme { Overlap, Exchange, Resident };

struct BlockPlan {
  BlockScheme scheme = BlockScheme::Overlap;
  Shape volume, psf, halo;  // halo: voxels of real data at least past each interior face
  Shape counts{1, 1, 1};    // blocks along z, y, x
  Shape interior;           // the largest interior (the last block on an axis may be smaller)
  Shape frame;              // the longest frame on each axis (each block's is blocks[k].frame)
  Boundary boundary = Boundary::Reflect;  // how frames are filled past the volume's faces
  bool fastFrame = false;                 // the backend's fast path takes the frame
  size_t bytesPerBlock = 0;               // the memory the largest block needs (estimate)
  size_t budget = 0;                      // what it had to fit
  int devices = 1;                        // blocks computed at once
  double secondsPerIteration = 0;         // expected compute per iteration over all blocks (wall)
  // Host memory: frames are filled and emptied slabSlices slices at a time.
  int64_t slabSlices = 0;
  size_t hostBytes = 0;
  // What a reader of whole slices keeps (slabReader): a slab for each device.
  int64_t keptSlices() const { return std::max<int64_t>(1, slabSlices) * devices; }
  std::vector<Block> blocks;
  // Exchange: what the interiors tile, in the volume's coordinates: the unblocked run's frame
  // (the volume and its padding for reflect and zero, which evolves as the unblocked run's does),
  // or the volume (periodic, reflect-exact); and the host memory its arrays take.
  Box domain;
  size_t domainBytes = 0;
  // Overlap on the CPU (planRun): the budget those arrays alone would need for exchanging blocks;
  // 0 where exchanging is no option (other backends) or the plan exchanges.
  size_t exchangeBudget = 0;
  int64_t count() const { return counts.count(); }
  // Frame voxels over all blocks against the unblocked run's frame.
  double work() const;
  std::string describe(int iterations) const;  // human-readable, for --dry-run
  std::string frames() const;  // "frame Z x Y x X", or each frame shape with its count
  // For HISTORY: "" for one block, else "blocks=N exchanging halos" or "blocks=N overlapping
  // halo=Z,Y,X (seams may differ from an unblocked run)".
  std::string provenance() const;
};

// Host memory a run may plan with when none is given: half the machine's memory.
size_t defaultHostBudget();

// The plan with the least expected compute whose block fits the budget. halo: voxels on each side
// (a negative axis: half the PSF, rounded up; less than that is an InvalidArgument). maxInterior:
// block interiors no longer than this (0: any length). devices: how many run blocks at once
// (each with the budget), so that the expected time counts rounds of blocks. oneBlock: only the
// unblocked run's one block is weighed. Throws InvalidArgument when not even the smallest block
// fits, naming the budget and what that block needs.
BlockPlan planBlocks(Shape volume, Shape psf, const DeconvolveParams& p, const FrameCosts& costs,
                     size_t budgetBytes, Shape halo = {-1, -1, -1}, Shape maxInterior = {0, 0, 0},
                     int devices = 1, bool oneBlock = false);

// Chooses how many slices at a time frames are filled and emptied so that the host memory for it
// fits hostBudget: staging for two slabs in and two out, plus, with wholeSlices (a reader that
// reads whole slices), the slices one slab reads. Throws InvalidArgument when one slice does
// not fit.
void planSlabs(BlockPlan& plan, size_t hostBudget, bool wholeSlices);

}  // namespace stacklens::compute
