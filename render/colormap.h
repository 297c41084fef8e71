// The bundled 256-entry colormaps (resources/colormaps/*.lut, compiled in as a Qt resource).
#pragma once

#include <QColor>
#include <QString>
#include <QStringList>
#include <array>
#include <cstdint>

namespace stacklens::render {

// One colormap: 256 RGBA entries, index 0 for the low limit.
struct Colormap {
  QString name;
  std::array<uint32_t, 256> rgba{};  // 0xAABBGGRR in memory order R, G, B, A (GL_RGBA8)
  QColor at(int i) const;
};

// The names in menu order: gray, viridis, magma, inferno, plasma, cividis, hot, heat, cubehelix,
// bb, cool, a, sls, rainbow.
QStringList colormapNames();
// Loads a colormap by name; throws std::invalid_argument naming it when it is unknown.
Colormap loadColormap(const QString& name);

}  // namespace stacklens::render
