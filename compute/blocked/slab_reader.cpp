// slabReader: an LRU of whole slices, each decoded once, boxes cut out of them.
#include "compute/blocked/slab_reader.h"

#include <algorithm>
#include <cstring>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace stacklens::compute {

BoxReader slabReader(Shape volume, std::function<void(int64_t z, float* out)> readSlice,
                     int64_t keepSlices) {
  // A slice is decoded once: threads that want it meanwhile (filling other row bands of the
  // same slices) wait for it.
  struct Slice {
    int64_t z = 0;
    std::shared_future<void> decoded;
    std::vector<float> values;
  };
  struct Cache {
    std::mutex mutex;
    std::list<std::shared_ptr<Slice>> slices;  // most recent first
  };
  auto cache = std::make_shared<Cache>();
  return [=](const Box& box, float* out) {
    const Shape b = box.shape();
    if (b.z > keepSlices)
      throw InvalidArgument("blocked deconvolution: a block of " + std::to_string(b.z) +
                            " slices is taller than the " + std::to_string(keepSlices) +
                            " slices the reader may keep");
    for (int64_t z = 0; z < b.z; ++z) {
      const int64_t k = box.z0 + z;
      std::shared_ptr<Slice> slice;
      std::promise<void> decoding;  // set by this thread when it decodes the slice
      bool decodesIt = false;
      {
        std::lock_guard<std::mutex> lock(cache->mutex);
        auto it = std::find_if(cache->slices.begin(), cache->slices.end(),
                               [k](const auto& s) { return s->z == k; });
        if (it != cache->slices.end()) {
          cache->slices.splice(cache->slices.begin(), cache->slices, it);
          slice = cache->slices.front();
        } else {
          slice = std::make_shared<Slice>();
          slice->z = k;
          slice->decoded = decoding.get_future().share();
          decodesIt = true;
          if (static_cast<int64_t>(cache->slices.size()) >= keepSlices) cache->slices.pop_back();
          cache->slices.push_front(slice);
        }
      }
      if (decodesIt) {
        // Decoded outside the lock: threads filling other parts of a frame read in parallel.
        try {
          slice->values.resize(static_cast<size_t>(volume.y * volume.x));
          readSlice(k, slice->values.data());
          decoding.set_value();
        } catch (...) {
          decoding.set_exception(std::current_exception());
          std::lock_guard<std::mutex> lock(cache->mutex);
          cache->slices.remove(slice);  // a later read tries again
          throw;
        }
      } else {
        slice->decoded.get();  // the decoding thread's failure, if it failed
      }
      for (int64_t y = 0; y < b.y; ++y)
        std::memcpy(out + (z * b.y + y) * b.x,
                    slice->values.data() + (box.y0 + y) * volume.x + box.x0,
                    static_cast<size_t>(b.x) * sizeof(float));
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
