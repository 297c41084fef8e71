// Image ▸ Z projection / moment map…: a projection (max, min, mean, sum, std, median) or a
// spectral moment (0, 1, 2) of a range of the open stack's slices, raw or as the current
// pipeline shows them, written as a new 2D FITS file with the WCS kept. Plain C++, run off the
// GUI thread; with a CPU twin it is timed on both backends for the timing panel.
#pragma once

#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "compute/backend.h"
#include "compute/pipeline.h"
#include "io/stack.h"

namespace stacklens::ui {

struct ProjectionRequest {
  std::shared_ptr<const io::StackReader> reader;
  bool moment = false;  // false: projection.op; true: moment order
  compute::Projection op = compute::Projection::Max;
  int order = 0;
  double clip = -std::numeric_limits<double>::infinity();  // moments: voxels below are left out
  int64_t first = 0, last = -1;  // the slice range, inclusive (last < 0: the last slice)
  // When set, each slice of the range as this pipeline shows it (what the viewer shows at that
  // slice), else the raw slices.
  std::optional<compute::Pipeline> pipeline;
  std::string outPath;
  size_t ramBudget = 0;  // 0: the default host budget
};

struct ProjectionOutcome {
  std::string title;        // e.g. "Z project max (3–17)", the timing panel's stage
  std::string backend;      // where it ran
  double milliseconds = 0;  // the collapse on that backend (reading and the pipeline left out)
  double cpuMilliseconds = NAN, maxAbs = NAN, relL2 = NAN;  // the CPU twin, when given
};

// "Z project max", "Moment 1" and the range.
std::string projectionTitle(const ProjectionRequest& request);
// "<input folder>/<input name>_max.fits", "..._moment1.fits"; "_processed" before it for a
// pipeline's result.
std::string defaultProjectionPath(const ProjectionRequest& request);

// Runs it and writes outPath atomically (HISTORY says what was done; moments set BUNIT). twin:
// a CPU backend that runs the same collapse on the same data for the timing panel (null: none).
// Throws compute::Cancelled (nothing written), io::IoError, compute::InvalidArgument.
ProjectionOutcome runProjection(const ProjectionRequest& request, compute::Backend& backend,
                                compute::Backend* twin, const std::atomic<bool>* cancel,
                                const std::function<void(double)>& progress);

}  // namespace stacklens::ui
