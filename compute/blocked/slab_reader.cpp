// slabReader: an LRU of whole slices, boxes cut out of them.
#include "compute/blocked/slab_reader.h"

#include <algorithm>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace stacklens::compute {

BoxReader slabReader(Shape volume, std::function<void(int64_t z, float* out)> readSlice,
                     int64_t keepSlices) {
  struct Cache {
    std::mutex mutex;
    std::list<std::pair<int64_t, std::vector<float>>> slices;  // most recent first
  };
  auto cache = std::make_shared<Cache>();
  return [=](const Box& box, float* out) {
    const Shape b = box.shape();
    if (b.z > keepSlices)
      throw InvalidArgument("blocked deconvolution: a block of " + std::to_string(b.z) +
                            " slices is taller than the " + std::to_string(keepSlices) +
                            " slices the reader may keep");
    auto copyRows = [&](int64_t z, const float* s) {
      for (int64_t y = 0; y < b.y; ++y)
        std::memcpy(out + (z * b.y + y) * b.x, s + (box.y0 + y) * volume.x + box.x0,
                    static_cast<size_t>(b.x) * sizeof(float));
    };
    for (int64_t z = 0; z < b.z; ++z) {
      const int64_t k = box.z0 + z;
      {
        std::lock_guard<std::mutex> lock(cache->mutex);
        auto it = cache->slices.begin();
        while (it != cache->slices.end() && it->first != k) ++it;
        if (it != cache->slices.end()) {
          cache->slices.splice(cache->slices.begin(), cache->slices, it);
          copyRows(z, cache->slices.front().second.data());
          continue;
        }
      }
      // Decoded outside the lock: threads filling other parts of a frame read in parallel.
      std::vector<float> slice(static_cast<size_t>(volume.y * volume.x));
      readSlice(k, slice.data());
      copyRows(z, slice.data());
      std::lock_guard<std::mutex> lock(cache->mutex);
      // Another thread may have read the same slice meanwhile: keep one copy.
      const bool kept = std::any_of(cache->slices.begin(), cache->slices.end(),
                                    [k](const auto& entry) { return entry.first == k; });
      if (kept) continue;
      if (static_cast<int64_t>(cache->slices.size()) >= keepSlices) cache->slices.pop_back();
      cache->slices.emplace_front(k, std::move(slice));
    }
  };
}

BoxReader rowReader(
    Shape volume,
    std::function<void(int64_t z, int64_t y0, int64_t y1, int64_t x0, int64_t x1, float* out)>
        readRows) {
  (void)volume;
  return [=](const Box& box, float* out) {
    const Shape b = box.shape();
    for (int64_t z = 0; z < b.z; ++z)
      readRows(box.z0 + z, box.y0, box.y1, box.x0, box.x1, out + z * b.y * b.x);
  };
}

}  // namespace stacklens::compute
