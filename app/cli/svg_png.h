// An SVG figure rasterised to PNG (librsvg and cairo), for `stacklens-cli lab --plot OUT.png`:
// the same drawing as the SVG, for slides and documents that take only bitmaps.
#pragma once

#include <string>

namespace stacklens::cli {

// Whether this build can rasterise (librsvg was found when it was configured).
bool canWritePng();

// The SVG document drawn on white at scale × its own size, as the bytes of a PNG file. Throws
// std::runtime_error with librsvg's reason when the document cannot be drawn, or when this build
// has no librsvg.
std::string pngFromSvg(const std::string& svg, double scale);

}  // namespace stacklens::cli
