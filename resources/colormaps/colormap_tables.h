// The bundled colormaps as plain tables, for programs without Qt (stacklens-cli movie); built
// from the same resources/colormaps/*.lut files as the viewer's (render/colormap.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace stacklens::resources {

using ColormapTable = std::array<std::array<uint8_t, 3>, 256>;  // RGB, index 0 for the low limit

// The names in the viewer's menu order.
const std::vector<std::string>& colormapTableNames();
// The table of a bundled colormap; throws std::invalid_argument naming an unknown one.
const ColormapTable& colormapTable(const std::string& name);

}  // namespace stacklens::resources
