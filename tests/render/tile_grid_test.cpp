// The grid of textures for planes beyond the GL texture limit covers the plane exactly once.
#include "render/tile_grid.h"

#include <gtest/gtest.h>

using stacklens::render::tileGrid;

TEST(TileGrid, CoversThePlaneOnceWithTilesNoLargerThanTheLimit) {
  for (const auto& [w, h, side] : {std::tuple{64, 32, 24}, std::tuple{30000, 30000, 16384},
                                   std::tuple{5, 7, 16}, std::tuple{16384, 16385, 16384}}) {
    const auto tiles = tileGrid(w, h, side);
    long long covered = 0;
    for (const auto& t : tiles) {
      EXPECT_LE(t.width, side);
      EXPECT_LE(t.height, side);
      EXPECT_GE(t.x0, 0);
      EXPECT_LE(t.x0 + t.width, w);
      EXPECT_LE(t.y0 + t.height, h);
      covered += static_cast<long long>(t.width) * t.height;
    }
    EXPECT_EQ(covered, static_cast<long long>(w) * h) << w << "x" << h;
  }
  EXPECT_EQ(tileGrid(64, 32, 24).size(), 6u);  // 3 × 2
  EXPECT_EQ(tileGrid(30000, 30000, 16384).size(), 4u);
  EXPECT_EQ(tileGrid(5, 7, 16).size(), 1u);
  EXPECT_TRUE(tileGrid(0, 7, 16).empty());
}
