// DS9 scale formulas, the equalisation CDF and the CPU twin of the shader's colour index.
#include "render/scale.h"

#include <gtest/gtest.h>

#include <cmath>

#include "render/display_settings.h"

using namespace stacklens::render;

TEST(Scale, MatchesDs9Definitions) {
  for (float x : {0.f, 0.1f, 0.37f, 0.5f, 0.9f, 1.f}) {
    EXPECT_FLOAT_EQ(applyScale(Scale::Linear, x), x);
    EXPECT_NEAR(applyScale(Scale::Log, x), std::log10(1000.0 * x + 1) / 3.0, 1e-6);
    EXPECT_NEAR(applyScale(Scale::Sqrt, x), std::sqrt(x), 1e-6);
    EXPECT_NEAR(applyScale(Scale::Squared, x), x * x, 1e-6);
    EXPECT_NEAR(applyScale(Scale::Asinh, x), std::asinh(10.0 * x) / 3.0, 1e-6);
    EXPECT_NEAR(applyScale(Scale::Power, x), (std::pow(1000.0, x) - 1) / 1000.0, 1e-6);
    EXPECT_NEAR(applyScale(Scale::Log, x, 10.f), std::log10(10.0 * x + 1), 1e-6);
  }
  EXPECT_FLOAT_EQ(applyScale(Scale::Sqrt, -3.f), 0.f);  // clamped to [0, 1] first
  EXPECT_FLOAT_EQ(applyScale(Scale::Squared, 4.f), 1.f);
}

TEST(Scale, NamesRoundTrip) {
  for (Scale s : kAllScales) EXPECT_EQ(scaleFromName(scaleName(s)), s);
  EXPECT_THROW(scaleFromName("cubic"), std::invalid_argument);
}

TEST(Scale, EqualisationCdfCountsValuesInRange) {
  // 4 values at 0, 4 at 0.25 of the range, 2 at the top; NaN and out-of-range values ignored.
  const std::vector<float> v = {0, 0, 0, 0, 25, 25, 25, 25, 100, 100, NAN, 500, -1};
  const auto cdf = equalisationCdf(v.data(), v.size(), 0.f, 100.f);
  ASSERT_EQ(cdf.size(), size_t(kCdfSize));
  EXPECT_FLOAT_EQ(cdf[0], 0.4f);
  EXPECT_FLOAT_EQ(cdf[kCdfSize / 4 - 1], 0.4f);
  EXPECT_FLOAT_EQ(cdf[kCdfSize / 4], 0.8f);
  EXPECT_FLOAT_EQ(cdf[kCdfSize - 2], 0.8f);
  EXPECT_FLOAT_EQ(cdf[kCdfSize - 1], 1.f);
  EXPECT_FLOAT_EQ(applyScale(Scale::HistEq, 0.3f, 1000.f, &cdf), 0.8f);
}

TEST(Scale, EqualisationCdfWithStrideCountsEveryNthValue) {
  // Stride 2 sees 0, 25, 25, 100, 100 (the odd positions hold 50 and would move the CDF).
  const std::vector<float> v = {0, 50, 25, 50, 25, 50, 100, 50, 100};
  const auto cdf = equalisationCdf(v.data(), v.size(), 0.f, 100.f, 2);
  EXPECT_FLOAT_EQ(cdf[0], 0.2f);
  EXPECT_FLOAT_EQ(cdf[kCdfSize / 4], 0.6f);
  EXPECT_FLOAT_EQ(cdf[kCdfSize / 2], 0.6f);
  EXPECT_FLOAT_EQ(cdf[kCdfSize - 1], 1.f);
  // Small slices are counted whole; a 2048² slice by about 2^20 samples.
  EXPECT_EQ(cdfStride(1000), size_t(1));
  EXPECT_EQ(cdfStride(2 * kCdfSampleTarget), size_t(1));
  EXPECT_EQ(cdfStride(size_t(2048) * 2048), size_t(4));
}

TEST(Scale, ColourIndexFollowsLimitsInvertAndNan) {
  DisplaySettings d;
  d.limits = {10.f, 20.f};
  EXPECT_EQ(colourIndex(d, 10.f), 0);
  EXPECT_EQ(colourIndex(d, 5.f), 0);
  EXPECT_EQ(colourIndex(d, 20.f), 255);
  EXPECT_EQ(colourIndex(d, 15.f), 128);  // 127.5 rounds up
  EXPECT_EQ(colourIndex(d, NAN), -1);
  d.invert = true;
  EXPECT_EQ(colourIndex(d, 10.f), 255);
  d.invert = false;
  d.scale = Scale::Sqrt;
  EXPECT_EQ(colourIndex(d, 12.5f), 128);  // sqrt(0.25) = 0.5
}
