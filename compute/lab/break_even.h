// The break-even size of an operation: where the GPU, transfers included, starts to beat the CPU
// and stays ahead up to the largest size measured (a GPU that wins on small images and loses on
// large ones, where the transfers grow faster than the CPU's time, has none).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compute/lab/sweep.h"

namespace stacklens::compute::lab {

struct BreakEven {
  // Elements (pixels or voxels) at the crossing, interpolated on log–log axes between the two
  // measured sizes around it: both curves are straight there, so their difference is too, and a
  // pair of power laws gives its exact crossing.
  double elements = 0;
  // The GPU already won at the smallest size measured: the crossing lies at or below it, and
  // elements is that size.
  bool atSmallest = false;
};

// For op: gpu-with-transfers against the CPU variant with the most threads, at the sizes where
// both have a finite median. Nothing when the GPU is not ahead at the largest size or either is
// missing.
std::optional<BreakEven> breakEven(const std::vector<Point>& points, const std::string& op);

// The ops of points, in the order they first appear.
std::vector<std::string> opsOf(const std::vector<Point>& points);

}  // namespace stacklens::compute::lab
