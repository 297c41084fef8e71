// Collapsing a range of slices into one image (projections, moment maps) without holding the
// stack: rows are read in bands that fit a host budget, each band is collapsed on the backend,
// and the bands' rows make the image. Shared by stacklens-cli project/moments and the viewer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "compute/backend.h"

namespace stacklens::compute {

// Rows [y0, y1) of slice z into out ((y1 − y0) · x floats); called from several threads at once.
using RowsRead = std::function<void(int64_t z, int64_t y0, int64_t y1, float* out)>;

struct ZBand {
  Image slices;           // rows of slices [fileFirst, fileFirst + slices.z) of the stack
  int64_t fileFirst = 0;  // the stack's slice that is the band's slice 0
  int64_t first = 0;      // the range [first, last] in the band's slices
  int64_t last = 0;
};

// The band's (1, rows, x) result, anywhere the backend returns it.
using Collapse = std::function<Image(Backend&, const ZBand&)>;

struct AlongZTimes {
  int bands = 0;
  double readSeconds = 0, computeSeconds = 0;
};

// Slices [first, last] of a stack of shape volume (0 <= first <= last < volume.z), plus up to
// `context` slices beyond each end, collapsed into a (1, y, x) host image. Throws Cancelled.
Image collapseAlongZ(Backend& backend, Shape volume, const Spacing& spacing, int64_t first,
                     int64_t last, int64_t context, size_t hostBudget, const RowsRead& read,
                     const Collapse& collapse, const Job& job = {}, AlongZTimes* times = nullptr);

}  // namespace stacklens::compute
