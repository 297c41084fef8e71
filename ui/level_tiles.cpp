// A least-recently-used cache of display-level tiles, bounded by their pixels' bytes.
#include "ui/level_tiles.h"

namespace stacklens::ui {

void TileCache::setBudget(int64_t bytes) {
  budget_ = bytes;
  evict({});
}

void TileCache::clear() {
  tiles_.clear();
  uses_.clear();
  bytes_ = 0;
}

const render::LevelPatch* TileCache::find(const TileKey& key) {
  auto it = tiles_.find(key);
  if (it == tiles_.end()) return nullptr;
  uses_.splice(uses_.begin(), uses_, it->second.use);
  return &it->second.patch;
}

void TileCache::insert(const TileKey& key, render::LevelPatch patch,
                       const std::set<TileKey>& pinned) {
  auto it = tiles_.find(key);
  if (it != tiles_.end()) {
    bytes_ -= bytesOf(it->second.patch);
    uses_.erase(it->second.use);
    tiles_.erase(it);
  }
  bytes_ += bytesOf(patch);
  uses_.push_front(key);
  tiles_.emplace(key, Entry{std::move(patch), uses_.begin()});
  evict(pinned);
}

void TileCache::evict(const std::set<TileKey>& pinned) {
  // From the least recently used; pinned tiles are skipped, not moved.
  for (auto use = uses_.end(); bytes_ > budget_ && use != uses_.begin();) {
    --use;
    if (pinned.count(*use)) continue;
    auto it = tiles_.find(*use);
    bytes_ -= bytesOf(it->second.patch);
    tiles_.erase(it);
    use = uses_.erase(use);
  }
}

}  // namespace stacklens::ui
