// A stack gathered into one volume for the 3D view and rotation movies, binned by block means so
// that it fits a byte budget and a largest side (the GPU's or OpenGL's 3D textures). Slices are
// added in order from whatever reads them (a file, a pipeline); io-free, so the viewer and the
// CLI share it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compute/image.h"

namespace stacklens::compute {

// The smallest binning (the same along every axis, at most the longest axis' length) that fits
// a stack of this shape into the budget (float32) and the largest side.
int64_t volumeBinning(const Shape& stack, size_t budget, int64_t maxSide);

class VolumeBinner {
 public:
  VolumeBinner(const Shape& stack, int64_t bin);
  // Slice z (y·x values; z = 0, 1, ... in order): its finite values go into their blocks.
  void add(int64_t z, const float* slice);
  // The volume (z, y, x): each voxel the mean of its block's finite values; voxels with none
  // are set to the smallest finite mean, so that blanks draw as the faintest matter, not holes.
  // spacing: the stack's, multiplied by the binning. low/high: its finite range.
  Image finish(const Spacing& spacing, float* low, float* high);
  int64_t bin() const { return bin_; }
  // "binned 2× along each axis (475 × 1024 × 1024): the whole stack needs 14.9 GiB, …"; empty
  // when nothing was binned.
  std::string note(size_t budget) const;

 private:
  void flush(int64_t k);

  Shape stack_, shape_;
  int64_t bin_;
  std::vector<double> sum_;
  std::vector<int32_t> count_;
  Image volume_;
};

}  // namespace stacklens::compute
