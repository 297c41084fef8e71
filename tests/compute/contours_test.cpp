// Contours: a cone's contours are closed circles of the level's radius (every point within a
// small distance of it, by the interpolation's error bound), a plane's are straight open lines
// from edge to edge at the right place, a saddle is split by the cell's mean, NaN cells are left
// out, and the levels lie evenly inside the limits.
#include "compute/contours.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace stacklens::compute;

TEST(Contours, AConesContoursAreClosedCircles) {
  const int n = 41;
  std::vector<float> cone(n * n);
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) cone[size_t(y * n + x)] = float(std::hypot(x - 20.0, y - 20.0));
  const std::vector<ContourLine> lines = contourLines(cone.data(), n, n, {5.5, 12.25});
  ASSERT_EQ(lines.size(), 2u);
  for (const ContourLine& line : lines) {
    EXPECT_TRUE(line.closed);
    EXPECT_GT(line.points.size(), size_t(4 * line.level));  // every cell it crosses
    for (const ContourPoint& p : line.points)
      ASSERT_NEAR(std::hypot(p.x - 20, p.y - 20), line.level, 0.05) << line.level;
  }
}

TEST(Contours, APlanesContourIsAStraightOpenLine) {
  std::vector<float> plane(20 * 10);
  for (int y = 0; y < 10; ++y)
    for (int x = 0; x < 20; ++x) plane[size_t(y * 20 + x)] = float(x + 2 * y);
  const auto lines = contourLines(plane.data(), 20, 10, {13.0});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_FALSE(lines[0].closed);
  for (const ContourPoint& p : lines[0].points) EXPECT_NEAR(p.x + 2 * p.y, 13.0, 1e-9);
  // From the top edge to the bottom one.
  const ContourPoint a = lines[0].points.front(), b = lines[0].points.back();
  EXPECT_NEAR(std::min(a.y, b.y), 0.0, 1e-9);
  EXPECT_NEAR(std::max(a.y, b.y), 6.5, 1e-9);  // x = 0 at y = 6.5
}

TEST(Contours, ASaddleIsSplitByTheCellsMean) {
  // Corners 1 0 / 0 1 (top left, top right / bottom left, bottom right); level 0.5, mean 0.5:
  // the centre counts as above, so the two high corners join and the pieces cut off the lows.
  const double v[4] = {1, 0, 0, 1};
  const auto pieces = contourSegments(v, 2, 2, 0.5);
  ASSERT_EQ(pieces.size(), 2u);
  for (const auto& [a, b] : pieces) {
    // Each piece cuts off a low corner: top right (1, 0) or bottom left (0, 1).
    const double mx = (a.x + b.x) / 2, my = (a.y + b.y) / 2;
    EXPECT_TRUE((mx > 0.5 && my < 0.5) || (mx < 0.5 && my > 0.5)) << mx << "," << my;
  }
}

TEST(Contours, NaNCellsAreLeftOut) {
  std::vector<float> v(10 * 10);
  for (int y = 0; y < 10; ++y)
    for (int x = 0; x < 10; ++x) v[size_t(y * 10 + x)] = float(x);
  v[5 * 10 + 4] = std::numeric_limits<float>::quiet_NaN();
  const auto lines = contourLines(v.data(), 10, 10, {4.5});
  // The line x = 4.5 is broken where the NaN pixel's cells are (rows 4..5 and 5..6).
  ASSERT_EQ(lines.size(), 2u);
  size_t points = 0;
  for (const auto& l : lines) {
    points += l.points.size();
    for (const ContourPoint& p : l.points) EXPECT_NEAR(p.x, 4.5, 1e-9);
  }
  EXPECT_EQ(points, 9u);  // rows 0-4 and 6-9: row 5 lies between the two cells with the NaN
}

TEST(Contours, LevelsLieEvenlyInsideTheLimits) {
  EXPECT_EQ(contourLevels(0, 10, 4), (std::vector<double>{2, 4, 6, 8}));
  EXPECT_TRUE(contourLevels(3, 3, 4).empty());
}
