#include "io/movie_frame.h"

#include <algorithm>
#include <cmath>

namespace stacklens::io {

std::vector<uint8_t> movieFrame(const float* slice, const FrameLayout& l,
                                const std::function<uint8_t(float)>& index) {
  const int w = l.outWidth > 0 ? l.outWidth : int(l.width);
  const int h = l.outHeight > 0 ? l.outHeight : int(l.height);
  std::vector<uint8_t> out(size_t(w) * size_t(h));
  for (int y = 0; y < h; ++y) {
    int64_t sy = (int64_t(y) * l.height) / h;
    if (l.originBottom) sy = l.height - 1 - sy;
    const float* row = slice + sy * l.width;
    for (int x = 0; x < w; ++x)
      out[size_t(y) * size_t(w) + size_t(x)] = index(row[(int64_t(x) * l.width) / w]);
  }
  return out;
}

std::vector<uint8_t> movieFrame(const float* slice, const FrameLayout& l, float low, float high) {
  const float scale = high > low ? 255.f / (high - low) : 0.f;
  return movieFrame(slice, l, [&](float v) {
    return std::isnan(v) ? uint8_t(0)
                         : uint8_t(std::clamp(std::lround((v - low) * scale), 0L, 255L));
  });
}

std::pair<float, float> percentileRange(const float* values, int64_t count, double percent,
                                        int64_t samples) {
  const int64_t step = std::max<int64_t>(1, count / std::max<int64_t>(1, samples));
  std::vector<float> v;
  for (int64_t i = 0; i < count; i += step)
    if (std::isfinite(values[i])) v.push_back(values[i]);
  if (v.empty()) return {0.f, 1.f};
  const double cut = (100.0 - std::clamp(percent, 0.0, 100.0)) / 200.0;
  const size_t lo = size_t(std::floor(cut * double(v.size() - 1)));
  const size_t hi = size_t(std::ceil((1.0 - cut) * double(v.size() - 1)));
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(lo), v.end());
  const float low = v[lo];
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(hi), v.end());
  const float high = v[hi];
  return {low, high > low ? high : low + 1.f};
}

}  // namespace stacklens::io
