// assignAxisRoles and readLinearSpacing: a FITS image's axes as the viewer's x, y, z and plane.
#include "io/fits_axes.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "io/fits_cards.h"
#include "io/fits_support.h"

namespace stacklens::io {
namespace {

// Whether file axis `axis` (0-based) of the current HDU is a Stokes axis (CTYPEn = 'STOKES').
bool isStokesAxis(fitsfile* f, int axis) {
  const auto type = readOptionalKey(f, "CTYPE" + std::to_string(axis + 1));
  return type && type->rfind("STOKES", 0) == 0;
}

// A spatial axis with a linear scale: no CTYPE, or a CTYPE that is neither celestial nor spectral
// ("LINEAR", "X", "Z", ...). Celestial axes ("RA---TAN") carry a projection code after a dash.
bool isLinearAxis(const std::vector<HeaderCard>& header, int axis) {
  const HeaderCard* c = findCard(header, "CTYPE" + std::to_string(axis + 1));
  if (!c) return true;
  std::string type = unquote(c->value);
  if (type.empty() || type == "LINEAR" || type == "PIXEL") return true;
  if (type.find('-') != std::string::npos) return false;
  static const char* kNonSpatial[] = {"RA",   "DEC",  "GLON", "GLAT", "ELON",   "ELAT",
                                      "FREQ", "ENER", "WAVN", "VRAD", "WAVE",   "VOPT",
                                      "ZOPT", "AWAV", "VELO", "BETA", "STOKES", "TIME",
                                      "UTC",  "TAI",  "TT",   "MJD",  "JD"};
  for (const char* name : kNonSpatial)
    if (type == name) return false;
  return true;
}

void checkAxesHoldData(const std::vector<int64_t>& lengths, const std::string& path,
                       const std::string& where) {
  if (lengths.empty()) throw IoError(path, "NAXIS = 0" + where + ": there is no image data");
  for (size_t a = 0; a < lengths.size(); ++a)
    if (lengths[a] <= 0)
      throw IoError(path, "NAXIS" + std::to_string(a + 1) + " = " + std::to_string(lengths[a]) +
                              where + ": an axis must have at least one pixel");
}

}  // namespace

FitsAxisRoles assignAxisRoles(fitsfile* f, const std::vector<int64_t>& lengths,
                              const std::string& path, const std::string& where) {
  checkAxesHoldData(lengths, path, where);
  FitsAxisRoles roles;
  roles.lengths = lengths;
  for (size_t a = 0; a < lengths.size(); ++a)
    if (lengths[a] > 1) roles.kept.push_back(static_cast<int>(a));
  std::vector<int>& kept = roles.kept;
  if (kept.size() > 4)
    throw IoError(path,
                  std::to_string(kept.size()) +
                      " axes longer than 1; StackLens shows at most 3 axes plus a plane axis");
  // Radio cubes put Stokes before frequency (RA, DEC, STOKES, FREQ): the spectral axis is the
  // one to scrub, Stokes the plane, as CARTA and DS9 show them.
  if (kept.size() == 4 && isStokesAxis(f, kept[2]) && !isStokesAxis(f, kept[3]))
    std::swap(kept[2], kept[3]);
  return roles;
}

void readLinearSpacing(const std::vector<HeaderCard>& header, const FitsAxisRoles& roles,
                       StackInfo& info) {
  std::array<double, 3> spacing{1.0, 1.0, 1.0};
  bool known = roles.kept.size() >= 2;
  for (size_t role = 0; known && role < 3 && role < roles.kept.size(); ++role) {
    const int axis = roles.kept[role];
    const std::string n = std::to_string(axis + 1);
    double d = 0;
    if (!isLinearAxis(header, axis) ||
        !(cardNumber(header, "CDELT" + n, d) || cardNumber(header, "CD" + n + "_" + n, d)) ||
        d == 0) {
      known = false;
      break;
    }
    spacing[2 - role] = std::abs(d);
    if (const HeaderCard* unit = findCard(header, "CUNIT" + n))
      info.units[2 - role] = unquote(unit->value);
  }
  info.spacingKnown = known;
  if (known)
    info.spacing = spacing;
  else
    info.units = {};
}

}  // namespace stacklens::io
