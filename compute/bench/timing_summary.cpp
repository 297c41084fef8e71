// Median, extremes and quartiles of repeated timings (see timing_summary.h).
#include "compute/bench/timing_summary.h"

#include <algorithm>

#include "compute/params.h"

namespace stacklens::compute::bench {
namespace {

double percentile(const std::vector<double>& sorted, double q) {
  const double pos = q * double(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

TimingSummary summarize(std::vector<double> s) {
  if (s.empty()) throw InvalidArgument("no timings to summarise");
  std::sort(s.begin(), s.end());
  return {percentile(s, 0.5), s.front(), s.back(), percentile(s, 0.25), percentile(s, 0.75)};
}

}  // namespace stacklens::compute::bench
