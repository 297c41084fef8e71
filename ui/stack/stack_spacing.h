// The open stack's voxel spacing as the compute library takes it (z, y, x and the lateral unit).
#pragma once

#include "compute/image.h"
#include "io/stack.h"

namespace stacklens::ui {

inline compute::Spacing spacingOf(const io::StackInfo& info) {
  return {info.spacing[0], info.spacing[1], info.spacing[2], info.spacingKnown, info.units[2]};
}

}  // namespace stacklens::ui
