// placeRegions and skyPoints: regionsInPixels one region at a time, and the inverse for points.
#include "io/region_placement.h"

#include <limits>

namespace stacklens::io {

RegionPlacement placeRegions(const RegionFile& file, const Wcs* wcs, double z,
                             const PhysicalToImage& physical) {
  RegionPlacement out;
  out.warnings = file.warnings;
  for (size_t k = 0; k < file.regions.size(); ++k) {
    std::vector<PixelRegion> pixels =
        regionsInPixels({file.regions[k]}, wcs, z, &out.warnings, physical);
    for (PixelRegion& p : pixels) out.regions.push_back({std::move(p), k});
  }
  return out;
}

const char* regionShapeName(RegionShape shape) {
  switch (shape) {
    case RegionShape::Circle:
      return "circle";
    case RegionShape::Ellipse:
      return "ellipse";
    case RegionShape::Box:
      return "box";
    case RegionShape::Polygon:
      return "polygon";
    case RegionShape::Point:
      return "point";
    case RegionShape::Line:
      return "line";
    case RegionShape::Text:
      return "text";
    case RegionShape::Annulus:
      return "annulus";
    case RegionShape::EllipseAnnulus:
      return "ellipse annulus";
    case RegionShape::BoxAnnulus:
      return "box annulus";
    case RegionShape::Panda:
      return "panda";
    case RegionShape::Epanda:
      return "epanda";
    case RegionShape::Bpanda:
      return "bpanda";
  }
  return "region";
}

std::vector<std::array<double, 2>> skyPoints(const PixelRegion& region, const Wcs* wcs, double z) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::array<double, 2>> out(region.points.size(), {kNaN, kNaN});
  if (!wcs || !wcs->hasCelestial()) return out;
  for (size_t k = 0; k < out.size(); ++k)
    if (!wcs->celestial(region.points[k][0], region.points[k][1], z, out[k][0], out[k][1]))
      out[k] = {kNaN, kNaN};
  return out;
}

}  // namespace stacklens::io
