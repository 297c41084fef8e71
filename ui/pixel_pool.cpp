// PixelPool: recycled (and, for a GPU backend, page-locked) host pixel vectors.
#include "ui/pixel_pool.h"

#include <algorithm>

namespace stacklens::ui {

PixelPool::~PixelPool() {
  for (Buffer& b : free_) release(std::move(b));
}

void PixelPool::release(Buffer buffer) {
  if (buffer.pinnedBy) buffer.pinnedBy->device().unpinHostMemory(buffer.pixels->data());
}

std::shared_ptr<std::vector<float>> PixelPool::acquire(
    size_t count, const std::shared_ptr<compute::Backend>& pinFor) {
  Buffer buffer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(free_.begin(), free_.end(), [&](const Buffer& b) {
      return b.pixels->size() == count && b.pinnedBy == pinFor;
    });
    if (it != free_.end()) {
      buffer = std::move(*it);
      free_.erase(it);
    }
  }
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

std::pair<std::shared_ptr<std::vector<float>>, compute::Image> PixelPool::image(
    compute::Shape shape, const std::shared_ptr<compute::Backend>& pinFor) {
  auto pixels = acquire(static_cast<size_t>(shape.count()), pinFor);
  compute::Image image(shape, compute::Location::Host,
                       std::shared_ptr<float>(pixels, pixels->data()));
  return {pixels, image};
}

size_t PixelPool::kept() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return free_.size();
}

void PixelPool::giveBack(Buffer buffer) {
  Buffer surplus;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.size() < kKept) {
      free_.push_back(std::move(buffer));
      return;
    }
    surplus = std::move(buffer);
  }
  release(std::move(surplus));
}

}  // namespace stacklens::ui
