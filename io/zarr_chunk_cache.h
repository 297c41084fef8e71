// A least-recently-used cache of decoded Zarr chunks (and shard indexes), bounded in bytes and
// safe to use from several threads.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace stacklens::io {

// Container: a std::vector, or anything with size() and value_type (io/zarr_chunk_bytes.h).
template <class Container>
class ZarrChunkCache {
 public:
  using Value = std::shared_ptr<const Container>;
  explicit ZarrChunkCache(int64_t capacityBytes) : capacity_(capacityBytes) {}

  // The cached value, or nullptr (a missing chunk is not cached here: callers cache its absence
  // as an empty vector).
  Value find(const std::string& key) {
    std::lock_guard lock(mutex_);
    const auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);  // most recently used first
    return it->second->second;
  }

  // Keeps value unless it alone exceeds the capacity; drops the least recently used to fit.
  void insert(const std::string& key, Value value) {
    const int64_t bytes = bytesOf(value);
    if (bytes > capacity_) return;
    std::lock_guard lock(mutex_);
    if (index_.count(key)) return;  // another thread decoded it too
    order_.emplace_front(key, std::move(value));
    index_[key] = order_.begin();
    used_ += bytes;
    while (used_ > capacity_ && !order_.empty()) {
      used_ -= bytesOf(order_.back().second);
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }

 private:
  static int64_t bytesOf(const Value& v) {
    return int64_t(sizeof(typename Container::value_type)) * int64_t(v->size()) +
           64;  // + bookkeeping, so empties count
  }
  mutable std::mutex mutex_;
  int64_t capacity_, used_ = 0;
  std::list<std::pair<std::string, Value>> order_;
  std::unordered_map<std::string, typename std::list<std::pair<std::string, Value>>::iterator>
      index_;
};

}  // namespace stacklens::io
