// Planes larger than the GL texture limit are drawn as a grid of textures: where each tile lies.
#pragma once

#include <vector>

namespace stacklens::render {

struct TileRect {
  int x0 = 0, y0 = 0, width = 0, height = 0;  // in image pixels
};

// Tiles of at most maxSide × maxSide covering width × height, row-major from (0, 0); one tile
// when the plane fits.
std::vector<TileRect> tileGrid(int width, int height, int maxSide);

}  // namespace stacklens::render
