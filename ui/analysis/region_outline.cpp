// Region outlines: closed curves for whole boundaries, polylines for the arcs of pandas, whose
// straight box sides are joined at their corners and curved ones sampled finely.
#include "ui/analysis/region_outline.h"

#include <QPolygonF>
#include <QTransform>
#include <algorithm>
#include <cmath>

#include "io/region_geometry.h"

namespace stacklens::ui {

namespace {

using io::RegionShape;

constexpr double kDeg = 3.14159265358979323846 / 180.0;

QPointF point(const std::array<double, 2>& p) { return {p[0], p[1]}; }

bool isPanda(RegionShape s) {
  return s == RegionShape::Panda || s == RegionShape::Epanda || s == RegionShape::Bpanda;
}

bool isBoxy(RegionShape s) {
  return s == RegionShape::Box || s == RegionShape::BoxAnnulus || s == RegionShape::Bpanda;
}

bool isElliptic(RegionShape s) {
  return s == RegionShape::Ellipse || s == RegionShape::EllipseAnnulus || s == RegionShape::Epanda;
}

size_t strideOf(RegionShape s) { return isBoxy(s) || isElliptic(s) ? 2 : 1; }

// A whole boundary (semi-axes a, b or box w, h) as a closed curve round the region's centre.
QPainterPath wholeBoundary(const io::PixelRegion& r, double a, double b) {
  QTransform rotation;
  rotation.translate(r.points[0][0], r.points[0][1]);
  rotation.rotate(r.angle);  // from +x towards +y: counter-clockwise with y up
  QPainterPath shape;
  if (isBoxy(r.shape))
    shape.addRect(QRectF(-a / 2, -b / 2, a, b));
  else
    shape.addEllipse(QPointF(0, 0), a, b);
  return rotation.map(shape);
}

// Boundary `ring` from angle t0 to t1 (degrees from the shape's first axis, t0 < t1): box sides
// straight from corner to corner, curves in steps of at most one degree.
QPolygonF boundaryArc(const io::PixelRegion& r, int ring, double t0, double t1) {
  std::vector<double> at{t0, t1};
  if (isBoxy(r.shape)) {
    const size_t k = static_cast<size_t>(ring) * 2;
    const double corner = std::atan2(r.sizes[k + 1], r.sizes[k]) / kDeg;
    // The corners' polar angles in the turns that t0…t1 (at most one turn) can reach.
    const double base = std::floor(t0 / 360) * 360;
    for (double c : {corner, 180 - corner, 180 + corner, 360 - corner})
      for (int turn = -1; turn <= 2; ++turn) {
        const double at0 = base + 360 * turn + c;
        if (at0 > t0 && at0 < t1) at.push_back(at0);
      }
  } else {
    const int steps = static_cast<int>(std::ceil(std::min(t1 - t0, 360.0)));
    for (int i = 1; i < steps; ++i) at.push_back(t0 + (t1 - t0) * i / steps);
  }
  std::sort(at.begin(), at.end());
  QPolygonF arc;
  for (double t : at) arc << point(io::boundaryPoint(r, ring, t));
  return arc;
}

}  // namespace

QPainterPath regionImageOutline(const io::PixelRegion& r) {
  QPainterPath path;
  if (r.points.empty()) return path;
  switch (r.shape) {
    case RegionShape::Polygon: {
      QPolygonF polygon;
      for (const auto& p : r.points) polygon << point(p);
      if (!polygon.isEmpty()) polygon << polygon.front();
      path.addPolygon(polygon);
      return path;
    }
    case RegionShape::Line:
      if (r.points.size() >= 2) {
        path.moveTo(point(r.points[0]));
        for (size_t k = 1; k < r.points.size(); ++k) path.lineTo(point(r.points[k]));
      }
      return path;
    case RegionShape::Point:
    case RegionShape::Text:
      return path;
    default:
      break;
  }
  const size_t stride = strideOf(r.shape);
  const int boundaries = static_cast<int>(r.sizes.size() / stride);
  const bool sectors = isPanda(r.shape) && r.angles.size() >= 2;
  const bool whole = !sectors || r.angles.back() - r.angles.front() >= 360 - 1e-9;
  for (int k = 0; k < boundaries; ++k) {
    const double a = r.sizes[k * stride], b = stride == 2 ? r.sizes[k * stride + 1] : a;
    if (!(a > 0) || !(b > 0)) continue;  // DS9 draws nothing for a zero radius
    if (whole)
      path.addPath(wholeBoundary(r, a, b));
    else
      path.addPolygon(boundaryArc(r, k, r.angles.front(), r.angles.back()));
  }
  if (sectors && boundaries >= 1) {
    // A spoke at every sector edge from the innermost boundary to the outermost, as DS9.
    for (double t : r.angles) {
      path.moveTo(point(io::boundaryPoint(r, 0, t)));
      path.lineTo(point(io::boundaryPoint(r, boundaries - 1, t)));
    }
  }
  return path;
}

}  // namespace stacklens::ui
