// Display limits against numpy percentiles and astropy's ZScaleInterval
// (data/limits_reference.txt).
#include "render/limits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace stacklens::render;

namespace {

// The image of data/make_limits_reference.py.
std::vector<float> testImage(int width, int height) {
  std::vector<float> v(static_cast<size_t>(width) * height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      double value = 100.0 + 20.0 * std::sin(0.3 * x) * std::cos(0.2 * y) + 0.5 * x;
      if ((x * 7 + y * 13) % 97 == 0) value = 5000.0;
      if ((x * 3 + y * 5) % 89 == 0) value = -300.0;
      float f = static_cast<float>(value);
      if ((x + y * width) % 211 == 0) f = NAN;
      v[static_cast<size_t>(y) * width + x] = f;
    }
  return v;
}

struct Reference {
  int width, height;
  double zLow, zHigh, p995Low, p995High, p90Low, p90High;
};

std::vector<Reference> loadReferences() {
  std::ifstream in(STACKLENS_TEST_DATA "/limits_reference.txt");
  std::vector<Reference> refs;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    Reference r{};
    s >> r.width >> r.height >> r.zLow >> r.zHigh >> r.p995Low >> r.p995High >> r.p90Low >>
        r.p90High;
    refs.push_back(r);
  }
  return refs;
}

}  // namespace

TEST(Limits, ReferenceFileIsThere) { EXPECT_EQ(loadReferences().size(), 3u); }

TEST(Limits, ZScaleMatchesAstropy) {
  for (const Reference& r : loadReferences()) {
    const auto image = testImage(r.width, r.height);
    const Limits l = zscaleLimits(image.data(), image.size());
    const double tol = 1e-4 * std::max(1.0, std::abs(r.zHigh - r.zLow));
    EXPECT_NEAR(l.low, r.zLow, tol) << r.width << "x" << r.height;
    EXPECT_NEAR(l.high, r.zHigh, tol) << r.width << "x" << r.height;
  }
}

TEST(Limits, PercentilesMatchNumpy) {
  for (const Reference& r : loadReferences()) {
    const auto image = testImage(r.width, r.height);
    const Limits a = percentileLimits(image.data(), image.size(), 99.5);
    EXPECT_NEAR(a.low, r.p995Low, 1e-3);
    EXPECT_NEAR(a.high, r.p995High, 1e-3);
    const Limits b = computeLimits(LimitsMode::P90, image.data(), image.size());
    EXPECT_NEAR(b.low, r.p90Low, 1e-3);
    EXPECT_NEAR(b.high, r.p90High, 1e-3);
  }
}

TEST(Limits, PercentileOfARampInterpolates) {
  std::vector<float> ramp(101);
  for (int i = 0; i <= 100; ++i) ramp[i] = float(i);
  const Limits l = percentileLimits(ramp.data(), ramp.size(), 95);
  EXPECT_FLOAT_EQ(l.low, 2.5f);
  EXPECT_FLOAT_EQ(l.high, 97.5f);
  EXPECT_THROW(percentileLimits(ramp.data(), ramp.size(), 0), std::invalid_argument);
}

TEST(Limits, MinMaxSkipsNanAndInfinity) {
  const std::vector<float> v = {NAN, 3.f, INFINITY, -2.f, 7.f, -INFINITY};
  const Limits l = minMaxLimits(v.data(), v.size());
  EXPECT_EQ(l.low, -2.f);
  EXPECT_EQ(l.high, 7.f);
}

TEST(Limits, FlatOrEmptySlicesGiveAPositiveRange) {
  const std::vector<float> flat(50, 4.f), nan(10, NAN);
  for (LimitsMode m : kAllLimitsModes) {
    if (m == LimitsMode::Manual) continue;
    const Limits a = computeLimits(m, flat.data(), flat.size());
    EXPECT_EQ(a.low, 4.f) << limitsModeName(m);
    EXPECT_GT(a.high, a.low) << limitsModeName(m);
    const Limits b = computeLimits(m, nan.data(), nan.size());
    EXPECT_GT(b.high, b.low) << limitsModeName(m);
  }
}

TEST(Limits, ModeNamesRoundTrip) {
  for (LimitsMode m : kAllLimitsModes) EXPECT_EQ(limitsModeFromName(limitsModeName(m)), m);
  EXPECT_THROW(limitsModeFromName("median"), std::invalid_argument);
}

// A slice above 2^21 pixels takes its percentiles from an even-stride sample: on a ramp the
// sampled 99.5 % limits are within a stride of the exact ones; min/max stays exact.
TEST(SliceLimits, BigSlicesSamplePercentilesAndKeepMinMaxExact) {
  std::vector<float> ramp(size_t(3) << 20);
  for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = float(i);
  const Limits exact = computeLimits(LimitsMode::P99_5, ramp.data(), ramp.size());
  const Limits sampled = sliceLimits(LimitsMode::P99_5, ramp.data(), ramp.size());
  EXPECT_NEAR(sampled.low, exact.low, 3.0);
  EXPECT_NEAR(sampled.high, exact.high, 3.0);
  EXPECT_NE(sampled.high, exact.high);  // it did sample
  const Limits minmax = sliceLimits(LimitsMode::MinMax, ramp.data(), ramp.size());
  EXPECT_EQ(minmax.low, 0.f);
  EXPECT_EQ(minmax.high, float(ramp.size() - 1));
  std::vector<float> small(1000);
  for (size_t i = 0; i < small.size(); ++i) small[i] = float(i);
  const Limits a = sliceLimits(LimitsMode::P99, small.data(), small.size());
  const Limits b = computeLimits(LimitsMode::P99, small.data(), small.size());
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
}
