// What a sweep plot shows for one op, independent of the drawing toolkit: the curves per variant
// (median with its spread), the bandwidth floors, the break-even, the log–log ranges and labels.
// The SVG writer and the viewer's charts both draw from it, so they show the same thing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compute/lab/break_even.h"
#include "compute/lab/sweep.h"

namespace stacklens::compute::lab {

struct Curve {
  std::string variant;                   // variantName, e.g. "gpu-kernel"
  std::vector<double> elements, median;  // x and y, ascending x, finite points only
  std::vector<double> low, high;         // the spread drawn around each point (min, max)
  std::vector<double> floor;             // the bandwidth floor at each x
};

struct PanelData {
  std::string op;
  std::vector<Curve> curves;  // CPU variants by thread count, then gpu-kernel, gpu-with-transfers
  std::optional<BreakEven> breakEven;
  // Ranges in seconds and elements, widened to whole decades (seconds) and a margin (elements)
  // so that every point, bar and floor lies inside.
  double xMin = 1, xMax = 10, yMin = 1e-3, yMax = 1;
};

PanelData panelData(const Sweep& sweep, const std::string& op);

// A fixed colour per variant ("#rrggbb"), the same in every figure, so a class learns them once.
std::string variantColor(const std::string& variant);
// Elements as an edge the audience knows: "2048²" (a square of as many pixels); exact squares of
// powers of two print as such, others with three significant digits.
std::string sizeLabel(double elements);
// Seconds with a unit: "850 µs", "12.3 ms", "4.1 s".
std::string secondsLabel(double seconds);
// Decades from lo to hi inclusive (lo, hi > 0).
std::vector<double> decadeTicks(double lo, double hi);
// Speedup over the CPU with the most threads at each size both have, one curve per other
// variant (median = that CPU's time ÷ the variant's; low/high from the variant's max/min): above
// 1 the variant is faster. The with-transfers curve crosses 1 at the break-even.
std::vector<Curve> speedupCurves(const PanelData& panel);
// The share of gpu-with-transfers' median spent on copies, at op's largest size that has one;
// negative when there is none.
double transferShare(const Sweep& sweep, const std::string& op);
// Speedup of the all-threads CPU over a GPU variant at the largest size both have; 0 when none.
double speedupAtLargest(const PanelData& panel, const std::string& gpuVariant);

}  // namespace stacklens::compute::lab
