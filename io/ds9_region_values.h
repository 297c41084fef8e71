// The values of DS9 region files that the region reader (ds9_regions.cpp) reads: coordinates,
// sizes, angles, counts, a shape's arguments and its properties. Internal to io/.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "io/ds9_regions.h"

namespace stacklens::io::ds9 {

inline constexpr double kDeg = 3.14159265358979323846 / 180.0;

// A position's coordinate. Image: 1-based → 0-based. Sky: degrees, or sexagesimal (hours for
// an equatorial longitude, degrees otherwise), with the d / r / h unit forms.
bool parseCoordinate(const std::string& token, SkyFrame frame, bool longitude, double& out);

enum class SizeKind { Pixels, Degrees };
// A length: " arcsec, ' arcmin, d degrees, r radians, i / p pixels; no unit: pixels in image
// frames, degrees in sky frames.
bool parseSize(const std::string& token, SkyFrame frame, double& value, SizeKind& kind);
// An angle in degrees (no unit or d), or radians (r); finite.
bool parseAngle(const std::string& token, double& out);

// The most rings or sectors one annulus or panda may have: DS9 has no limit, but a file asking
// for millions is damaged, and each costs memory.
inline constexpr int kMaxParts = 1000;
// A count of rings or sectors: a whole number from 1 to kMaxParts.
bool parseCount(const std::string& token, int& out);

// Index just past the closing delimiter of a quoted or braced run starting at s[i].
size_t skipQuoted(const std::string& s, size_t i);
// Splits the arguments of a shape: commas and spaces separate, braces group (text).
std::vector<std::string> splitArguments(const std::string& s);
// v without one pair of enclosing braces or quotes.
std::string unquote(const std::string& v);
// key=value pairs after a `#` or `global`: values may be {braced}, "quoted" or 'quoted'; bare
// words after a value belong to it (point=x 11, dashlist=8 3, line=0 1); `source` and
// `background` stand alone.
std::vector<std::pair<std::string, std::string>> parseProperties(const std::string& s);
// Sets what a property says of a region (color, width, dash, fill, font, text, tag, include,
// source, background, point).
void applyProperty(Region& r, const std::string& key, const std::string& value);

// The coordinate system a word names (image, physical, fk5, galactic, wcs, wcsa...); physical
// is set for DS9's physical (detector, amplifier) pixels.
bool frameNamed(const std::string& word, SkyFrame& frame, bool& physical);
// DS9's shape names, and the point types of its `circle point` forms.
bool isShape(const std::string& w);
bool isPointType(const std::string& w);

}  // namespace stacklens::io::ds9
