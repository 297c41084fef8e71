// Outlier removal on every backend against one reference (median_reference.h): closed cases per
// mode, spiky images, NaN, bad input; CUDA against the CPU too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "compute/backend.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"
#include "tests/compute/invalid_argument_check.h"
#include "tests/compute/median_reference.h"
#include "tests/compute/test_values.h"

namespace {

using stacklens::testing::kNaN;
using namespace stacklens::compute;
using stacklens::testing::expectIdentical;
using stacklens::testing::expectInvalidNaming;
using stacklens::testing::expectSameValues;
using stacklens::testing::medianReference;
using stacklens::testing::outlierReference;
using stacklens::testing::randomImage;

// Noise around 10 with one pixel in ten 20 above or below.
Image spikyImage(Shape shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(10.0f, 1.0f);
  std::uniform_int_distribution<int> spike(0, 19);
  Image image = Image::host(shape);
  for (int64_t i = 0; i < shape.count(); ++i) {
    float v = noise(rng);
    const int s = spike(rng);
    if (s == 0) v += 20;
    if (s == 1) v -= 20;
    image.data()[i] = v;
  }
  return image;
}

class Outliers : public stacklens::testing::OnEachBackend {};
STACKLENS_ON_EACH_BACKEND(Outliers);

TEST_P(Outliers, ReplacesOnlyTheChosenDirection) {
  // Prepare
  Image in = Image::host({1, 7, 7});
  std::fill(in.data(), in.data() + 49, 5.0f);
  in.at(0, 2, 2) = 100.0f;
  in.at(0, 4, 5) = -90.0f;  // both deviate by exactly 95
  in.at(0, 6, 0) = 5.5f;    // a small deviation below every threshold used
  Image brightWant = stacklens::testing::copyOf(in);
  brightWant.at(0, 2, 2) = 5.0f;
  Image bothWant = stacklens::testing::copyOf(brightWant);
  bothWant.at(0, 4, 5) = 5.0f;
  Image darkWant = stacklens::testing::copyOf(in);
  darkWant.at(0, 4, 5) = 5.0f;

  // Run
  const Image bright = onHost(backend->removeOutliers(in, {3, 1.0, OutlierMode::Bright}));
  const Image both = onHost(backend->removeOutliers(in, {3, 1.0, OutlierMode::Both}));
  const Image dark = onHost(backend->removeOutliers(in, {3, 1.0, OutlierMode::Dark}));
  const Image wide = onHost(backend->removeOutliers(in, {5, 200.0, OutlierMode::Both}));
  const Image exact = onHost(backend->removeOutliers(in, {3, 95.0, OutlierMode::Both}));

  // Verify
  expectSameValues(bright, brightWant, "bright");
  expectSameValues(both, bothWant, "both");
  expectSameValues(dark, darkWant, "dark");
  // A threshold above every deviation changes nothing; exactly the deviation is not "more than".
  expectSameValues(wide, in, "threshold above every deviation");
  expectSameValues(exact, in, "threshold equal to the deviation");
}

TEST_P(Outliers, MatchesTheReferenceForEveryModeAndSize) {
  unsigned seed = 1;
  for (Shape s : {Shape{1, 1, 1}, Shape{1, 3, 17}, Shape{2, 19, 23}, Shape{1, 9, 130}})
    for (int k : {1, 3, 5, 7, 17})
      for (OutlierMode mode : {OutlierMode::Bright, OutlierMode::Dark, OutlierMode::Both})
        for (double t : {0.0, 3.0}) {
          if ((k == 17 && s.count() > 100) || (t == 0.0 && mode != OutlierMode::Both)) continue;
          // Prepare
          const Image in = spikyImage(s, seed++);
          const OutlierParams p{k, t, mode};

          // Run
          const Image out = onHost(backend->removeOutliers(in, p));

          // Verify
          expectSameValues(out, outlierReference(in, p), "k " + std::to_string(k));
        }
}

// Each pixel that deviates by more than the threshold becomes its window's median, the others
// are kept exactly; some are replaced in every mode.
TEST_P(Outliers, ReplacesOnlyDeviatingPixelsByTheirLocalMedian) {
  // Prepare
  Image in = randomImage({2, 16, 18}, 6);
  in.at(0, 5, 5) = 9.f;
  in.at(1, 7, 3) = -9.f;
  in.at(0, 0, 0) = 5.f;

  for (int size : {3, 5, 7}) {
    const Image med = medianReference(in, size);
    for (OutlierMode mode : {OutlierMode::Bright, OutlierMode::Dark, OutlierMode::Both}) {
      const OutlierParams p{size, 0.3, mode};

      // Run
      const Image got = onHost(backend->removeOutliers(in, p));

      // Verify
      int replaced = 0;
      for (int64_t i = 0; i < in.shape().count(); ++i) {
        const double d = double(in.data()[i]) - med.data()[i];
        const bool out = mode == OutlierMode::Bright ? d > 0.3
                         : mode == OutlierMode::Dark ? -d > 0.3
                                                     : std::abs(d) > 0.3;
        replaced += out;
        ASSERT_EQ(got.data()[i], out ? med.data()[i] : in.data()[i])
            << size << " " << int(mode) << " " << i;
      }
      EXPECT_GT(replaced, 0);
    }
  }
}

TEST_P(Outliers, NanPixelsAndNanMediansKeepTheValue) {
  // Prepare
  Image in = Image::host({1, 5, 5});
  std::fill(in.data(), in.data() + 25, 1.0f);
  in.at(0, 2, 2) = kNaN;
  // Most of the window NaN: the median is NaN, so the finite pixel is kept.
  Image holes = Image::host({1, 3, 3});
  std::fill(holes.data(), holes.data() + 9, kNaN);
  holes.at(0, 1, 1) = 7.0f;

  // Run
  const Image out = onHost(backend->removeOutliers(in, {3, 0.0, OutlierMode::Both}));
  const Image kept = onHost(backend->removeOutliers(holes, {3, 0.0, OutlierMode::Both}));

  // Verify
  EXPECT_TRUE(std::isnan(out.at(0, 2, 2)));
  EXPECT_EQ(out.at(0, 2, 3), 1.0f);
  EXPECT_EQ(kept.at(0, 1, 1), 7.0f);
}

TEST_P(Outliers, AnUploadedInputGivesTheSameResult) {
  // Prepare
  const Image in = spikyImage({1, 12, 9}, 3);
  const OutlierParams p{3, 2.0, OutlierMode::Both};

  // Run
  const Image out = onHost(backend->removeOutliers(backend->upload(in), p));

  // Verify
  expectSameValues(out, outlierReference(in, p), "uploaded");
}

TEST_P(Outliers, RejectsInvalidParametersByName) {
  // Prepare
  const Image in = spikyImage({1, 4, 4}, 2);
  auto expectInvalid = [&](OutlierParams p, const std::string& word) {
    expectInvalidNaming([&] { backend->removeOutliers(in, p); }, word);
  };

  // Run, Verify

  expectInvalid({3, -1.0, OutlierMode::Both}, "threshold");
  expectInvalid({3, std::nan(""), OutlierMode::Both}, "threshold");
  expectInvalid({4, 1.0, OutlierMode::Both}, "size");
  expectInvalid({0, 1.0, OutlierMode::Both}, "size");
  EXPECT_THROW(backend->removeOutliers(Image::host({1, 3, 0}), {}), InvalidArgument);
}

// The CUDA backend against the CPU backend on a fresh random stack with NaN and ties.
class OutliersCudaAndCpu : public stacklens::testing::GpuTest {};

TEST_F(OutliersCudaAndCpu, AgreeBitForBitOnFreshRandomInputs) {
  // Prepare
  Image in = randomImage({3, 130, 140}, 2);
  for (int64_t i = 0; i < in.shape().count(); i += 29) in.data()[i] = kNaN;
  for (int64_t i = 5; i < in.shape().count(); i += 31) in.data()[i] = 7.f;

  for (OutlierMode mode : {OutlierMode::Bright, OutlierMode::Dark, OutlierMode::Both}) {
    const OutlierParams p{3, 0.25, mode};

    // Run
    const Image want = cpu->removeOutliers(in, p);
    const Image got = gpu->download(gpu->removeOutliers(in, p));

    // Verify
    expectIdentical(got, want, "outliers");
  }
}

}  // namespace
