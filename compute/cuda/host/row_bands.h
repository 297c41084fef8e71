// How one large image is cut into bands of rows for the band pipeline
// (cuda_band_pipeline.cuh): plain C++, so that the plan is tested without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stacklens::compute::cuda {

// Output rows [first, end) of a band, and the input rows [needFirst, needEnd) its outputs read:
// `halo` rows more on each side, clipped to the image.
struct RowBand {
  int64_t first = 0, end = 0;
  int64_t needFirst = 0, needEnd = 0;
};

// Bands of at least targetBytes of rows each, as even as the rows allow, in row order. One band
// (the whole image) when the image holds less than two bands, or when the halo is more than a
// quarter of a band: the overlap would then cost more compute and memory than the overlapped
// copies save. rows ≥ 1, halo ≥ 0.
inline std::vector<RowBand> planRowBands(int64_t rows, size_t rowBytes, int64_t halo,
                                         size_t targetBytes) {
  int64_t count = 1;
  if (rowBytes > 0 && targetBytes > 0) {
    const int64_t rowsPerTarget = int64_t((targetBytes + rowBytes - 1) / rowBytes);
    count = rows / rowsPerTarget;
    if (count < 2 || halo > rows / count / 4) count = 1;
  }
  std::vector<RowBand> bands(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    RowBand& b = bands[size_t(k)];
    b.first = k * rows / count;
    b.end = (k + 1) * rows / count;
    b.needFirst = b.first > halo ? b.first - halo : 0;
    b.needEnd = rows - b.end > halo ? b.end + halo : rows;
  }
  return bands;
}

}  // namespace stacklens::compute::cuda
