// A stack's voxel spacing as the operations take it (z, y, x and the lateral unit), one rule for
// the CLI, the viewer and its jobs. Header-only: compute does not link the readers.
#pragma once

#include "compute/image.h"
#include "io/stack.h"

namespace stacklens::compute {

inline Spacing spacingOf(const io::StackInfo& info) {
  return {info.spacing[0], info.spacing[1], info.spacing[2], info.spacingKnown, info.units[2]};
}

}  // namespace stacklens::compute
