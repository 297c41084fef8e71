// Where a pixel region lies: which of its parts (rings, angle sectors × rings) a point falls in,
// as DS9 counts pixels for its region statistics, and the outlines of those parts.
#pragma once

#include <array>
#include <vector>

#include "io/ds9_regions.h"

namespace stacklens::io {

// The rings of a region: n for an annulus or panda of n + 1 boundaries, 1 for a circle, ellipse,
// box or polygon, 0 for points, lines and text (they hold no pixels).
int regionRings(const PixelRegion& r);
// The angle sectors: n for a panda of n + 1 boundary angles, else 1 (0 where regionRings is 0).
int regionSectors(const PixelRegion& r);
// The number of parts DS9 measures: rings × sectors.
inline int regionParts(const PixelRegion& r) { return regionRings(r) * regionSectors(r); }

// The part of r holding the point (x, y) in pixels, or -1. Parts are numbered sector by sector,
// rings inner to outer within each, as DS9 lists them: part = sector * rings + ring. A point
// belongs to ring k when it is inside (or on) boundary k + 1 and not inside boundary k, so the
// rings share no point; a boundary of zero size holds nothing. Sector s runs from angles[s]
// (included) to angles[s + 1] (excluded, but for the last sector of a panda spanning less than
// 360°). Polygons: the even-odd rule.
int regionPartAt(const PixelRegion& r, double x, double y);

// The box around everything r covers in pixels: {xmin, ymin, xmax, ymax}.
std::array<double, 4> regionExtent(const PixelRegion& r);

// The point of boundary `ring` (0: innermost) at polar angle `degrees` in the shape's own frame
// (from its first axis), in pixels: what sector edges are drawn between.
std::array<double, 2> boundaryPoint(const PixelRegion& r, int ring, double degrees);

}  // namespace stacklens::io
