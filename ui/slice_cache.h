// A thread-safe least-recently-used cache of decoded slices, bounded in bytes.
#pragma once

#include <QMutex>
#include <cstdint>
#include <list>
#include <unordered_map>

#include "render/slice_view.h"

namespace stacklens::ui {

using render::SliceData;

class SliceCache {
 public:
  explicit SliceCache(size_t budgetBytes) : budget_(budgetBytes) {}

  // The slice, or null when it is not cached (a hit makes it the most recent).
  SliceData find(int64_t z);
  bool contains(int64_t z) const;
  // Stores a slice, evicting the least recently used ones beyond the budget (the newest slice is
  // always kept, even alone over budget).
  void insert(int64_t z, SliceData slice);
  size_t count() const;
  size_t bytes() const;
  size_t budget() const { return budget_; }
  void clear();

 private:
  mutable QMutex mutex_;
  size_t budget_;
  size_t bytes_ = 0;
  std::list<std::pair<int64_t, SliceData>> order_;  // front = most recent
  std::unordered_map<int64_t, std::list<std::pair<int64_t, SliceData>>::iterator> index_;
};

}  // namespace stacklens::ui
