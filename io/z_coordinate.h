// The world coordinate along z of every slice, for spectral moment maps: the WCS's spectral (or
// linear) axis, else the stack's z spacing, else the slice index; and the moment maps' unit.
#pragma once

#include <string>
#include <vector>

#include "io/stack.h"

namespace stacklens::io {

struct ZCoordinate {
  std::vector<double> values;  // one per slice
  std::string unit;            // e.g. "km/s", "Hz", "micron"; "" when unknown
  std::string what;            // e.g. "VRAD", "z spacing", "slice index"
};

ZCoordinate zCoordinate(const StackReader& reader);

// BUNIT of moment `order` (0, 1, 2) of the stack: data unit · coordinate unit for 0 (e.g.
// "Jy/beam.km/s"), the coordinate's unit for 1 and 2; "" when not known.
std::string momentUnit(const StackInfo& info, const ZCoordinate& z, int order);

}  // namespace stacklens::io
