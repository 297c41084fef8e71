// The tiles a plane's display levels are read in, and the bounded cache that holds those read.
#pragma once

#include <cstdint>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "io/byte_budget_lru.h"
#include "render/slice_view.h"

namespace stacklens::ui {

// Tile (tx, ty) of level `level` of slice z: the level's pixels [tx·side, (tx+1)·side) ×
// [ty·side, (ty+1)·side), cut at the level's edges.
struct TileKey {
  int level = 0;
  int z = 0;
  int64_t tx = 0, ty = 0;
  friend bool operator<(const TileKey& a, const TileKey& b) {
    return std::tie(a.level, a.z, a.tx, a.ty) < std::tie(b.level, b.z, b.tx, b.ty);
  }
  friend bool operator==(const TileKey& a, const TileKey& b) {
    return std::tie(a.level, a.z, a.tx, a.ty) == std::tie(b.level, b.z, b.tx, b.ty);
  }
};

// Tiles read, least recently used evicted first once their pixels exceed the budget; tiles
// pinned (those the view shows) are never evicted, so the budget can be exceeded by them alone.
class TileCache {
 public:
  explicit TileCache(int64_t budgetBytes) : tiles_(budgetBytes) {}

  void setBudget(int64_t bytes) { tiles_.setBudget(bytes); }
  int64_t budget() const { return tiles_.budget(); }
  int64_t bytes() const { return tiles_.bytes(); }
  size_t size() const { return tiles_.size(); }
  void clear() { tiles_.clear(); }

  // The tile, marked as just used; null when not held.
  const render::LevelPatch* find(const TileKey& key) { return tiles_.find(key); }
  bool contains(const TileKey& key) const { return tiles_.contains(key); }
  // Adds (or replaces) a tile, then evicts down to the budget, sparing the pinned ones.
  void insert(const TileKey& key, render::LevelPatch patch, const std::set<TileKey>& pinned) {
    tiles_.put(key, std::move(patch), pinned);
  }

 private:
  struct BytesOf {
    int64_t operator()(const render::LevelPatch& p) const {
      return int64_t(p.width) * p.height * int64_t(sizeof(float));
    }
  };
  io::ByteBudgetLru<TileKey, render::LevelPatch, BytesOf> tiles_;
};

}  // namespace stacklens::ui
