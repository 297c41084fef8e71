// Test helper: what a frame read back from a view shows near a point.
#pragma once

#include <QColor>
#include <QImage>
#include <QPointF>

namespace stacklens::testing {

// Whether a green pixel (an overlay's: compass, contours) lies within radius pixels of at.
inline bool greenNear(const QImage& image, QPointF at, int radius) {
  for (int dy = -radius; dy <= radius; ++dy)
    for (int dx = -radius; dx <= radius; ++dx) {
      const QColor c = image.pixelColor(int(at.x()) + dx, int(at.y()) + dy);
      if (c.green() > 200 && c.red() < 160 && c.blue() < 160) return true;
    }
  return false;
}

}  // namespace stacklens::testing
