// axisUnit: wcslib's unit grammar decides whether an axis is a velocity.
#include "io/spectral_units.h"

#include <wcslib/wcsunits.h>

#include <vector>

namespace stacklens::io {

AxisUnit axisUnit(const std::string& cunit) {
  AxisUnit out{cunit, 1.0};
  if (cunit.empty()) return out;
  // wcsutrne rewrites common non-standard spellings ("KM/SEC", "S" for seconds) in place; the
  // translation is never longer than the text plus a few characters.
  std::vector<char> text(cunit.begin(), cunit.end());
  text.resize(text.size() + 16, '\0');
  if (wcsutrne(1, text.data(), nullptr) > 0) return out;  // not parsable: as given
  double scale = 1, offset = 0, power = 1;
  if (wcsunitse(text.data(), "km/s", &scale, &offset, &power, nullptr) != 0 || offset != 0 ||
      power != 1)
    return out;  // not a velocity
  return {"km/s", scale};
}

}  // namespace stacklens::io
