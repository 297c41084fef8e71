// Resampling on every backend against SciPy's zoom (mirror boundary, committed data) and closed
// forms: output shapes, polynomial reproduction, untouched axes, spacing, bad input; CUDA
// against the CPU too.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "compute/backend.h"
#include "tests/compute/filter_reference.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"
#include "tests/compute/invalid_argument_check.h"

namespace {

using namespace stacklens::compute;
using stacklens::testing::expectInvalidNaming;
using stacklens::testing::maxAbsDiff;
using stacklens::testing::randomImage;
using stacklens::testing::readReferenceImage;
using stacklens::testing::relativeL2;

Image sampled(Shape s, const std::function<double(double, double, double)>& f) {
  Image image = Image::host(s);
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) image.at(z, y, x) = static_cast<float>(f(z, y, x));
  return image;
}

// Where output sample o of nOut lands on the input axis of nIn samples (SciPy's zoom with
// grid_mode=False: the ends on the ends).
double scaleOf(int64_t nIn, int64_t nOut) {
  return nOut > 1 ? double(nIn - 1) / double(nOut - 1) : 0.0;
}

class Resample : public stacklens::testing::OnEachBackend {};
STACKLENS_ON_EACH_BACKEND(Resample);

TEST_P(Resample, MatchesScipyZoomMirror) {
  // Prepare
  const Image in = loadFilterReference("zoom_in", {6, 9, 11});
  Image slice = Image::host({1, 9, 11});
  std::copy(in.data(), in.data() + 99, slice.data());
  const Image other = readReferenceImage("cuda_zoom_in.f32", {5, 7, 9});

  for (int order : {1, 3}) {
    const std::string o = std::to_string(order);

    // Run
    const Image out = onHost(backend->resample(in, {1.7, 0.6, 1.3, order}));
    const Image out2 = onHost(backend->resample(slice, {1.0, 2.5, 0.45, order}));
    const Image out3 = onHost(backend->resample(other, {1.6, 0.7, 2.3, order}));

    // Verify
    const Image want = loadFilterReference("zoom_o" + o + "_1.7x0.6x1.3", {10, 5, 14});
    ASSERT_EQ(out.shape(), want.shape());
    EXPECT_LT(relativeL2(out, want), 1e-6) << "order " << order;
    EXPECT_LT(maxAbsDiff(out, want), 1e-5) << "order " << order;
    const Image want2 = loadFilterReference("zoom2d_o" + o + "_1x2.5x0.45", {1, 22, 5});
    ASSERT_EQ(out2.shape(), want2.shape());
    EXPECT_LT(relativeL2(out2, want2), 1e-6) << "2D order " << order;
    ASSERT_EQ(out3.shape(), (Shape{8, 5, 21}));
    EXPECT_LT(relativeL2(out3, readReferenceImage("cuda_zoom_order" + o + ".f32", {8, 5, 21})),
              1e-6)
        << "order " << order;
  }
}

TEST_P(Resample, MatchesScipyOnAxesOfTwoAndThreeSamples) {
  // Prepare
  const Image in = loadFilterReference("zoom_tiny_in", {1, 2, 3});

  for (int order : {1, 3}) {
    // Run
    const Image out = onHost(backend->resample(in, {1.0, 2.6, 2.6, order}));

    // Verify
    const Image want =
        loadFilterReference("zoom_tiny_o" + std::to_string(order) + "_1x2.6x2.6", {1, 5, 8});
    ASSERT_EQ(out.shape(), want.shape());
    EXPECT_LT(maxAbsDiff(out, want), 1e-5) << "order " << order;
  }
}

TEST_P(Resample, OutputLengthRoundsHalfToEvenLikePython) {
  // Prepare
  const Image in = Image::host({3, 5, 7});

  // Run, Verify
  EXPECT_EQ(onHost(backend->resample(in, {0.5, 0.5, 0.5, 1})).shape(), (Shape{2, 2, 4}));
  EXPECT_EQ(onHost(backend->resample(in, {1.0, 1.0, 1.5, 3})).shape(), (Shape{3, 5, 10}));
  EXPECT_EQ(onHost(backend->resample(in, {1.0, 0.7, 1.0, 3})).shape(), (Shape{3, 4, 7}));
}

TEST_P(Resample, LinearReproducesAnAffineFunctionExactly) {
  // Prepare
  auto f = [](double z, double y, double x) { return 1.5 + 0.25 * z - 0.5 * y + 0.125 * x; };
  const Shape s{5, 8, 13};

  // Run
  const Image out = onHost(backend->resample(sampled(s, f), {1.9, 0.8, 2.3, 1}));

  // Verify
  const Shape o = out.shape();
  ASSERT_EQ(o, (Shape{10, 6, 30}));
  const Image want = sampled(o, [&](double z, double y, double x) {
    return f(z * scaleOf(5, 10), y * scaleOf(8, 6), x * scaleOf(13, 30));
  });
  EXPECT_LT(maxAbsDiff(out, want), 2e-6);
}

// Order 1 along x only puts the first and last output on the end samples and each other on the
// line between its two neighbours.
TEST_P(Resample, LinearAlongOneAxisHitsTheEndsAndInterpolatesBetween) {
  // Prepare
  const Image in = randomImage({3, 10, 12}, 16);
  ResampleParams p;
  p.zoomX = 2.0;
  p.order = 1;

  // Run
  const Image lin = onHost(backend->resample(in, p));

  // Verify
  ASSERT_EQ(lin.shape(), (Shape{3, 10, 24}));
  for (int64_t z = 0; z < 3; ++z)
    for (int64_t y = 0; y < 10; ++y) {
      EXPECT_FLOAT_EQ(lin.at(z, y, 0), in.at(z, y, 0));
      EXPECT_FLOAT_EQ(lin.at(z, y, 23), in.at(z, y, 11));
      const double c = 5.0 * 11.0 / 23.0;
      const int64_t i0 = static_cast<int64_t>(c);
      EXPECT_NEAR(lin.at(z, y, 5),
                  in.at(z, y, i0) * (1 - (c - i0)) + in.at(z, y, i0 + 1) * (c - i0), 1e-6);
    }
}

// Cubic B-spline interpolation reproduces cubics exactly on an infinite grid; the mirror boundary
// perturbs the coefficients by an error decaying as |√3 − 2|^d ≈ 0.27^d with the distance d
// from the edge, so samples 14 or more pixels inside the data must match to float precision.
TEST_P(Resample, CubicReproducesACubicAwayFromTheBoundaries) {
  // Prepare
  auto p = [](double t) { return 0.5 + 0.3 * t - 0.2 * t * t + 0.15 * t * t * t; };
  auto f = [&](double z, double, double x) { return p((z - 20) / 20) + p((x - 24) / 24); };
  const Shape s{41, 2, 49};

  // Run
  const Image out = onHost(backend->resample(sampled(s, f), {1.6, 1.0, 0.7, 3}));

  // Verify
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

TEST_P(Resample, AxesThatKeepTheirLengthAreNotTouched) {
  // Prepare
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  Image in = Image::host({2, 6, 7});
  for (int64_t i = 0; i < in.shape().count(); ++i) in.data()[i] = normal(rng);
  in.at(1, 3, 3) = std::numeric_limits<float>::quiet_NaN();  // would spread if prefiltered
  const Image plain = randomImage({3, 10, 12}, 16);

  // Run
  const Image same = onHost(backend->resample(in, {1.0, 1.0, 1.0, 3}));
  const Image unitZoom = onHost(backend->resample(plain, ResampleParams{}));
  // Zoom only along x: rows without the NaN are interpolated, the others keep their own NaN.
  const Image alongX = onHost(backend->resample(in, {1.0, 1.0, 2.0, 3}));

  // Verify
  ASSERT_EQ(same.shape(), in.shape());
  EXPECT_NE(same.data(), in.data());  // a copy, not the caller's buffer
  for (int64_t i = 0; i < in.shape().count(); ++i)
    if (i != (1 * 6 + 3) * 7 + 3) {
      ASSERT_EQ(same.data()[i], in.data()[i]) << i;
    }
  EXPECT_TRUE(std::isnan(same.at(1, 3, 3)));
  ASSERT_EQ(unitZoom.shape(), plain.shape());
  for (int64_t i = 0; i < plain.shape().count(); ++i)
    ASSERT_EQ(unitZoom.data()[i], plain.data()[i]);
  EXPECT_FALSE(std::isnan(alongX.at(1, 2, 5)));
  EXPECT_FALSE(std::isnan(alongX.at(0, 3, 5)));
}

TEST_P(Resample, SingleSampleAxesReplicateAndSingleOutputsTakeTheFirstSample) {
  // Prepare
  Image in = Image::host({1, 1, 5});
  for (int i = 0; i < 5; ++i) in.data()[i] = float(i * i);

  // Run
  const Image up = onHost(backend->resample(in, {3.0, 2.0, 1.0, 3}));
  const Image one = onHost(backend->resample(in, {1.0, 1.0, 0.2, 1}));

  // Verify
  ASSERT_EQ(up.shape(), (Shape{3, 2, 5}));
  for (int64_t z = 0; z < 3; ++z)
    for (int64_t y = 0; y < 2; ++y)
      for (int64_t x = 0; x < 5; ++x) EXPECT_NEAR(up.at(z, y, x), float(x * x), 1e-5);
  ASSERT_EQ(one.shape(), (Shape{1, 1, 1}));
  EXPECT_EQ(one.at(0, 0, 0), 0.0f);
}

TEST_P(Resample, ScalesTheSpacing) {
  // Prepare
  Image in = Image::host({4, 4, 10});
  in.spacing = {0.3, 0.1, 0.1, true, "um"};

  // Run
  const Image out = onHost(backend->resample(in, {3.0, 1.0, 0.5, 1}));

  // Verify
  EXPECT_DOUBLE_EQ(out.spacing.z, 0.1);
  EXPECT_DOUBLE_EQ(out.spacing.x, 0.2);
  EXPECT_TRUE(out.spacing.known);
}

TEST_P(Resample, AnUploadedInputGivesTheSameResult) {
  // Prepare
  const Image in = loadFilterReference("zoom_in", {6, 9, 11});

  // Run
  const Image out = onHost(backend->resample(backend->upload(in), {1.7, 0.6, 1.3, 3}));

  // Verify
  EXPECT_LT(relativeL2(out, loadFilterReference("zoom_o3_1.7x0.6x1.3", {10, 5, 14})), 1e-6);
}

TEST_P(Resample, RejectsInvalidParametersByName) {
  // Prepare
  const Image in = Image::host({1, 3, 4});
  auto expectInvalid = [&](ResampleParams p, const std::string& word) {
    expectInvalidNaming([&] { backend->resample(in, p); }, word);
  };

  // Run, Verify

  expectInvalid({1.0, 0.0, 1.0, 3}, "zoom on y");
  expectInvalid({-1.0, 1.0, 1.0, 3}, "zoom on z");
  expectInvalid({1.0, 1.0, std::nan(""), 3}, "zoom on x");
  expectInvalid({1.0, 0.1, 1.0, 3}, "output length of 0");
  expectInvalid({1.0, 1.0, 1.0, 2}, "order");
  expectInvalid({1.0, 1.0, 1.0, 0}, "order");
  EXPECT_THROW(backend->resample(Image::host({0, 3, 3}), {}), InvalidArgument);
}

TEST_P(Resample, StopsWhenCancelled) {
  // Prepare
  std::atomic<bool> cancel{true};
  const Image in = Image::host({4, 8, 8});

  // Run, Verify
  EXPECT_THROW(backend->resample(in, {2.0, 2.0, 2.0, 3}, Job(&cancel)), Cancelled);
}

// The CUDA backend against the CPU backend on a fresh random stack, zoomed along every axis.
class ResampleCudaAndCpu : public stacklens::testing::GpuTest {};

TEST_F(ResampleCudaAndCpu, AgreeOnFreshRandomInputs) {
  // Prepare
  const Image in = randomImage({7, 40, 53}, 3);

  for (int order : {1, 3}) {
    const ResampleParams p{2.5, 0.7, 1.3, order};

    // Run
    const Image want = cpu->resample(in, p);
    const Image got = gpu->download(gpu->resample(in, p));

    // Verify
    ASSERT_EQ(got.shape(), want.shape());
    EXPECT_LT(relativeL2(got, want), 1e-5) << "order " << order;
  }
}

}  // namespace
