// Richardson–Lucy frames kept where a backend computes, for blocks that exchange halos every
// iteration without leaving the device (compute/blocked/resident_run.h). Every block's frame
// holds its observed image and its estimate; the transforms' scratch arrays are shared, as the
// frames take their steps one at a time. A step is periodic over its frame: the halo holds all
// that one iteration reads, so the interior comes out as the unblocked run's, and exchange()
// then brings every halo up to date from the interiors that own its voxels.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "compute/image.h"

namespace stacklens::compute {

// Where each frame's voxels live: the blocks form a grid (counts along z, y, x; block index
// (bz · counts.y + by) · counts.x + bx), and along each axis every frame index maps to the block
// (along that axis) whose interior holds it and to its index in that block's frame. A voxel of
// the interior maps to itself.
struct ResidentLayout {
  Shape frame;   // every frame's shape
  Shape counts;  // blocks along z, y, x
  struct Axis {
    int64_t interiorFrom = 0, interiorTo = 0;  // the interior, in frame indices
    std::vector<int32_t> ownerBlock, ownerIndex;
  };
  std::vector<std::array<Axis, 3>> blocks;  // per block: its z, y and x axes
  int64_t count() const { return int64_t(blocks.size()); }
};

class ResidentRlFrames {
 public:
  virtual ~ResidentRlFrames() = default;
  // Planes [z, z + planes) of block b's frame (C order, finite values): its observed image and,
  // until the first step, its estimate.
  virtual void load(int64_t b, int64_t z, int64_t planes, const float* values) = 0;
  // One Richardson–Lucy iteration of block b's frame.
  virtual void step(int64_t b) = 0;
  // Every frame's voxels outside its interior ← the estimates of the blocks that own them.
  virtual void exchange() = 0;
  // The box [origin, origin + extent) of block b's estimate (frame indices) → out (C order);
  // returns when done.
  virtual void read(int64_t b, Shape origin, Shape extent, float* out) = 0;
};

}  // namespace stacklens::compute
