// Strided samples of a slice: every step-th sample of every step-th row, what the display
// levels of a plane without a stored pyramid are made of (io/display_levels.h).
#pragma once

#include <cstdint>

#include "io/stack.h"

namespace stacklens::io {

// Samples from `from` to `to` (exclusive) taken every step: ceil((to − from) / step).
inline int64_t stridedCount(int64_t from, int64_t to, int64_t step) {
  return (to - from + step - 1) / step;
}

// Writes the samples (y0 + i·step, x0 + j·step) of the box [y0, y1) × [x0, x1) of slice z, row by
// row: stridedCount(y0, y1, step) · stridedCount(x0, x1, step) values, scaled as readSlice scales
// them (BZERO/BSCALE, BLANK → NaN). An uncompressed FITS file reads only the sampled rows; other
// files read the box in bands of rows, never the whole slice at once. Throws IoError.
void readStrided(const StackReader& reader, int64_t z, int64_t y0, int64_t y1, int64_t x0,
                 int64_t x1, int64_t step, float* out);

}  // namespace stacklens::io
