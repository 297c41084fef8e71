// Loads the colormap LUTs from the compiled-in resource.
#include "render/colormap.h"

#include <QFile>
#include <QTextStream>
#include <algorithm>
#include <stdexcept>

// Resources in a static library must be registered explicitly (outside any namespace).
static void registerColormapResource() {
  static const bool done = [] {
    Q_INIT_RESOURCE(colormaps);
    return true;
  }();
  (void)done;
}

namespace stacklens::render {

QColor Colormap::at(int i) const {
  const uint32_t v = rgba[static_cast<size_t>(std::clamp(i, 0, 255))];
  return QColor(int(v & 0xff), int((v >> 8) & 0xff), int((v >> 16) & 0xff));
}

QStringList colormapNames() {
  return {"gray", "viridis", "magma", "inferno", "plasma", "cividis", "hot", "heat", "cubehelix",
          "bb", "cool", "a", "sls", "rainbow",
          // black to one colour, for the channels of a composite (Fiji's channel LUTs)
          "red", "green", "blue", "cyan", "magenta", "yellow"};
}

Colormap loadColormap(const QString& name) {
  registerColormapResource();
  QFile file(":/colormaps/" + name + ".lut");
  if (!colormapNames().contains(name) || !file.open(QIODevice::ReadOnly | QIODevice::Text))
    throw std::invalid_argument("unknown colormap '" + name.toStdString() + "'");
  Colormap map;
  map.name = name;
  QTextStream in(&file);
  for (auto& entry : map.rgba) {
    int r = -1, g = -1, b = -1;
    in >> r >> g >> b;
    if (r < 0 || g < 0 || b < 0 || r > 255 || g > 255 || b > 255)
      throw std::runtime_error("colormap resource '" + name.toStdString() + "' is corrupt");
    entry = uint32_t(r) | uint32_t(g) << 8 | uint32_t(b) << 16 | 0xffu << 24;
  }
  return map;
}

}  // namespace stacklens::render
