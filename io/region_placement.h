// A DS9 region file placed on an image: each region through the image's WCS at a slice, as the
// viewer draws it, and its points back on the sky. The viewer's regions panel,
// `stacklens-cli regions` and stacklens.read_regions share it.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "io/ds9_regions.h"
#include "io/physical_coords.h"
#include "io/wcs.h"

namespace stacklens::io {

struct PlacedRegion {
  PixelRegion pixels;
  size_t region = 0;  // the index in RegionFile::regions of the region it was read as
};

struct RegionPlacement {
  std::vector<PlacedRegion> regions;  // in the file's order; a region may give several
  std::vector<std::string> warnings;  // the file's, then those of placing ("line 12: …")
};

// Each region of the file placed at slice z, one at a time so that each placed region keeps the
// region it was read as; sky regions without a celestial WCS are left out with a warning.
// Physical coordinates go through the image's LTM/LTV (PhysicalToImage::fromHeader).
RegionPlacement placeRegions(const RegionFile& file, const Wcs* wcs, double z,
                             const PhysicalToImage& physical = {});

// "circle", "ellipse", "box", "polygon", "point", "line", "text", "annulus", "ellipse annulus",
// "box annulus", "panda", "epanda", "bpanda": as DS9 names the shape.
const char* regionShapeName(RegionShape shape);

// The region's points on the sky in the image's celestial frame (Wcs::celestialFrame), degrees;
// NaN where the WCS has no celestial axes or a point falls off the projection.
std::vector<std::array<double, 2>> skyPoints(const PixelRegion& region, const Wcs* wcs, double z);

}  // namespace stacklens::io
