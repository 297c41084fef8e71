// Strided reads: straight from an uncompressed FITS file, else band by band through readBox.
#include "io/strided_read.h"

#include <algorithm>
#include <string>
#include <vector>

#include "io/fits_reader.h"

namespace stacklens::io {

namespace {

// Bands of at most this many values bound the memory of a read that cannot skip rows.
constexpr int64_t kBandValues = int64_t(1) << 22;

void readInBands(const StackReader& reader, int64_t z, int64_t y0, int64_t y1, int64_t x0,
                 int64_t x1, int64_t step, float* out) {
  const int64_t width = x1 - x0, across = stridedCount(x0, x1, step);
  // Whole steps of rows per band, so that each band starts on a sampled row.
  const int64_t stepsPerBand = std::max<int64_t>(1, kBandValues / (width * step));
  std::vector<float> band;
  for (int64_t b0 = y0; b0 < y1; b0 += stepsPerBand * step) {
    const int64_t last = std::min(y1 - 1, b0 + (stepsPerBand - 1) * step);  // last sampled row
    const int64_t rows = last - b0 + 1;
    band.resize(static_cast<size_t>(rows * width));
    reader.readBox(z, b0, last + 1, x0, x1, band.data());
    for (int64_t r = 0; r < rows; r += step, out += across)
      for (int64_t i = 0; i < across; ++i) out[i] = band[size_t(r * width + i * step)];
  }
}

}  // namespace

void readStrided(const StackReader& reader, int64_t z, int64_t y0, int64_t y1, int64_t x0,
                 int64_t x1, int64_t step, float* out) {
  const StackInfo& info = reader.info();
  if (step < 1 || z < 0 || z >= info.z || y0 < 0 || y1 > info.y || y0 >= y1 || x0 < 0 ||
      x1 > info.x || x0 >= x1)
    throw IoError(info.path, "strided box " + std::to_string(y0) + ".." + std::to_string(y1) +
                                 " × " + std::to_string(x0) + ".." + std::to_string(x1) + " step " +
                                 std::to_string(step) + " of slice " + std::to_string(z) +
                                 " is outside the stack");
  if (const auto* fits = dynamic_cast<const FitsReader*>(&reader); fits && fits->readsPlain())
    return fits->readStridedPlain(z, y0, y1, x0, x1, step, out);
  readInBands(reader, z, y0, y1, x0, x1, step, out);
}

}  // namespace stacklens::io
