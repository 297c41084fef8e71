#include "compute/projection.h"

#include <cmath>

namespace stacklens::compute {

SliceRange sliceRange(int64_t slices, int64_t first, int64_t last) {
  if (last < 0) last = slices - 1;
  if (first < 0 || first >= slices || last >= slices || last < first)
    throw InvalidArgument("slice range " + std::to_string(first) + ".." + std::to_string(last) +
                          " is not within the stack's slices 0.." + std::to_string(slices - 1));
  return {first, last + 1};
}

const char* projectionName(Projection op) {
  switch (op) {
    case Projection::Max:
      return "max";
    case Projection::Min:
      return "min";
    case Projection::Mean:
      return "mean";
    case Projection::Sum:
      return "sum";
    case Projection::Std:
      return "std";
    case Projection::Median:
      return "median";
  }
  return "?";
}

Projection parseProjection(const std::string& name) {
  for (Projection op : {Projection::Max, Projection::Min, Projection::Mean, Projection::Sum,
                        Projection::Std, Projection::Median})
    if (name == projectionName(op)) return op;
  throw InvalidArgument("projection: expected max, min, mean, sum, std or median, got '" + name +
                        "'");
}

MomentAxis momentAxis(int64_t slices, const MomentParams& p) {
  validate(p);
  if (!p.coordinate.empty() && static_cast<int64_t>(p.coordinate.size()) != slices)
    throw InvalidArgument("moments: " + std::to_string(p.coordinate.size()) + " coordinates for " +
                          std::to_string(slices) + " slices");
  const SliceRange r = sliceRange(slices, p.first, p.last);
  auto v = [&](int64_t z) { return p.coordinate.empty() ? double(z) : p.coordinate[size_t(z)]; };
  for (int64_t z = 0; z < slices; ++z)
    if (!std::isfinite(v(z)))
      throw InvalidArgument("moments: slice " + std::to_string(z) + " has no finite coordinate");
  MomentAxis a;
  for (int64_t z = r.begin; z < r.end; ++z) {
    a.value.push_back(v(z));
    // The channel's width from its neighbours in the whole axis, so that a range's widths are
    // those of the full cube.
    const int64_t lo = z > 0 ? z - 1 : z, hi = z + 1 < slices ? z + 1 : z;
    a.width.push_back(hi > lo ? std::fabs(v(hi) - v(lo)) / double(hi - lo) : 1.0);
  }
  return a;
}

}  // namespace stacklens::compute
