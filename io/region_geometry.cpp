// Point-in-region tests for every area shape DS9 has, in the shape's own rotated frame.
#include "io/region_geometry.h"

#include <algorithm>
#include <cmath>

namespace stacklens::io {

namespace {

constexpr double kDeg = 3.14159265358979323846 / 180.0;
// Points on a boundary belong inside it, also when rounding puts them a hair outside.
constexpr double kOnBoundary = 1e-12;

bool isAnnulusOrPanda(RegionShape s) {
  return s == RegionShape::Annulus || s == RegionShape::EllipseAnnulus ||
         s == RegionShape::BoxAnnulus || s == RegionShape::Panda || s == RegionShape::Epanda ||
         s == RegionShape::Bpanda;
}

bool isPanda(RegionShape s) {
  return s == RegionShape::Panda || s == RegionShape::Epanda || s == RegionShape::Bpanda;
}

enum class Outline { Round, Elliptic, Boxy };

Outline outlineOf(RegionShape s) {
  switch (s) {
    case RegionShape::Ellipse:
    case RegionShape::EllipseAnnulus:
    case RegionShape::Epanda:
      return Outline::Elliptic;
    case RegionShape::Box:
    case RegionShape::BoxAnnulus:
    case RegionShape::Bpanda:
      return Outline::Boxy;
    default:
      return Outline::Round;
  }
}

size_t strideOf(const PixelRegion& r) { return outlineOf(r.shape) == Outline::Round ? 1 : 2; }

int boundaries(const PixelRegion& r) { return static_cast<int>(r.sizes.size() / strideOf(r)); }

// (u, v): the offset from the centre along the shape's first and second axes.
std::array<double, 2> shapeFrame(const PixelRegion& r, double x, double y) {
  const double dx = x - r.points[0][0], dy = y - r.points[0][1];
  const double c = std::cos(r.angle * kDeg), s = std::sin(r.angle * kDeg);
  return {dx * c + dy * s, -dx * s + dy * c};
}

bool insideBoundary(const PixelRegion& r, int k, double u, double v) {
  const size_t stride = strideOf(r);
  if (k < 0 || (k + 1) * stride > r.sizes.size()) return false;
  const double a = r.sizes[k * stride], b = stride == 2 ? r.sizes[k * stride + 1] : a;
  if (!(a > 0) || !(b > 0)) return false;  // DS9: a boundary of zero size holds nothing
  switch (outlineOf(r.shape)) {
    case Outline::Round:
      return u * u + v * v <= a * a * (1 + kOnBoundary);
    case Outline::Elliptic:
      return (u / a) * (u / a) + (v / b) * (v / b) <= 1 + kOnBoundary;
    case Outline::Boxy:
      return std::fabs(u) <= a / 2 * (1 + kOnBoundary) && std::fabs(v) <= b / 2 * (1 + kOnBoundary);
  }
  return false;
}

int sectorAt(const PixelRegion& r, double u, double v) {
  if (!isPanda(r.shape)) return 0;
  const std::vector<double>& t = r.angles;
  if (t.size() < 2) return -1;
  const double span = t.back() - t.front();
  double rel = std::fmod(std::atan2(v, u) / kDeg - t.front(), 360.0);
  if (rel < 0) rel += 360.0;
  if (rel >= 360.0) rel = 0;
  if (rel > span) return -1;
  const auto it = std::upper_bound(t.begin(), t.end(), t.front() + rel);
  const int s = static_cast<int>(it - t.begin()) - 1;
  return std::min(s, static_cast<int>(t.size()) - 2);
}

bool insidePolygon(const std::vector<std::array<double, 2>>& p, double x, double y) {
  bool in = false;
  for (size_t i = 0, j = p.size() - 1; i < p.size(); j = i++) {
    if ((p[i][1] > y) != (p[j][1] > y) &&
        x < (p[j][0] - p[i][0]) * (y - p[i][1]) / (p[j][1] - p[i][1]) + p[i][0])
      in = !in;
  }
  return in;
}

}  // namespace

int regionRings(const PixelRegion& r) {
  switch (r.shape) {
    case RegionShape::Point:
    case RegionShape::Line:
    case RegionShape::Text:
      return 0;
    case RegionShape::Polygon:
      return r.points.size() >= 3 ? 1 : 0;
    default:
      break;
  }
  if (r.points.empty()) return 0;
  if (!isAnnulusOrPanda(r.shape)) return boundaries(r) >= 1 ? 1 : 0;
  return std::max(0, boundaries(r) - 1);
}

int regionSectors(const PixelRegion& r) {
  if (regionRings(r) == 0) return 0;
  if (!isPanda(r.shape)) return 1;
  return std::max(0, static_cast<int>(r.angles.size()) - 1);
}

int regionPartAt(const PixelRegion& r, double x, double y) {
  const int rings = regionRings(r);
  if (rings == 0 || regionSectors(r) == 0) return -1;
  if (r.shape == RegionShape::Polygon) return insidePolygon(r.points, x, y) ? 0 : -1;
  const auto [u, v] = shapeFrame(r, x, y);
  int ring = -1;
  if (!isAnnulusOrPanda(r.shape)) {
    if (insideBoundary(r, 0, u, v)) ring = 0;
  } else {
    for (int k = 0; k < rings; ++k)
      if (insideBoundary(r, k + 1, u, v)) {
        if (!insideBoundary(r, k, u, v)) ring = k;
        break;
      }
  }
  if (ring < 0) return -1;
  const int sector = sectorAt(r, u, v);
  return sector < 0 ? -1 : sector * rings + ring;
}

std::array<double, 4> regionExtent(const PixelRegion& r) {
  if (r.points.empty()) return {0, 0, -1, -1};
  std::array<double, 4> e{r.points[0][0], r.points[0][1], r.points[0][0], r.points[0][1]};
  if (r.shape == RegionShape::Polygon || r.shape == RegionShape::Line || r.sizes.empty()) {
    for (const auto& p : r.points) {
      e[0] = std::min(e[0], p[0]), e[1] = std::min(e[1], p[1]);
      e[2] = std::max(e[2], p[0]), e[3] = std::max(e[3], p[1]);
    }
    return e;
  }
  // The outermost boundary (the sizes ascend).
  const size_t stride = strideOf(r);
  const size_t last = r.sizes.size() / stride - 1;
  double a = r.sizes[last * stride], b = stride == 2 ? r.sizes[last * stride + 1] : a;
  const double c = std::fabs(std::cos(r.angle * kDeg)), s = std::fabs(std::sin(r.angle * kDeg));
  double hx = a, hy = a;
  if (outlineOf(r.shape) == Outline::Elliptic) {
    hx = std::sqrt(a * a * c * c + b * b * s * s);
    hy = std::sqrt(a * a * s * s + b * b * c * c);
  } else if (outlineOf(r.shape) == Outline::Boxy) {
    a /= 2, b /= 2;
    hx = a * c + b * s;
    hy = a * s + b * c;
  }
  return {e[0] - hx, e[1] - hy, e[0] + hx, e[1] + hy};
}

std::array<double, 2> boundaryPoint(const PixelRegion& r, int ring, double degrees) {
  const size_t stride = strideOf(r);
  if (r.points.empty() || ring < 0 || (ring + 1) * stride > r.sizes.size()) return {0, 0};
  const double a = r.sizes[ring * stride], b = stride == 2 ? r.sizes[ring * stride + 1] : a;
  const double c = std::cos(degrees * kDeg), s = std::sin(degrees * kDeg);
  double d = a;  // the distance from the centre along the direction
  if (outlineOf(r.shape) == Outline::Elliptic) {
    const double t = b * b * c * c + a * a * s * s;
    d = t > 0 ? a * b / std::sqrt(t) : 0;
  } else if (outlineOf(r.shape) == Outline::Boxy) {
    const double dx = std::fabs(c) > 0 ? a / 2 / std::fabs(c) : INFINITY;
    const double dy = std::fabs(s) > 0 ? b / 2 / std::fabs(s) : INFINITY;
    d = std::min(dx, dy);
  }
  const double u = d * c, v = d * s;
  const double rc = std::cos(r.angle * kDeg), rs = std::sin(r.angle * kDeg);
  return {r.points[0][0] + u * rc - v * rs, r.points[0][1] + u * rs + v * rc};
}

}  // namespace stacklens::io
