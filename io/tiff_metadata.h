// What a TIFF stack's description and resolution tags say about its axes and spacing: ImageJ
// hyperstacks, OME-TIFF, plain resolution tags (internal to io).
#pragma once

#include <cstdint>
#include <string>

#include "io/stack.h"

namespace stacklens::io {

// Header card values are clipped to this many bytes (an ImageJ description can hold megabytes).
std::string clipCardText(const std::string& s);

// How hyperstack pages are ordered: sizes and page strides of the channel, z and time axes.
struct TiffDimensions {
  long long sizes[3] = {1, 1, 1};    // C, Z, T
  long long strides[3] = {1, 1, 1};  // pages between neighbours along C, Z, T
};

// XResolution, YResolution and ResolutionUnit of the first page.
struct TiffResolution {
  bool known = false;  // both given, positive and finite
  float x = 0, y = 0;
  uint16_t unit = 2;  // RESUNIT_INCH, the TIFF default
};

// The pages' order and spacing from an ImageJ description ("ImageJ=..." lines of key=value), its
// keys added to info.header. Throws IoError when it describes more images than pageCount.
TiffDimensions readImagejMetadata(const std::string& description, long long pageCount,
                                  const TiffResolution& resolution, StackInfo& info);

// The pages' order and spacing from an OME-XML description's Pixels element.
TiffDimensions readOmeMetadata(const std::string& description, long long pageCount,
                               StackInfo& info);

// Spacing from the resolution tags alone: only a centimetre unit describes a physical pixel
// (inch values are mostly print DPI).
void readResolutionSpacing(const TiffResolution& resolution, StackInfo& info);

}  // namespace stacklens::io
