// io::percentileRange, the one sampled display range of the movie, the channels and the processed
// view: its nearest ranks, its even-stride sample, and what it does with no finite value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "io/movie_frame.h"

namespace {

using stacklens::io::percentileRange;

// 0 .. n-1 in a scrambled order (a stride coprime to n), so that a sort is needed.
std::vector<float> scrambledRamp(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float((i * 7919) % n);
  return v;
}

TEST(PercentileRange, KeepsTheCentralPercentBetweenNearestRanks) {
  // 1001 values 0..1000: the 99 % range cuts 0.5 % of 1000 ranks = 5 at each end exactly.
  const std::vector<float> v = scrambledRamp(1001);
  const auto [low, high] = percentileRange(v.data(), int64_t(v.size()), 99.0);
  EXPECT_EQ(low, 5.f);
  EXPECT_EQ(high, 995.f);
  // 100 values 0..99: 0.25 % of 99 ranks is 0.2475; the range widens to whole ranks outward.
  const std::vector<float> w = scrambledRamp(100);
  const auto [low2, high2] = percentileRange(w.data(), int64_t(w.size()), 99.5);
  EXPECT_EQ(low2, 0.f);
  EXPECT_EQ(high2, 99.f);
  const auto [low3, high3] = percentileRange(w.data(), int64_t(w.size()), 90.0);
  EXPECT_EQ(low3, 4.f);    // floor(0.05 * 99) = 4
  EXPECT_EQ(high3, 95.f);  // ceil(0.95 * 99) = 95
}

TEST(PercentileRange, SamplesEveryStepthValueWhenThereAreMoreThanAsked) {
  // 1000 values, 100 samples: every 10th value, i.e. 0, 10, ..., 990 in index order.
  std::vector<float> v(1000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  const auto [low, high] = percentileRange(v.data(), int64_t(v.size()), 100.0, 100);
  EXPECT_EQ(low, 0.f);
  EXPECT_EQ(high, 990.f);
}

TEST(PercentileRange, SkipsNonFiniteValuesAndWidensAFlatRange) {
  const std::vector<float> v{NAN, 3.f, INFINITY, 3.f, -INFINITY};
  const auto [low, high] = percentileRange(v.data(), int64_t(v.size()), 99.0);
  EXPECT_EQ(low, 3.f);
  EXPECT_EQ(high, 4.f);  // a flat range gets width 1 for the colour map's division
  const std::vector<float> none{NAN, NAN};
  const auto [low2, high2] = percentileRange(none.data(), int64_t(none.size()), 99.0);
  EXPECT_EQ(low2, 0.f);
  EXPECT_EQ(high2, 1.f);
}

}  // namespace
