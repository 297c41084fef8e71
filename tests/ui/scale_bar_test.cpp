// The scale bar's round lengths and units, and the colorbar's ticks, against values worked out by
// hand.
#include "ui/display/scale_bar.h"

#include <gtest/gtest.h>

using namespace stacklens::ui;

TEST(ScaleBar, RoundsDownToOneTwoOrFive) {
  EXPECT_DOUBLE_EQ(roundDown125(3.125), 2.0);
  EXPECT_DOUBLE_EQ(roundDown125(7.9), 5.0);
  EXPECT_DOUBLE_EQ(roundDown125(10.0), 10.0);
  EXPECT_DOUBLE_EQ(roundDown125(0.0042), 0.002);
  EXPECT_DOUBLE_EQ(roundDown125(0.0), 0.0);
}

TEST(ScaleBar, PhysicalSpacingGivesMicrons) {
  // 0.125 µm a pixel at 4 widget pixels a pixel: 100 px span 3.125 µm, so a bar of 2 µm, 64 px.
  const ScaleBarSpec bar = scaleBar({0.125, "micron", false}, 4.0, 100);
  EXPECT_DOUBLE_EQ(bar.pixels, 64.0);
  EXPECT_EQ(bar.label, QString::fromUtf8("2 µm"));
}

TEST(ScaleBar, AnglesReadInArcsecondsMinutesOrDegrees) {
  // 1″ a pixel at zoom 1: 100 px are 1.67′, a bar of 1′ (60 px).
  ScaleBarSpec bar = scaleBar({1.0 / 3600, "deg", true}, 1.0, 100);
  EXPECT_NEAR(bar.pixels, 60.0, 1e-9);
  EXPECT_EQ(bar.label, QString::fromUtf8("1′"));
  // At zoom 8: 100 px are 12.5″, a bar of 10″ (80 px).
  bar = scaleBar({1.0 / 3600, "deg", true}, 8.0, 100);
  EXPECT_NEAR(bar.pixels, 80.0, 1e-9);
  EXPECT_EQ(bar.label, QString::fromUtf8("10″"));
  // 0.05° a pixel: 100 px are 5°.
  bar = scaleBar({0.05, "deg", true}, 1.0, 100);
  EXPECT_EQ(bar.label, QString::fromUtf8("5°"));
}

TEST(ScaleBar, ColorbarTicksAreRoundValuesInsideTheLimits) {
  EXPECT_EQ(niceTicks(2, 67, 6), (std::vector<double>{10, 20, 30, 40, 50, 60}));
  EXPECT_EQ(niceTicks(-1, 1, 5), (std::vector<double>{-1, -0.5, 0, 0.5, 1}));
  EXPECT_TRUE(niceTicks(3, 3).empty());
}
