// A movie frame from a slice: values mapped linearly from [low, high] to colormap indices 0..255
// (NaN to 0), the rows in display order, resized by nearest neighbour. Shared by stacklens-cli
// movie and the viewer's movie export, so that both make the same frames.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace stacklens::io {

struct FrameLayout {
  int64_t width = 0, height = 0;    // the slice's
  int outWidth = 0, outHeight = 0;  // the frame's (0: the slice's)
  bool originBottom = false;        // FITS: the slice's first row is the frame's last
};

std::vector<uint8_t> movieFrame(const float* slice, const FrameLayout& layout, float low,
                                float high);
// The same with the viewer's own mapping of a value to its colormap index (scale, inversion).
std::vector<uint8_t> movieFrame(const float* slice, const FrameLayout& layout,
                                const std::function<uint8_t(float)>& index);

// The [low, high] that keeps the central `percent` % of a sample of up to `samples` finite
// values from `count` values (every (count / samples)-th value; the nearest ranks outward);
// {0, 1} when there is none, and high = low + 1 for a flat sample. The one sampled display range:
// the movie, the channels and the processed view's own limits all take it.
std::pair<float, float> percentileRange(const float* values, int64_t count, double percent,
                                        int64_t samples = 1 << 20);

}  // namespace stacklens::io
