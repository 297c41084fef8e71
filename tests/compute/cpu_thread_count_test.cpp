// The CPU backend's thread pool: results that do not depend on how many threads share the work,
// and progress reported from the calling thread, once per step.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "compute/cpu/operations.h"
#include "tests/compute/filter_reference.h"
#include "tests/compute/image_checks.h"
#include "tests/compute/segment_reference.h"

namespace {

using namespace stacklens::compute;
using stacklens::compute::cpu::ThreadPool;
using stacklens::testing::expectLabels;
using stacklens::testing::expectSameValues;
using stacklens::testing::labelReference;
using stacklens::testing::randomImage;
using stacklens::testing::readReferenceImage;
using stacklens::testing::relativeL2;
using stacklens::testing::tiedImage;

TEST(CpuThreadCount, GaussianBlurDoesNotDependOnIt) {
  // Prepare
  ThreadPool one(1), three(3);
  const Image in = randomImage({2, 37, 29}, 6, -1.f, 1.f);

  for (BlurParams p : {BlurParams{0, 2.0, 1.0, 4.0, false}, BlurParams{1.0, 1.0, 1.0, 4.0, true}}) {
    // Run
    const Image a = cpu::gaussianBlur(in, p, {}, one), b = cpu::gaussianBlur(in, p, {}, three);

    // Verify
    for (int64_t i = 0; i < in.shape().count(); ++i) ASSERT_EQ(a.data()[i], b.data()[i]);
  }
}

TEST(CpuThreadCount, MedianFilterDoesNotDependOnIt) {
  // Prepare
  ThreadPool one(1), three(3);
  const Image in = tiedImage({3, 40, 90}, 8, true);

  for (int k : {3, 5}) {
    // Run
    const Image a = cpu::medianFilter(in, k, {}, three), b = cpu::medianFilter(in, k, {}, one);

    // Verify
    expectSameValues(a, b, "threads");
  }
}

TEST(CpuThreadCount, SegmentMatchesTheReferenceWithEachThreadCount) {
  for (int trial = 0; trial < 12; ++trial) {
    // Prepare: uniform values thresholded at 0.5, a dense random mask.
    const Image im =
        randomImage({1 + trial % 2, 1 + trial * 7 % 41, 1 + trial * 13 % 53}, unsigned(trial));
    SegmentParams p;
    p.absoluteThreshold = 0.5;
    p.connectivity = trial % 2 ? 4 : 8;
    p.minPixels = 1 + trial % 3;

    for (int threads : {1, 3}) {
      // Run
      ThreadPool pool(threads);
      const Segmentation s = cpu::segment(im, p, {}, pool);

      // Verify
      expectLabels(s.labels, labelReference(im, 0.5, p.connectivity, p.minPixels),
                   "trial " + std::to_string(trial) + " threads " + std::to_string(threads));
    }
  }
}

TEST(CpuThreadCount, RichardsonLucyDoesNotDependOnIt) {
  // Prepare
  const Image image = readReferenceImage("analysis/rl_periodic3d_image.f32", {10, 16, 20});
  const Image psf = readReferenceImage("analysis/rl_periodic3d_psf.f32", {5, 5, 3});
  DeconvolveParams p;
  p.iterations = 4;
  p.threeD = true;
  ThreadPool one(1), three(3);

  // Run
  const Image a = cpu::richardsonLucy(image, psf, p, {}, one);
  const Image b = cpu::richardsonLucy(image, psf, p, {}, three);

  // Verify
  EXPECT_LT(relativeL2(a, b), 1e-6);
}

TEST(CpuThreadCount, RichardsonLucyReportsEachIterationOnce) {
  // Prepare
  const Image image = readReferenceImage("analysis/rl_reflect2d_image.f32", {1, 30, 37});
  const Image psf = readReferenceImage("analysis/rl_reflect2d_psf.f32", {1, 9, 9});
  ThreadPool pool(2);
  DeconvolveParams p;
  p.iterations = 6;
  std::vector<double> seen;
  Job job(nullptr, [&](double f) { seen.push_back(f); });

  // Run
  cpu::richardsonLucy(image, psf, p, job, pool);

  // Verify
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
}

TEST(CpuThreadCount, MedianProgressRisesAndComesFromTheCallingThreadOnly) {
  const auto caller = std::this_thread::get_id();
  for (int threads : {1, 3}) {
    // Prepare
    ThreadPool pool(threads);
    std::vector<double> fractions;
    bool otherThread = false;
    Job job(nullptr, [&](double f) {
      if (std::this_thread::get_id() != caller)
        otherThread = true;
      else
        fractions.push_back(f);
    });

    // Run
    cpu::medianFilter(randomImage({2, 300, 20}, 12), 5, job, pool);

    // Verify
    EXPECT_FALSE(otherThread);
    // With one thread every row is the caller's, so there are reports within each slice; with
    // more, the caller may get few rows, but every slice still ends with one.
    EXPECT_GT(fractions.size(), threads == 1 ? 20u : 1u);
    EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
    ASSERT_FALSE(fractions.empty());
    EXPECT_GE(fractions.front(), 0.0);
    EXPECT_EQ(fractions.back(), 1.0);
  }
}

}  // namespace
