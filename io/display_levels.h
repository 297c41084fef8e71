// The display levels of a plane too large to hold whole: what a viewer draws from at each zoom.
// OME-Zarr images and TIFF pyramids (SubIFDs) use their own stored levels; other stacks (FITS,
// TIFF, plain Zarr) are sampled every 2^k pixels (io/strided_read.h), halving until the coarsest
// level is small.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "io/stack.h"

namespace stacklens::io {

struct DisplayLevel {
  int64_t width = 0, height = 0;  // in the level's pixels
  double scaleX = 1, scaleY = 1;  // full-resolution pixels per level pixel
  int source = 0;                 // the reader it is read from (0: the stack as opened)
  int64_t step = 1;               // every step-th pixel of that reader
};

class DisplayLevels {
 public:
  // The coarsest level is no larger than this along x and y (it is read whole at opening).
  static constexpr int64_t kCoarsestSide = 2048;

  // The levels of the stack as opened (its plane and, for OME-Zarr, its level as the finest).
  // Opens the coarser OME-Zarr levels (metadata only). Throws IoError.
  static std::shared_ptr<const DisplayLevels> of(std::shared_ptr<const StackReader> full,
                                                 int64_t coarsestSide = kCoarsestSide);

  // Finest (the stack itself) first.
  const std::vector<DisplayLevel>& levels() const { return levels_; }
  int coarsest() const { return static_cast<int>(levels_.size()) - 1; }
  // The coarsest level whose pixels are no larger than a screen pixel at this zoom (screen
  // pixels per full-resolution pixel): coarse when zoomed out, level 0 from 1:1 on.
  int levelForZoom(double zoom) const;
  // The level's pixels [x0, x1) × [y0, y1) of slice z ((y1 − y0)·(x1 − x0) values). A stored
  // level whose z axis is reduced too gives its nearest slice. Throws IoError.
  void read(int level, int64_t z, int64_t y0, int64_t y1, int64_t x0, int64_t x1, float* out) const;

 private:
  std::vector<std::shared_ptr<const StackReader>> sources_;
  std::vector<DisplayLevel> levels_;
};

}  // namespace stacklens::io
