// LRU slice cache shared by the GUI thread and the reading workers.
#include "ui/slice_cache.h"

#include <QMutexLocker>

namespace stacklens::ui {

static size_t sizeOf(const SliceData& s) { return s ? s->size() * sizeof(float) : 0; }

SliceData SliceCache::find(int64_t z) {
  QMutexLocker lock(&mutex_);
  auto it = index_.find(z);
  if (it == index_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second);
  return it->second->second;
}

bool SliceCache::contains(int64_t z) const {
  QMutexLocker lock(&mutex_);
  return index_.count(z) != 0;
}

void SliceCache::insert(int64_t z, SliceData slice) {
  QMutexLocker lock(&mutex_);
  if (auto it = index_.find(z); it != index_.end()) {
    bytes_ -= sizeOf(it->second->second);
    order_.erase(it->second);
    index_.erase(it);
  }
  bytes_ += sizeOf(slice);
  order_.emplace_front(z, std::move(slice));
  index_[z] = order_.begin();
  while (bytes_ > budget_ && order_.size() > 1) {
    bytes_ -= sizeOf(order_.back().second);
    index_.erase(order_.back().first);
    order_.pop_back();
  }
}

size_t SliceCache::count() const {
  QMutexLocker lock(&mutex_);
  return order_.size();
}

size_t SliceCache::bytes() const {
  QMutexLocker lock(&mutex_);
  return bytes_;
}

void SliceCache::clear() {
  QMutexLocker lock(&mutex_);
  order_.clear();
  index_.clear();
  bytes_ = 0;
}

}  // namespace stacklens::ui
