// Reading a box that may reach past the volume's faces: outside, the values come from the
// boundary rule, as the unblocked run pads its frame (compute/cpu/richardson_lucy.cpp).
#pragma once

#include <functional>

#include "compute/blocked/block_plan.h"

namespace stacklens::compute {

// Reads the voxels of a box that lies inside the volume into out (C order, x fastest). May be
// called from several threads at once.
using BoxReader = std::function<void(const Box& box, float* out)>;

// Fills out (the box's shape, C order) from read: inside the volume the data; outside, reflect
// (half-sample symmetric), zero, or periodic (wrapped around the volume).
void readWithBoundary(const BoxReader& read, Shape volume, Boundary boundary, const Box& box,
                      float* out);

}  // namespace stacklens::compute
