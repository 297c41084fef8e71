// What the projections and moments of both backends share: the checked slice range, the names
// of the projections, and each slice's coordinate and channel width for the moments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compute/params.h"

namespace stacklens::compute {

// Slices [begin, end) of a stack of `slices` for first..last (last < 0: the last slice).
// Throws InvalidArgument naming what is wrong.
struct SliceRange {
  int64_t begin = 0, end = 0;
  int64_t count() const { return end - begin; }
};
SliceRange sliceRange(int64_t slices, int64_t first, int64_t last);

// "max", "min", "mean", "sum", "std", "median"; parseProjection throws InvalidArgument.
const char* projectionName(Projection op);
Projection parseProjection(const std::string& name);

// The moment's order checked (0, 1 or 2), and for each slice of the range its coordinate v and
// channel width |Δv| (from p.coordinate, or the slice index when it is empty).
struct MomentAxis {
  std::vector<double> value, width;
};
MomentAxis momentAxis(int64_t slices, const MomentParams& p);

}  // namespace stacklens::compute
