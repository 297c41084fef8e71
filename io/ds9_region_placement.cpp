// DS9 regions onto an image's pixels: sky regions through its WCS, physical ones through its
// LTM/LTV, linear ones through its linear WCS; sizes, angles and panda sectors with them.
#include <algorithm>
#include <cmath>
#include <string>

#include "io/ds9_regions.h"

namespace stacklens::io {

namespace {

constexpr double kDeg = 3.14159265358979323846 / 180.0;

// A shape's two axes, at angle degrees from +x, carried through the 2 × 2 matrix m: the first
// axis's image gives the pixel angle, and the lengths of both scale the shape's sizes (the even
// sizes along the first axis, the odd along the second).
struct MappedAxes {
  double angle;   // degrees
  double first;   // length of the first axis's image
  double second;  // length of the second's
};

MappedAxes mappedAxes(const std::array<double, 4>& m, double angle) {
  const double c = std::cos(angle * kDeg), s = std::sin(angle * kDeg);
  const double ux = m[0] * c + m[1] * s, uy = m[2] * c + m[3] * s;
  const double vx = -m[0] * s + m[1] * c, vy = -m[2] * s + m[3] * c;
  return {std::atan2(uy, ux) / kDeg, std::hypot(ux, uy), std::hypot(vx, vy)};
}

}  // namespace

namespace {

PixelRegion pixelRegionOf(const Region& r) {
  PixelRegion p;
  p.shape = r.shape;
  p.points = r.points;
  p.sizes = r.sizes;
  p.angle = r.angle;
  p.angles = r.angles;
  p.text = r.text;
  p.color = r.color;
  p.tag = r.tag;
  p.font = r.font;
  p.width = r.width;
  p.dash = r.dash;
  p.fill = r.fill;
  p.exclude = r.exclude;
  p.source = r.source;
  p.pointType = r.pointType;
  p.pointSize = r.pointSize;
  p.line = r.line;
  return p;
}

bool hasSizes(RegionShape s) {
  return s != RegionShape::Polygon && s != RegionShape::Point && s != RegionShape::Line &&
         s != RegionShape::Text;
}

// Shapes whose sizes are radii, the same along every direction.
bool isRound(RegionShape s) {
  return s == RegionShape::Circle || s == RegionShape::Annulus || s == RegionShape::Panda;
}

// The pixel angle (degrees ccw from +x) of the sky direction t (degrees from west through
// north) under the local Jacobian j.
double pixelAngle(const std::array<double, 4>& j, double t) {
  const double c = std::cos(t * kDeg), s = std::sin(t * kDeg);
  return std::atan2(j[2] * c + j[3] * s, j[0] * c + j[1] * s) / kDeg;
}

// Sky sector boundaries (degrees from the shape's axis at sky angle `axis`) as pixel angles
// from the shape's pixel axis, followed continuously: a sector of more than 180° stays one.
// A mirrored sky turns them clockwise; they are then reversed so that they ascend.
std::vector<double> pixelSectorAngles(const std::array<double, 4>& j, double axis,
                                      const std::vector<double>& sky, double pixelAxis) {
  std::vector<double> out;
  if (sky.empty()) return out;
  double previousSky = sky.front();
  double at = std::remainder(pixelAngle(j, axis + previousSky) - pixelAxis, 360.0);
  out.push_back(at);
  for (size_t k = 1; k < sky.size(); ++k) {
    // Steps of at most 45° on the sky, each under 180° in pixels for any invertible j.
    const int steps = std::max(1, static_cast<int>(std::ceil((sky[k] - previousSky) / 45.0)));
    for (int i = 1; i <= steps; ++i) {
      const double t0 = previousSky + (sky[k] - previousSky) * (i - 1) / steps;
      const double t1 = previousSky + (sky[k] - previousSky) * i / steps;
      at += std::remainder(pixelAngle(j, axis + t1) - pixelAngle(j, axis + t0), 360.0);
    }
    previousSky = sky[k];
    out.push_back(at);
  }
  if (out.size() >= 2 && out.back() < out.front()) std::reverse(out.begin(), out.end());
  return out;
}

// A region in physical pixels onto the image's: positions (1-based on both sides) through
// LTM/LTV, pixel sizes along the shape's axes and its angles through LTM. Physical sizes on a
// region of another frame (`10p` in image or sky coordinates) take LTM's mean scale, and image
// sizes (`10i`) in a physical region stay as they are.
void toImagePixels(const PhysicalToImage& t, const Region& r, PixelRegion& p) {
  const auto& m = t.ltm;
  const double mean = std::sqrt(std::fabs(m[0] * m[3] - m[1] * m[2]));
  if (!r.physical) {
    if (r.sizesInPhysical)
      for (double& v : p.sizes) v *= mean;
    return;
  }
  for (auto& pt : p.points) {
    const double x = pt[0] + 1, y = pt[1] + 1;
    pt = {m[0] * x + m[1] * y + t.ltv[0] - 1, m[2] * x + m[3] * y + t.ltv[1] - 1};
  }
  const MappedAxes shapeAxes = mappedAxes(m, r.angle);
  p.angle = shapeAxes.angle;
  if (r.sizesInPhysical) {
    for (size_t k = 0; k < p.sizes.size(); ++k)
      p.sizes[k] = r.sizes[k] * (isRound(r.shape) ? mean
                                 : k % 2 == 0     ? shapeAxes.first
                                                  : shapeAxes.second);
  }
  p.angles = pixelSectorAngles(m, r.angle, r.angles, p.angle);
}

// A region in the image's linear world coordinates (DS9's `linear`) onto its pixels: the
// world of the x and y axes is affine in a linear WCS, so three pixels give it exactly.
bool linearToImage(const Wcs* wcs, double z, const Region& r, PixelRegion& p, std::string& why) {
  if (!wcs) return why = "the image has no WCS", false;
  if (wcs->hasCelestial()) return why = "the image's WCS is celestial, not linear", false;
  const std::vector<double> w0 = wcs->pixelToWorld(0, 0, z), wx = wcs->pixelToWorld(1, 0, z),
                            wy = wcs->pixelToWorld(0, 1, z);
  // The world axes that follow x and y.
  std::vector<size_t> axes;
  for (size_t i = 0; i < w0.size() && axes.size() < 2; ++i)
    if (std::isfinite(w0[i]) && (wx[i] != w0[i] || wy[i] != w0[i])) axes.push_back(i);
  if (axes.size() < 2) return why = "the image's WCS has no two axes along x and y", false;
  // world = j · pixel + w0 (0-based pixels); m = j⁻¹ maps world offsets to pixels.
  const double j0 = wx[axes[0]] - w0[axes[0]], j1 = wy[axes[0]] - w0[axes[0]];
  const double j2 = wx[axes[1]] - w0[axes[1]], j3 = wy[axes[1]] - w0[axes[1]];
  const double det = j0 * j3 - j1 * j2;
  if (!std::isfinite(det) || det == 0) return why = "its axes cannot be inverted", false;
  const std::array<double, 4> m{j3 / det, -j1 / det, -j2 / det, j0 / det};
  for (auto& pt : p.points) {
    const double dx = pt[0] - w0[axes[0]], dy = pt[1] - w0[axes[1]];
    pt = {m[0] * dx + m[1] * dy, m[2] * dx + m[3] * dy};
  }
  const MappedAxes shapeAxes = mappedAxes(m, r.angle);
  p.angle = shapeAxes.angle;
  if (r.sizesInLinear) {
    const double mean = 1 / std::sqrt(std::fabs(det));
    for (size_t k = 0; k < p.sizes.size(); ++k)
      p.sizes[k] = r.sizes[k] * (isRound(r.shape) ? mean
                                 : k % 2 == 0     ? shapeAxes.first
                                                  : shapeAxes.second);
  }
  p.angles = pixelSectorAngles(m, r.angle, r.angles, p.angle);
  return true;
}

}  // namespace

std::vector<PixelRegion> regionsInPixels(const std::vector<Region>& regions, const Wcs* wcs,
                                         double z, std::vector<std::string>* warnings) {
  return regionsInPixels(regions, wcs, z, warnings, PhysicalToImage{});
}

std::vector<PixelRegion> regionsInPixels(const std::vector<Region>& regions, const Wcs* wcs,
                                         double z, std::vector<std::string>* warnings,
                                         const PhysicalToImage& physical) {
  std::vector<PixelRegion> out;
  const bool celestial = wcs && wcs->hasCelestial();
  auto warn = [&](const Region& r, const std::string& what) {
    if (warnings) warnings->push_back("line " + std::to_string(r.line) + ": " + what);
  };
  for (const Region& r : regions) {
    PixelRegion p = pixelRegionOf(r);
    const bool sky = r.frame != SkyFrame::Image;
    if ((sky || (r.sizesInDegrees && hasSizes(r.shape))) && !celestial) {
      warn(r, "the image has no celestial WCS for this region; skipped");
      continue;
    }
    if (r.linear) {
      std::string why;
      if (!linearToImage(wcs, z, r, p, why)) {
        warn(r, "linear coordinates: " + why + "; skipped");
        continue;
      }
    }
    if ((r.physical || r.sizesInPhysical) && !physical.identity()) {
      if (!physical.invertible()) {
        warn(r, "the image's LTM/LTV cannot map physical coordinates; skipped");
        continue;
      }
      toImagePixels(physical, r, p);
    }
    if (sky) {
      bool ok = true;
      for (auto& pt : p.points) ok = ok && wcs->skyToPixel(r.frame, pt[0], pt[1], z, pt[0], pt[1]);
      if (!ok) {
        warn(r,
             "a position has no pixel on this image (other frame or off the projection); "
             "skipped");
        continue;
      }
      // A sky text's angle, like a shape's, from west towards north.
      Wcs::LocalSky local;
      if (r.shape == RegionShape::Text && r.angle != 0 &&
          wcs->localSky(r.frame, r.points[0][0], r.points[0][1], z, local))
        p.angle = pixelAngle(local.jacobian, r.angle);
    }
    if (hasSizes(r.shape) && !r.points.empty()) {
      Wcs::LocalSky local;
      bool haveLocal = false;
      if (sky) {
        haveLocal = wcs->localSky(r.frame, r.points[0][0], r.points[0][1], z, local);
      } else if (r.sizesInDegrees) {
        double lon = 0, lat = 0;
        haveLocal =
            wcs->pixelToSky(SkyFrame::Native, p.points[0][0], p.points[0][1], z, lon, lat) &&
            wcs->localSky(SkyFrame::Native, lon, lat, z, local);
      }
      if ((sky || r.sizesInDegrees) && !haveLocal) {
        warn(r, "no local sky scale at this position; skipped");
        continue;
      }
      if (sky) {
        // The shape's first axis on the sky: angle from west towards north; its image through
        // the local Jacobian gives the pixel angle and, with the perpendicular axis, the sizes.
        const auto& j = local.jacobian;
        const MappedAxes shapeAxes = mappedAxes(j, r.angle);
        p.angle = shapeAxes.angle;
        if (r.sizesInDegrees) {
          // Round shapes through the mean scale; others along their own two axes (the even
          // sizes along the first, the odd along the second).
          for (size_t k = 0; k < p.sizes.size(); ++k)
            p.sizes[k] = isRound(r.shape)
                             ? r.sizes[k] / local.scale
                             : r.sizes[k] * (k % 2 == 0 ? shapeAxes.first : shapeAxes.second);
        }
        p.angles = pixelSectorAngles(j, r.angle, r.angles, p.angle);
      } else if (r.sizesInDegrees) {
        for (double& s : p.sizes) s /= local.scale;
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace stacklens::io
