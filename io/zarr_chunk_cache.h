// A least-recently-used cache of decoded Zarr chunks (and shard indexes), bounded in bytes and
// safe to use from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "io/byte_budget_lru.h"

namespace stacklens::io {

// Container: a std::vector, or anything with size() and value_type (io/zarr_chunk_bytes.h).
template <class Container>
class ZarrChunkCache {
 public:
  using Value = std::shared_ptr<const Container>;
  explicit ZarrChunkCache(int64_t capacityBytes) : lru_(capacityBytes) {}

  // The cached value, or nullptr (a missing chunk is not cached here: callers cache its absence
  // as an empty vector).
  Value find(const std::string& key) {
    std::lock_guard lock(mutex_);
    const Value* v = lru_.find(key);
    return v ? *v : nullptr;
  }

  // Keeps value unless it alone exceeds the capacity (or another thread decoded it too); drops
  // the least recently used to fit.
  void insert(const std::string& key, Value value) {
    std::lock_guard lock(mutex_);
    lru_.insertIfFits(key, std::move(value));
  }

  int64_t usedBytes() const {
    std::lock_guard lock(mutex_);
    return lru_.bytes();
  }

 private:
  struct BytesOf {
    int64_t operator()(const Value& v) const {
      return int64_t(sizeof(typename Container::value_type)) * int64_t(v->size()) +
             64;  // + bookkeeping, so empties count
    }
  };
  mutable std::mutex mutex_;
  ByteBudgetLru<std::string, Value, BytesOf, std::unordered_map> lru_;
};

}  // namespace stacklens::io
