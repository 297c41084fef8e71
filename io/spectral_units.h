// The one rule for the units of a spectral (or other z) axis as StackLens shows and writes them:
// a velocity is in km/s however its CUNIT spells it ("m/s", "m s-1", "m.s-1", "km/s", "m.s**-1"),
// read by wcslib's unit parser (wcsutrne, wcsunitse) rather than compared as a string; any other
// unit stays as the header gives it.
#pragma once

#include <string>

namespace stacklens::io {

struct AxisUnit {
  std::string unit;    // "km/s" for a velocity, else the CUNIT as given ("" when none)
  double scale = 1.0;  // multiplies the axis' values (in CUNIT) into unit
};

AxisUnit axisUnit(const std::string& cunit);

}  // namespace stacklens::io
