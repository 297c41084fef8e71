// A least-recently-used cache bounded in bytes: the one the Zarr chunk cache, the viewer's tiles
// and its processed results are made of. Header-only, Qt-free, not thread-safe (a caller that
// shares one between threads locks around it, as io/zarr_chunk_cache.h does).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <utility>

namespace stacklens::io {

// No key is pinned (put's default).
struct NoPinnedKeys {
  template <class Key>
  bool count(const Key&) const {
    return false;
  }
};

// Key: ordered by std::less (IndexMap = std::map, the default) or hashed (std::unordered_map).
// BytesOf: a function object giving a value's bytes, asked once when the value goes in.
template <class Key, class Value, class BytesOf, template <class...> class IndexMap = std::map>
class ByteBudgetLru {
 public:
  explicit ByteBudgetLru(int64_t budgetBytes, BytesOf bytesOf = {})
      : budget_(budgetBytes), bytesOf_(std::move(bytesOf)) {}

  int64_t budget() const { return budget_; }
  int64_t bytes() const { return bytes_; }  // held, by BytesOf
  size_t size() const { return index_.size(); }
  bool contains(const Key& key) const { return index_.count(key) != 0; }

  // The value, marked as the most recently used; null when not held.
  Value* find(const Key& key) {
    const auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    uses_.splice(uses_.begin(), uses_, it->second);
    return &it->second->value;
  }

  // The value, left where it stands in the order of use; null when not held.
  const Value* peek(const Key& key) const {
    const auto it = index_.find(key);
    return it == index_.end() ? nullptr : &it->second->value;
  }

  // Adds value as the most recently used unless the key is held already (another thread made
  // the same value) or the value alone exceeds the budget (it would evict everything and still
  // not fit); then evicts the least recently used down to the budget. Returns whether it went in.
  bool insertIfFits(const Key& key, Value value) {
    const int64_t n = bytesOf_(value);
    if (n > budget_ || contains(key)) return false;
    add(key, std::move(value), n);
    evict(NoPinnedKeys{});
    return true;
  }

  // Adds value as the most recently used, replacing the key's value if held, then evicts the
  // least recently used down to the budget, skipping the keys pinned (pinned.count(key) != 0):
  // they stay, even when they alone exceed the budget. An unpinned value larger than the budget
  // is evicted last, after everything else that is not pinned.
  template <class Pinned = NoPinnedKeys>
  void put(const Key& key, Value value, const Pinned& pinned = {}) {
    erase(key);
    const int64_t n = bytesOf_(value);
    add(key, std::move(value), n);
    evict(pinned);
  }

  // Replaces a held key's value where it stands in the order of use (the bytes counted again),
  // then evicts down to the budget; false when the key is not held.
  bool replace(const Key& key, Value value) {
    const auto it = index_.find(key);
    if (it == index_.end()) return false;
    Entry& e = *it->second;
    bytes_ -= e.bytes;
    e.bytes = bytesOf_(value);
    bytes_ += e.bytes;
    e.value = std::move(value);
    evict(NoPinnedKeys{});
    return true;
  }

  void erase(const Key& key) {
    const auto it = index_.find(key);
    if (it == index_.end()) return;
    bytes_ -= it->second->bytes;
    uses_.erase(it->second);
    index_.erase(it);
  }

  // A new budget, evicted down to at once (nothing pinned).
  void setBudget(int64_t bytes) {
    budget_ = bytes;
    evict(NoPinnedKeys{});
  }

  void clear() {
    index_.clear();
    uses_.clear();
    bytes_ = 0;
  }

  // f(key, value) for each entry, the most recently used first.
  template <class F>
  void forEach(F&& f) const {
    for (const Entry& e : uses_) f(e.key, e.value);
  }

 private:
  struct Entry {
    Key key;
    Value value;
    int64_t bytes;
  };
  using Uses = std::list<Entry>;  // front: the most recently used

  void add(const Key& key, Value value, int64_t n) {
    uses_.push_front(Entry{key, std::move(value), n});
    index_.emplace(key, uses_.begin());
    bytes_ += n;
  }

  // From the least recently used; pinned entries are skipped, not moved.
  template <class Pinned>
  void evict(const Pinned& pinned) {
    for (auto use = uses_.end(); bytes_ > budget_ && use != uses_.begin();) {
      --use;
      if (pinned.count(use->key)) continue;
      bytes_ -= use->bytes;
      index_.erase(use->key);
      use = uses_.erase(use);
    }
  }

  int64_t budget_, bytes_ = 0;
  BytesOf bytesOf_;
  Uses uses_;
  IndexMap<Key, typename Uses::iterator> index_;
};

}  // namespace stacklens::io
