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
// "Jy/beam.km/s"), the coordinate's unit for 1 and 2 (velocities in km/s, io/spectral_units.h);
// "" when not known.
std::string momentUnit(const StackInfo& info, const ZCoordinate& z, int order);

// Writes momentUnit into header's BUNIT with comment, or, when it is not known, removes the BUNIT
// carried from the input: a moment 1 or 2 map is in the z coordinate's unit, never the data's.
void setMomentUnit(std::vector<HeaderCard>& header, const StackInfo& info, const ZCoordinate& z,
                   int order, const std::string& comment);

}  // namespace stacklens::io
