// tileGrid: equal steps of maxSide, the last tile of a row or column takes the rest.
#include "render/tile_grid.h"

#include <algorithm>

namespace stacklens::render {

std::vector<TileRect> tileGrid(int width, int height, int maxSide) {
  std::vector<TileRect> tiles;
  if (width <= 0 || height <= 0 || maxSide <= 0) return tiles;
  for (int y = 0; y < height; y += maxSide)
    for (int x = 0; x < width; x += maxSide)
      tiles.push_back({x, y, std::min(maxSide, width - x), std::min(maxSide, height - y)});
  return tiles;
}

}  // namespace stacklens::render
