// The tiles a plane's display levels are read in, and the bounded cache that holds those read.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <set>
#include <tuple>
#include <vector>

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
  explicit TileCache(int64_t budgetBytes) : budget_(budgetBytes) {}

  void setBudget(int64_t bytes);
  int64_t budget() const { return budget_; }
  int64_t bytes() const { return bytes_; }
  size_t size() const { return tiles_.size(); }
  void clear();

  // The tile, marked as just used; null when not held.
  const render::LevelPatch* find(const TileKey& key);
  bool contains(const TileKey& key) const { return tiles_.count(key) != 0; }
  // Adds (or replaces) a tile, then evicts down to the budget, sparing the pinned ones.
  void insert(const TileKey& key, render::LevelPatch patch, const std::set<TileKey>& pinned);

 private:
  struct Entry {
    render::LevelPatch patch;
    std::list<TileKey>::iterator use;  // its place in uses_ (front: most recent)
  };
  static int64_t bytesOf(const render::LevelPatch& p) {
    return int64_t(p.width) * p.height * int64_t(sizeof(float));
  }
  void evict(const std::set<TileKey>& pinned);

  int64_t budget_, bytes_ = 0;
  std::map<TileKey, Entry> tiles_;
  std::list<TileKey> uses_;
};

}  // namespace stacklens::ui
