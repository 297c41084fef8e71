// Boxes read from a stack slice by slice, keeping the last few slices read (a frame is filled a
// slab of slices at a time), or row band by row band.
#pragma once

#include <cstdint>
#include <functional>

#include "compute/blocked/frame_fill.h"

namespace stacklens::compute {

// readSlice(z, out) writes slice z (y·x floats); it is called from several threads at once when
// the reader is (slices are decoded outside the cache's lock, as io's readers allow), but once
// per slice while the slice is kept: threads wanting a slice being decoded wait for it. At most
// keepSlices slices are kept (least recently used go first), plus those still in use; a box
// taller than keepSlices is an InvalidArgument.
BoxReader slabReader(Shape volume, std::function<void(int64_t z, float* out)> readSlice,
                     int64_t keepSlices);

// Boxes read slice by slice: readRows(z, y0, y1, x0, x1, out) writes columns [x0, x1) of rows
// [y0, y1) of slice z; nothing is kept between boxes (for files that can read rows cheaply, e.g.
// uncompressed FITS).
BoxReader rowReader(
    Shape volume,
    std::function<void(int64_t z, int64_t y0, int64_t y1, int64_t x0, int64_t x1, float* out)>
        readRows);

}  // namespace stacklens::compute
