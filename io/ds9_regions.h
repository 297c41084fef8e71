// DS9 region files: reading them (every coordinate system, unit and shape DS9 writes), placing
// them on an image through its WCS, and writing pixel regions back in DS9's own format.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "io/io_error.h"
#include "io/physical_coords.h"
#include "io/wcs.h"  // SkyFrame

namespace stacklens::io {

// DS9's shapes. The annuli and pandas stay one region each, as DS9 keeps them, and are measured
// in parts (rings, or angle sectors × rings: io/region_geometry.h). Vector, ruler and projection
// become lines; segment a line through all its points; compass two lines with their labels.
enum class RegionShape {
  Circle,
  Ellipse,
  Box,
  Polygon,
  Point,
  Line,
  Text,
  Annulus,         // sizes: the radii of its circles, ascending (n rings: n + 1 radii)
  EllipseAnnulus,  // sizes: {a0, b0, a1, b1, …} semi-axes of its ellipses, ascending
  BoxAnnulus,      // sizes: {w0, h0, w1, h1, …} full sizes of its boxes, ascending
  Panda,           // an Annulus cut into angle sectors (angles)
  Epanda,          // an EllipseAnnulus cut into angle sectors
  Bpanda,          // a BoxAnnulus cut into angle sectors
};

struct Region {
  RegionShape shape = RegionShape::Circle;
  SkyFrame frame = SkyFrame::Image;  // what its numbers are in (Native: DS9's wcs, wcsa…)
  // Image frame only: the numbers are DS9's physical pixels (see PhysicalToImage), positions and
  // pixel sizes alike.
  bool physical = false;
  // Image frame only: the numbers are the image's linear world coordinates (DS9's `linear`: a
  // WCS whose x and y axes are not celestial), positions and unitless sizes alike.
  bool linear = false;
  // The centre, or the vertices / end points. Image: 0-based pixels; sky: degrees (lon, lat).
  std::vector<std::array<double, 2>> points;
  // circle: {r}; ellipse: {a, b} (semi-axes); box: {w, h} (full); annuli and pandas: see
  // RegionShape. Degrees on the sky when sizesInDegrees, else image pixels, or physical pixels
  // or linear units as sizesInPhysical and sizesInLinear say.
  std::vector<double> sizes;
  // True for sky regions unless their sizes carried a pixel unit (`i`, `p`); true for image
  // regions whose sizes carried an angular unit (", ', d, r).
  bool sizesInDegrees = false;
  // Pixel sizes in DS9's physical pixels: those with a `p`, and unitless ones of physical
  // regions.
  bool sizesInPhysical = false;
  bool sizesInLinear = false;  // unitless sizes of linear regions: world units
  // Degrees as DS9 states it for frame: image frames ccw from +x; sky frames ccw from the
  // frame's longitude axis as seen with east left (0: along the west direction, 90: north).
  double angle = 0;
  // Pandas: the sector boundaries in degrees, ascending, spanning at most 360, measured like
  // angle but from the shape's first axis (its angle): n sectors have n + 1 boundaries.
  std::vector<double> angles;
  std::string text, color = "green", tag;  // DS9 properties (tag: the first tag={…})
  std::string font = "helvetica 10 normal roman";
  int width = 1;
  bool dash = false;
  bool fill = false;                    // fill=1: circle, ellipse, box and polygon drawn solid
  bool exclude = false;                 // `-circle(…)` or include=0
  bool source = true;                   // false: `background`
  std::string pointType = "boxcircle";  // point regions: circle, box, diamond, cross, x, arrow…
  int pointSize = 11;                   // screen pixels, as DS9 draws it
  int line = 0;                         // 1-based line in the file
};

struct PixelRegion {
  RegionShape shape = RegionShape::Circle;
  std::vector<std::array<double, 2>> points;  // 0-based pixels
  std::vector<double> sizes;  // pixels: circle {r}, ellipse {a, b}, box {w, h}, as Region's
  double angle = 0;           // degrees ccw from +x in pixel space
  // Pandas: sector boundaries in degrees ccw from the shape's first axis in pixel space,
  // ascending (a sky whose east is right reverses their order: the sectors are listed ccw).
  std::vector<double> angles;
  std::string text, color = "green", tag;
  std::string font = "helvetica 10 normal roman";
  int width = 1;
  bool dash = false;
  bool fill = false;
  bool exclude = false;
  bool source = true;
  std::string pointType = "boxcircle";
  int pointSize = 11;
  int line = 0;
};

struct RegionFile {
  std::vector<Region> regions;
  std::vector<std::string> warnings;  // "line 12: …" for each line or shape left out or changed
};

// Parses DS9 region text (any version DS9 reads: 4.x with or without header, the CIAO/funtools
// style without properties). Per-line problems become warnings; throws IoError (path "") only
// for text that is not a region file at all (binary data).
RegionFile parseDs9Regions(const std::string& text);
// Reads and parses a file; IoError naming the path and the reason when it cannot be read.
RegionFile readDs9Regions(const std::string& path);

// Regions in the image's pixel space at slice z: sky positions through the WCS, sky sizes
// through the local scale along each axis of the shape, sky angles through the local direction
// of north (and the sky's handedness on the image). Physical coordinates are taken as image
// ones (the overload below applies LTM/LTV); linear ones go through the WCS's x and y axes.
// Sky regions without a celestial WCS, linear ones without a linear WCS, and regions that fall
// off the projection are skipped with a warning.
std::vector<PixelRegion> regionsInPixels(const std::vector<Region>& regions, const Wcs* wcs,
                                         double z, std::vector<std::string>* warnings);
// The same, with the image's physical pixels (its LTM/LTV) for regions in physical coordinates:
// positions, sizes, angles and sector edges through the matrix.
std::vector<PixelRegion> regionsInPixels(const std::vector<Region>& regions, const Wcs* wcs,
                                         double z, std::vector<std::string>* warnings,
                                         const PhysicalToImage& physical);

// DS9 4.1 text in the image frame (1-based pixels), with each region's properties: reads back
// through parseDs9Regions to the same regions.
std::string ds9RegionText(const std::vector<PixelRegion>& regions);

}  // namespace stacklens::io
