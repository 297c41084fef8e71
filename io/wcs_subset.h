// The WCS of an image saved from part of a file's axes: a slice, a plane of a 4th axis, a stack
// whose length-1 axes were dropped. The saved image's axes are the file's x, y and z axes in that
// order; every other WCS axis follows them as a degenerate axis whose reference pixel puts the
// chosen index at pixel 1, so that the world values of the saved pixels (and the spectral value
// of a saved slice, the Stokes parameter of a saved plane) stay what they were in the file.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "io/stack.h"

namespace stacklens::io {

struct AxisSubset {
  std::array<int, 3> xyzAxis{-1, -1, -1};  // file axes (0-based) that become x, y, z; -1: none
  std::vector<double> fixedPixel;          // 0-based pixel of every file axis (used for the others)
  int64_t firstSlice = 0;                  // the saved z = 0 is the file's slice firstSlice
};

// header with its WCS cards (every alternate) rewritten by wcslib (wcssub, wcshdo) for the saved
// axes; other cards are kept, in order. Without a WCS the header is returned as it is; a WCS
// wcslib cannot rewrite is left out, with a HISTORY card saying so.
std::vector<HeaderCard> headerForSubset(const std::vector<HeaderCard>& header,
                                        const AxisSubset& subset);

}  // namespace stacklens::io
