// FITS data-unit samples (big-endian, any BITPIX) converted to float32 as cfitsio converts them
// (internal to io).
#pragma once

#include <cstdint>
#include <optional>

#include "io/stack.h"

namespace stacklens::io {

// How a data unit's raw samples become values.
struct FitsSampleScaling {
  int bitpix = 0;
  DType dtype = DType::Float32;  // UInt64 (BZERO 2^63) is converted exactly
  double bscale = 1.0, bzero = 0.0;
  std::optional<int64_t> blank;  // integers only: that raw value becomes NaN
};

// count samples at in → out: value = raw·bscale + bzero in double, BLANK → NaN. Returns false
// for a BITPIX that FITS does not define.
bool convertFitsSamples(const unsigned char* in, int64_t count, const FitsSampleScaling& scaling,
                        float* out);

}  // namespace stacklens::io
