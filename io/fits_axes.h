// Which axes of a FITS image are shown as x, y, z and the plane, and their spacing (internal to
// io).
#pragma once

#include <fitsio.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/stack.h"

namespace stacklens::io {

// The file axes longer than 1, in the order they are shown: x, y, z, then the plane axis.
struct FitsAxisRoles {
  std::vector<int64_t> lengths;  // NAXISn of every file axis, x first
  std::vector<int> kept;         // 0-based file axes, at most 4

  int fileAxis(size_t role) const { return role < kept.size() ? kept[role] : -1; }
  int64_t length(size_t role) const {
    return role < kept.size() ? lengths[static_cast<size_t>(kept[role])] : 1;
  }
  int zAxis() const { return fileAxis(2); }      // -1 for a single image
  int planeAxis() const { return fileAxis(3); }  // -1 without a 4th axis
};

// The roles of the current HDU's axes. Throws IoError for an image without data or with more
// than four axes longer than 1. where: " of HDU n", or "" for the primary.
FitsAxisRoles assignAxisRoles(fitsfile* f, const std::vector<int64_t>& lengths,
                              const std::string& path, const std::string& where);

// info.spacing, units and spacingKnown from CDELTn/CDn_n and CUNITn, for linear (microscopy-
// style) axes only: sky and spectral axes are left to the WCS.
void readLinearSpacing(const std::vector<HeaderCard>& header, const FitsAxisRoles& roles,
                       StackInfo& info);

}  // namespace stacklens::io
