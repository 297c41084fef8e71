// The display-level tile cache evicts the least recently used tiles past its budget, never the
// pinned ones (those the view shows).
#include "ui/display/level_tiles.h"

#include <gtest/gtest.h>

using stacklens::render::LevelPatch;
using stacklens::ui::TileCache;
using stacklens::ui::TileKey;

namespace {

// A tile of side × side pixels (4 bytes each).
LevelPatch tileOf(int side) {
  return {std::make_shared<std::vector<float>>(size_t(side) * side), side, side, 0, 0, 1, 1};
}

TileKey key(int tx) { return {0, 0, tx, 0}; }

}  // namespace

TEST(TileCache, EvictsTheLeastRecentlyUsedPastItsBudget) {
  TileCache cache(3 * 400);  // three tiles of 10 × 10 floats
  for (int i = 0; i < 3; ++i) cache.insert(key(i), tileOf(10), {});
  EXPECT_EQ(cache.bytes(), 1200);
  ASSERT_NE(cache.find(key(0)), nullptr);  // 0 used: 1 is now the least recent
  cache.insert(key(3), tileOf(10), {});
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_TRUE(cache.contains(key(0)));
  EXPECT_FALSE(cache.contains(key(1)));
  EXPECT_TRUE(cache.contains(key(2)));
  EXPECT_TRUE(cache.contains(key(3)));
  EXPECT_EQ(cache.bytes(), 1200);
}

TEST(TileCache, NeverEvictsPinnedTilesEvenOverBudget) {
  TileCache cache(400);
  cache.insert(key(0), tileOf(10), {});
  cache.insert(key(1), tileOf(10), {key(0), key(1)});
  EXPECT_EQ(cache.size(), 2u);  // both shown: over budget
  EXPECT_EQ(cache.bytes(), 800);
  cache.insert(key(2), tileOf(10), {key(0), key(2)});
  EXPECT_TRUE(cache.contains(key(0)));
  EXPECT_FALSE(cache.contains(key(1)));
  EXPECT_TRUE(cache.contains(key(2)));
  cache.setBudget(0);  // nothing pinned now: all go
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.bytes(), 0);
}

TEST(TileCache, ReplacingATileCountsItsBytesOnce) {
  TileCache cache(1 << 20);
  cache.insert(key(0), tileOf(10), {});
  cache.insert(key(0), tileOf(20), {});
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.bytes(), 1600);
  EXPECT_EQ(cache.find(key(0))->width, 20);
  cache.clear();
  EXPECT_EQ(cache.bytes(), 0);
  EXPECT_EQ(cache.find(key(0)), nullptr);
}
