// Median, extremes and quartiles of repeated timings: the median `stacklens-cli bench` reports,
// and the spread the speedup lab shows around a point.
#pragma once

#include <vector>

namespace stacklens::compute::bench {

struct TimingSummary {
  double median = 0, min = 0, max = 0, q1 = 0, q3 = 0;
};

// Quartiles by linear interpolation between order statistics (NumPy's default percentile), so
// that a test can check them by hand. Throws InvalidArgument for no samples.
TimingSummary summarize(std::vector<double> seconds);

}  // namespace stacklens::compute::bench
