// Sexagesimal angles as catalogs and DS9 region files write them: one grammar for both readers.
#pragma once

#include <optional>
#include <string_view>

namespace stacklens::io {

struct SexagesimalAngle {
  double value = 0;    // in the unit of the first field: hours when `hours`, else the caller's
  bool hours = false;  // an h marked the first field
};

// Two or three fields: degrees (or hours), minutes, seconds, each a number ≥ 0, separated by
// ':', white space, or the markers h / H, d / D, m, s, ' and " (and °, ′, ″); or one number
// marked as hours ("12.5h"). A sign (-, + or U+2212) may lead. "12:34:56.7", "12 34 56.7",
// "12h34m56.7s", "-12d34'56.7\"", "12°34′56.7″" and "12h" are angles; a plain number ("12.5",
// "12.5d") is not, nor is anything else: nullopt.
std::optional<SexagesimalAngle> parseSexagesimal(std::string_view text);

}  // namespace stacklens::io
