// TIFF samples of any supported type converted to float32, one row at a time (internal to io).
#pragma once

#include <cstddef>
#include <string>

#include "io/stack.h"
#include "io/tiff_reader.h"

namespace stacklens::io {

// The stored type of a page's samples. Throws IoError naming the type when it is not supported.
DType tiffSampleType(const TiffReader::Layout& layout, const std::string& path);

// One row of `count` pixels of the chosen sample, converted to float. `row` points at the row's
// first byte; chunky pixels hold `step` samples, the wanted one at index `sample`. Samples of
// fewer than 8 bits are unpacked (one sample per pixel); 16-bit floats are widened exactly.
void convertTiffRow(const TiffReader::Layout& layout, DType type, const unsigned char* row,
                    size_t step, size_t sample, size_t count, float* out);

}  // namespace stacklens::io
