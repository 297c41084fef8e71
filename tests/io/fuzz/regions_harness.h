// What the DS9 region fuzzer (and the corpus replay test) does with one input: parse it as
// region text, place the regions on an image without a WCS and write the pixel ones back as DS9
// text, which must parse again. Any outcome but regions (with warnings) or an IoError is a bug.
#pragma once

#include <cstdint>
#include <string>

#include "io/ds9_regions.h"

namespace stacklens::io::fuzz {

// Returns true when the text parsed as regions.
inline bool parseRegionsEverything(const std::string& text) {
  try {
    const RegionFile file = parseDs9Regions(text);
    std::vector<std::string> warnings;
    const std::vector<PixelRegion> pixels = regionsInPixels(file.regions, nullptr, 0, &warnings);
    parseDs9Regions(ds9RegionText(pixels));
    return true;
  } catch (const IoError&) {
    return false;
  }
}

}  // namespace stacklens::io::fuzz
