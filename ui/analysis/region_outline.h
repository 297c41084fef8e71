// The outline of a DS9 region in image coordinates, as DS9 draws it: every boundary of an
// annulus, and for pandas the arcs of each ring between the first and last angle with a spoke
// at every sector edge.
#pragma once

#include <QPainterPath>

#include "io/ds9_regions.h"

namespace stacklens::ui {

// Image coordinates (pixel centres at integers) before the view's transform; empty for points
// and text.
QPainterPath regionImageOutline(const io::PixelRegion& r);

}  // namespace stacklens::ui
