// PixelPool: recycled (and, for a GPU backend, page-locked) host pixel vectors.
#include "compute/pixel_pool.h"

#include <algorithm>

namespace stacklens::compute {

PixelPool::~PixelPool() {
  for (Buffer& b : free_) release(std::move(b));
}

void PixelPool::release(Buffer buffer) {
  if (buffer.pinnedBy) buffer.pinnedBy->device().unpinHostMemory(buffer.pixels->data());
}

std::shared_ptr<std::vector<float>> PixelPool::acquire(size_t count,
                                                       const std::shared_ptr<Backend>& pinFor) {
  Buffer buffer;
  std::vector<Buffer> surplus;  // released after the lock
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(free_.begin(), free_.end(), [&](const Buffer& b) {
      return b.pixels->size() == count && b.pinnedBy == pinFor;
    });
    if (it != free_.end()) {
      buffer = std::move(*it);
      free_.erase(it);
    }
    while (free_.size() > kKept) {
      surplus.push_back(std::move(free_.front()));  // the longest unused
      free_.erase(free_.begin());
    }
  }
  for (Buffer& b : surplus) release(std::move(b));
  if (!buffer.pixels) {
    buffer.pixels = std::make_unique<std::vector<float>>(count);
    if (pinFor && pinFor->device().pinHostMemory(buffer.pixels->data(), count * sizeof(float)))
      buffer.pinnedBy = pinFor;
  }
  std::vector<float>* pixels = buffer.pixels.release();
  std::weak_ptr<PixelPool> pool = weak_from_this();
  return std::shared_ptr<std::vector<float>>(
      pixels, [pool, pinnedBy = std::move(buffer.pinnedBy)](std::vector<float>* p) {
        Buffer back{std::unique_ptr<std::vector<float>>(p), pinnedBy};
        if (auto alive = pool.lock())
          alive->giveBack(std::move(back));
        else
          release(std::move(back));
      });
}

std::pair<std::shared_ptr<std::vector<float>>, Image> PixelPool::image(
    Shape shape, const std::shared_ptr<Backend>& pinFor) {
  auto pixels = acquire(static_cast<size_t>(shape.count()), pinFor);
  Image image(shape, Location::Host, std::shared_ptr<float>(pixels, pixels->data()));
  return {pixels, image};
}

size_t PixelPool::kept() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return free_.size();
}

void PixelPool::giveBack(Buffer buffer) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(std::move(buffer));
}

}  // namespace stacklens::compute
