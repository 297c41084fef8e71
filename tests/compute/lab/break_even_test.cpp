// Break-even sizes on synthetic timings whose crossing is known in closed form.
#include <gtest/gtest.h>

#include <cmath>

#include "compute/lab/break_even.h"
#include "tests/compute/lab/timed_point.h"

namespace stacklens::compute::lab {
namespace {

Point timed(const std::string& op, int64_t edge, Variant v, int threads, double seconds) {
  return testing::timedPoint(op, edge, v, threads, 8, seconds);
}

// CPU t = 1e-9 · n (n elements), GPU t = 1e-4 · n^0.5: equal where n^0.5 = 1e5, n = 1e10, i.e. an
// edge of 1e5. Both are power laws, straight on log–log axes, so the interpolation is exact.
std::vector<Point> powerLaws(const std::vector<int64_t>& edges) {
  std::vector<Point> pts;
  for (int64_t e : edges) {
    const double n = double(e) * double(e);
    pts.push_back(timed("blur", e, Variant::Cpu, 8, 1e-9 * n));
    pts.push_back(timed("blur", e, Variant::Cpu, 1, 8e-9 * n));  // slower: must not be used
    pts.push_back(timed("blur", e, Variant::GpuKernel, 0, 1e-6 * std::sqrt(n)));
    pts.push_back(timed("blur", e, Variant::GpuWithTransfers, 0, 1e-4 * std::sqrt(n)));
  }
  return pts;
}

TEST(LabBreakEven, PowerLawsCrossWhereTheClosedFormSays) {
  const auto be = breakEven(powerLaws({1000, 10000, 31623, 316228}), "blur");
  ASSERT_TRUE(be);
  EXPECT_FALSE(be->atSmallest);
  // exp/log round trips: relative error of a few ulps, far below 1e-9.
  EXPECT_NEAR(be->elements / 1e10, 1.0, 1e-9);
}

TEST(LabBreakEven, ComparesAgainstTheCpuWithTheMostThreads) {
  // Against the 1-thread CPU (8× slower) the crossing would be at n = 1e10 / 64.
  const auto be = breakEven(powerLaws({100, 1000, 10000, 316228}), "blur");
  ASSERT_TRUE(be);
  EXPECT_NEAR(be->elements / 1e10, 1.0, 1e-9);
}

TEST(LabBreakEven, GpuWinningAtTheSmallestSizeIsMarkedSo) {
  const auto be = breakEven(powerLaws({200000, 400000}), "blur");
  ASSERT_TRUE(be);
  EXPECT_TRUE(be->atSmallest);
  EXPECT_DOUBLE_EQ(be->elements, 200000.0 * 200000.0);
}

TEST(LabBreakEven, NoneWhenTheGpuNeverWinsOrIsMissing) {
  EXPECT_FALSE(breakEven(powerLaws({100, 1000, 10000}), "blur"));
  std::vector<Point> cpuOnly;
  for (const auto& p : powerLaws({100, 1000000}))
    if (p.variant == Variant::Cpu) cpuOnly.push_back(p);
  EXPECT_FALSE(breakEven(cpuOnly, "blur"));
  EXPECT_FALSE(breakEven(powerLaws({100, 1000000}), "median"));
}

// A GPU ahead on small images and behind on large ones (its transfers growing faster than the
// CPU's time) has no break-even; one that falls behind and then ahead again breaks even at its
// last crossing.
TEST(LabBreakEven, OnlyTheLastCrossingBeforeTheLargestSizeCounts) {
  auto timings = [](const std::vector<double>& gpuOverCpu) {
    std::vector<Point> pts;
    int64_t edge = 256;
    for (double ratio : gpuOverCpu) {
      pts.push_back(timed("blur", edge, Variant::Cpu, 8, 1e-3));
      pts.push_back(timed("blur", edge, Variant::GpuWithTransfers, 0, 1e-3 * ratio));
      edge *= 2;
    }
    return pts;
  };
  EXPECT_FALSE(breakEven(timings({0.5, 0.8, 1.5, 2.0}), "blur"));
  const auto be = breakEven(timings({0.5, 2.0, std::exp(1.0), std::exp(-1.0)}), "blur");
  ASSERT_TRUE(be);
  EXPECT_FALSE(be->atSmallest);
  // log ratio 1 at 1024², −1 at 2048²: the crossing halfway in log elements, at 1024 · 2048.
  EXPECT_NEAR(be->elements / (1024.0 * 2048.0), 1.0, 1e-9);
}

TEST(LabBreakEven, FailedPointsAreSkipped) {
  auto pts = powerLaws({1000, 10000, 100000, 316228});
  // The GPU failing (NaN) at 100000 leaves 10000 → 316228 to interpolate: still exact.
  for (auto& p : pts)
    if (p.ny == 100000 && p.variant == Variant::GpuWithTransfers) p.medianS = std::nan("");
  const auto be = breakEven(pts, "blur");
  ASSERT_TRUE(be);
  EXPECT_NEAR(be->elements / 1e10, 1.0, 1e-9);
}

}  // namespace
}  // namespace stacklens::compute::lab
