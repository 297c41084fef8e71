// Resampling on the CPU: SciPy zoom data, output shapes, polynomial reproduction, bad input.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <functional>
#include <random>
#include <string>

#include "compute/backend.h"
#include "compute/cpu/operations.h"
#include "filter_reference.h"
#include "tests/compute/image_checks.h"

namespace {

using namespace stacklens::compute;
using stacklens::compute::cpu::ThreadPool;
using stacklens::testing::relativeL2;

double maxAbsDiff(const Image& a, const Image& b) {
  double worst = 0;
  for (int64_t i = 0; i < b.shape().count(); ++i)
    worst = std::max(worst, std::fabs(double(a.data()[i]) - double(b.data()[i])));
  return worst;
}

Image sampled(Shape s, const std::function<double(double, double, double)>& f) {
  Image image = Image::host(s);
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) image.at(z, y, x) = static_cast<float>(f(z, y, x));
  return image;
}

double scaleOf(int64_t nIn, int64_t nOut) {
  return nOut > 1 ? double(nIn - 1) / double(nOut - 1) : 0.0;
}

TEST(Resample, MatchesScipyZoomMirror) {
  ThreadPool pool(2);
  const Image in = loadFilterReference("zoom_in", {6, 9, 11});
  for (int order : {1, 3}) {
    const std::string o = std::to_string(order);
    const Image out = cpu::resample(in, {1.7, 0.6, 1.3, order}, {}, pool);
    const Image want = loadFilterReference("zoom_o" + o + "_1.7x0.6x1.3", {10, 5, 14});
    ASSERT_EQ(out.shape(), want.shape());
    EXPECT_LT(relativeL2(out, want), 1e-6) << "order " << order;
    EXPECT_LT(maxAbsDiff(out, want), 1e-5) << "order " << order;

    Image slice = Image::host({1, 9, 11});
    std::copy(in.data(), in.data() + 99, slice.data());
    const Image out2 = cpu::resample(slice, {1.0, 2.5, 0.45, order}, {}, pool);
    const Image want2 = loadFilterReference("zoom2d_o" + o + "_1x2.5x0.45", {1, 22, 5});
    ASSERT_EQ(out2.shape(), want2.shape());
    EXPECT_LT(relativeL2(out2, want2), 1e-6) << "2D order " << order;
  }
}

TEST(Resample, MatchesScipyOnAxesOfTwoAndThreeSamples) {
  ThreadPool pool(1);
  const Image in = loadFilterReference("zoom_tiny_in", {1, 2, 3});
  for (int order : {1, 3}) {
    const Image out = cpu::resample(in, {1.0, 2.6, 2.6, order}, {}, pool);
    const Image want =
        loadFilterReference("zoom_tiny_o" + std::to_string(order) + "_1x2.6x2.6", {1, 5, 8});
    ASSERT_EQ(out.shape(), want.shape());
    EXPECT_LT(maxAbsDiff(out, want), 1e-5) << "order " << order;
  }
}

TEST(Resample, OutputLengthRoundsHalfToEvenLikePython) {
  ThreadPool pool(1);
  const Image in = Image::host({3, 5, 7});
  EXPECT_EQ(cpu::resample(in, {0.5, 0.5, 0.5, 1}, {}, pool).shape(), (Shape{2, 2, 4}));
  EXPECT_EQ(cpu::resample(in, {1.0, 1.0, 1.5, 3}, {}, pool).shape(), (Shape{3, 5, 10}));
  EXPECT_EQ(cpu::resample(in, {1.0, 0.7, 1.0, 3}, {}, pool).shape(), (Shape{3, 4, 7}));
}

TEST(Resample, LinearReproducesAnAffineFunctionExactly) {
  ThreadPool pool(2);
  auto f = [](double z, double y, double x) { return 1.5 + 0.25 * z - 0.5 * y + 0.125 * x; };
  const Shape s{5, 8, 13};
  const Image out = cpu::resample(sampled(s, f), {1.9, 0.8, 2.3, 1}, {}, pool);
  const Shape o = out.shape();
  ASSERT_EQ(o, (Shape{10, 6, 30}));
  const Image want = sampled(o, [&](double z, double y, double x) {
    return f(z * scaleOf(5, 10), y * scaleOf(8, 6), x * scaleOf(13, 30));
  });
  EXPECT_LT(maxAbsDiff(out, want), 2e-6);
}

// Cubic B-spline interpolation reproduces cubics exactly on an infinite grid; the mirror boundary
// perturbs the coefficients by an error decaying as |√3 − 2|^d ≈ 0.27^d with the distance d
// from the edge, so samples 14 or more pixels inside the data must match to float precision.
TEST(Resample, CubicReproducesACubicAwayFromTheBoundaries) {
  ThreadPool pool(2);
  auto p = [](double t) { return 0.5 + 0.3 * t - 0.2 * t * t + 0.15 * t * t * t; };
  auto f = [&](double z, double, double x) { return p((z - 20) / 20) + p((x - 24) / 24); };
  const Shape s{41, 2, 49};
  const Image out = cpu::resample(sampled(s, f), {1.6, 1.0, 0.7, 3}, {}, pool);
  ASSERT_EQ(out.shape(), (Shape{66, 2, 34}));
  const double sz = scaleOf(41, 66), sx = scaleOf(49, 34);
  int checked = 0;
  for (int64_t z = 0; z < 66; ++z)
    for (int64_t x = 0; x < 34; ++x) {
      const double cz = z * sz, cx = x * sx;
      if (cz < 14 || cz > 40 - 14 || cx < 14 || cx > 48 - 14) continue;
      for (int64_t y = 0; y < 2; ++y) ASSERT_NEAR(out.at(z, y, x), f(cz, 0, cx), 2e-6);
      ++checked;
    }
  EXPECT_GT(checked, 50);
}

TEST(Resample, AxesThatKeepTheirLengthAreNotTouched) {
  ThreadPool pool(1);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  Image in = Image::host({2, 6, 7});
  for (int64_t i = 0; i < in.shape().count(); ++i) in.data()[i] = normal(rng);
  in.at(1, 3, 3) = std::numeric_limits<float>::quiet_NaN();  // would spread if prefiltered
  const Image same = cpu::resample(in, {1.0, 1.0, 1.0, 3}, {}, pool);
  ASSERT_EQ(same.shape(), in.shape());
  EXPECT_NE(same.data(), in.data());  // a copy, not the caller's buffer
  for (int64_t i = 0; i < in.shape().count(); ++i)
    if (i != (1 * 6 + 3) * 7 + 3) {
      ASSERT_EQ(same.data()[i], in.data()[i]) << i;
    }
  EXPECT_TRUE(std::isnan(same.at(1, 3, 3)));
  // Zoom only along x: rows without the NaN are interpolated, the others keep their own NaN.
  const Image alongX = cpu::resample(in, {1.0, 1.0, 2.0, 3}, {}, pool);
  EXPECT_FALSE(std::isnan(alongX.at(1, 2, 5)));
  EXPECT_FALSE(std::isnan(alongX.at(0, 3, 5)));
}

TEST(Resample, SingleSampleAxesReplicateAndSingleOutputsTakeTheFirstSample) {
  ThreadPool pool(1);
  Image in = Image::host({1, 1, 5});
  for (int i = 0; i < 5; ++i) in.data()[i] = float(i * i);
  const Image up = cpu::resample(in, {3.0, 2.0, 1.0, 3}, {}, pool);
  ASSERT_EQ(up.shape(), (Shape{3, 2, 5}));
  for (int64_t z = 0; z < 3; ++z)
    for (int64_t y = 0; y < 2; ++y)
      for (int64_t x = 0; x < 5; ++x) EXPECT_NEAR(up.at(z, y, x), float(x * x), 1e-5);
  const Image one = cpu::resample(in, {1.0, 1.0, 0.2, 1}, {}, pool);
  ASSERT_EQ(one.shape(), (Shape{1, 1, 1}));
  EXPECT_EQ(one.at(0, 0, 0), 0.0f);
}

TEST(Resample, ScalesTheSpacing) {
  ThreadPool pool(1);
  Image in = Image::host({4, 4, 10});
  in.spacing = {0.3, 0.1, 0.1, true, "um"};
  const Image out = cpu::resample(in, {3.0, 1.0, 0.5, 1}, {}, pool);
  EXPECT_DOUBLE_EQ(out.spacing.z, 0.1);
  EXPECT_DOUBLE_EQ(out.spacing.x, 0.2);
  EXPECT_TRUE(out.spacing.known);
}

TEST(Resample, RejectsInvalidParametersByName) {
  ThreadPool pool(1);
  const Image in = Image::host({1, 3, 4});
  auto expectInvalid = [&](ResampleParams p, const std::string& word) {
    try {
      cpu::resample(in, p, {}, pool);
      ADD_FAILURE() << "accepted " << word;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  expectInvalid({1.0, 0.0, 1.0, 3}, "zoom on y");
  expectInvalid({-1.0, 1.0, 1.0, 3}, "zoom on z");
  expectInvalid({1.0, 1.0, std::nan(""), 3}, "zoom on x");
  expectInvalid({1.0, 0.1, 1.0, 3}, "output length of 0");
  expectInvalid({1.0, 1.0, 1.0, 2}, "order");
  expectInvalid({1.0, 1.0, 1.0, 0}, "order");
  EXPECT_THROW(cpu::resample(Image::host({0, 3, 3}), {}, {}, pool), InvalidArgument);
}

TEST(Resample, StopsWhenCancelled) {
  ThreadPool pool(2);
  std::atomic<bool> cancel{true};
  EXPECT_THROW(cpu::resample(Image::host({4, 8, 8}), {2.0, 2.0, 2.0, 3}, Job(&cancel), pool),
               Cancelled);
}

TEST(Resample, RunsThroughTheBackendApi) {
  auto backend = makeCpuBackend(2);
  const Image in = loadFilterReference("zoom_in", {6, 9, 11});
  const Image out = backend->download(backend->resample(in, {1.7, 0.6, 1.3, 3}));
  EXPECT_LT(relativeL2(out, loadFilterReference("zoom_o3_1.7x0.6x1.3", {10, 5, 14})), 1e-6);
}

}  // namespace
