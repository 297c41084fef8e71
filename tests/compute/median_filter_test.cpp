// Median filter on every backend against one reference (median_reference.h) and SciPy data: every
// window path, ties, NaN order, bad input, cancellation; CUDA against the CPU too.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "tests/compute/filter_reference.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"
#include "tests/compute/invalid_argument_check.h"
#include "tests/compute/median_reference.h"
#include "tests/compute/test_values.h"

namespace {

using stacklens::testing::kInf;
using stacklens::testing::kNaN;
using namespace stacklens::compute;
using stacklens::testing::expectIdentical;
using stacklens::testing::expectInvalidNaming;
using stacklens::testing::expectSameValues;
using stacklens::testing::medianReference;
using stacklens::testing::randomImage;
using stacklens::testing::readReference;
using stacklens::testing::readReferenceImage;
using stacklens::testing::tiedImage;

class MedianFilter : public stacklens::testing::OnEachBackend {};
STACKLENS_ON_EACH_BACKEND(MedianFilter);

TEST_P(MedianFilter, MatchesTheReferenceOnManyShapesAndSizes) {
  const std::vector<Shape> shapes{{1, 1, 1},   {1, 1, 9},   {1, 9, 1},   {1, 2, 3},  {2, 7, 8},
                                  {1, 13, 10}, {1, 4, 150}, {1, 21, 70}, {1, 6, 413}};
  unsigned seed = 1;
  for (const Shape& s : shapes)
    for (int k : {1, 3, 5, 7, 9, 15, 17}) {
      if (k >= 15 && s.count() > 600) continue;  // the reference is slow there; small shapes do
      // Prepare
      const Image in = tiedImage(s, seed++);

      // Run
      const Image out = onHost(backend->medianFilter(in, k));

      // Verify
      expectSameValues(
          out, medianReference(in, k),
          "shape " + std::to_string(s.y) + "x" + std::to_string(s.x) + " k " + std::to_string(k));
    }
}

TEST_P(MedianFilter, MatchesTheReferenceWithNanAndInfinities) {
  unsigned seed = 100;
  for (int k : {3, 5, 7, 19}) {
    // Prepare
    const Image in = tiedImage(k < 19 ? Shape{2, 17, 75} : Shape{1, 9, 20}, seed++, true);

    // Run
    const Image out = onHost(backend->medianFilter(in, k));

    // Verify
    expectSameValues(out, medianReference(in, k), "specials k " + std::to_string(k));
  }
}

// Ties, NaN regions and ±0 through every window path: even widths take CUDA's
// two-columns-per-thread 3×3 kernel, odd ones the one-column kernel; windows far larger than the
// image reflect more than once. Bit for bit, NaN as the quiet NaN.
TEST_P(MedianFilter, EqualsTheReferenceBitForBitOnEveryWindowPath) {
  // Prepare
  Image in = randomImage({2, 21, 35}, 4);
  for (int64_t i = 0; i < in.shape().count(); i += 3) in.data()[i] = 0.5f;
  for (int64_t i = 1; i < in.shape().count(); i += 11) in.data()[i] = kNaN;
  for (int64_t i = 2; i < in.shape().count(); i += 13) in.data()[i] = (i % 2) ? -0.f : 0.f;
  for (int64_t y = 5; y < 12; ++y)
    for (int64_t x = 20; x < 27; ++x) in.at(1, y, x) = kNaN;  // a region where NaN wins
  const Image tiny = randomImage({1, 4, 3}, 5, -2.f, 2.f);
  Image even = randomImage({2, 21, 36}, 7);
  for (int64_t i = 0; i < even.shape().count(); i += 7) even.data()[i] = kNaN;
  for (int64_t i = 3; i < even.shape().count(); i += 5) even.data()[i] = (i % 2) ? -0.f : 0.f;
  const Image narrow = randomImage({1, 5, 2}, 8, -2.f, 2.f);

  for (const Image* im : std::vector<const Image*>{&in, &tiny, &even, &narrow})
    for (int size : {1, 3, 5, 7, 9, 11}) {
      // Run
      const Image out = onHost(backend->medianFilter(*im, size));

      // Verify
      expectIdentical(out, medianReference(*im, size), "size " + std::to_string(size));
    }
}

TEST_P(MedianFilter, MatchesScipyMedianFilterReflect) {
  // Prepare
  const Image in = loadFilterReference("median_in", {2, 11, 14});
  const Shape s{2, 11, 13};
  const Image other = readReferenceImage("cuda_median_in.f32", s);

  for (int k : {3, 5, 7, 17}) {
    // Run
    const Image out = onHost(backend->medianFilter(in, k));

    // Verify
    expectSameValues(out, loadFilterReference("median_k" + std::to_string(k), {2, 11, 14}),
                     "scipy k " + std::to_string(k));
  }
  for (int k : {3, 5, 7}) {
    // Run
    const Image out = onHost(backend->medianFilter(other, k));

    // Verify
    const std::vector<float> want =
        readReference<float>("cuda_median" + std::to_string(k) + ".f32", size_t(s.count()));
    for (int64_t i = 0; i < s.count(); ++i)
      ASSERT_EQ(out.data()[i], want[i]) << "size " << k << " index " << i;
  }
}

TEST_P(MedianFilter, NanRanksAboveInfinity) {
  // Prepare: the 3×3 window of the centre pixel is the whole image, 1..5 and four or five NaN.
  Image in = Image::host({1, 3, 3});
  const float four[9] = {1, kNaN, 2, kNaN, 3, kNaN, 4, kNaN, 5};
  std::copy(four, four + 9, in.data());
  auto centre = [&] { return onHost(backend->medianFilter(in, 3)).at(0, 1, 1); };

  // Run, Verify
  EXPECT_EQ(centre(), 5.0f);
  in.at(0, 0, 0) = kNaN;
  EXPECT_TRUE(std::isnan(centre()));
  in.at(0, 0, 0) = kInf;  // +Inf ranks below NaN: the fifth of Inf,2,3,4,5,NaN×4 is Inf
  EXPECT_EQ(centre(), kInf);
  // A NaN with the sign bit set ranks as every other NaN, above +Inf, and comes out as NaN.
  for (int i = 1; i < 9; i += 2) in.data()[i] = std::copysign(kNaN, -1.0f);
  in.at(0, 0, 0) = 1.0f;
  EXPECT_EQ(centre(), 5.0f);
  in.at(0, 0, 0) = kNaN;
  EXPECT_TRUE(std::isnan(centre()));
}

TEST_P(MedianFilter, SizeOneIsTheIdentity) {
  // Prepare
  const Image in = tiedImage({2, 5, 6}, 7, true);

  // Run
  const Image out = onHost(backend->medianFilter(in, 1));

  // Verify
  expectSameValues(out, in, "k 1");
}

TEST_P(MedianFilter, AnUploadedInputGivesTheSameResult) {
  // Prepare
  const Image in = tiedImage({1, 9, 12}, 11);

  // Run
  const Image out = onHost(backend->medianFilter(backend->upload(in), 5));

  // Verify
  expectSameValues(out, medianReference(in, 5), "uploaded");
}

TEST_P(MedianFilter, RejectsEvenAndNonPositiveSizesByName) {
  // Prepare
  const Image in = tiedImage({1, 5, 5}, 9);

  // Run, Verify
  for (int k : {0, -1, -3, 2, 4})
    expectInvalidNaming([&] { backend->medianFilter(in, k); }, "median size");
  EXPECT_THROW(backend->medianFilter(Image::host({1, 0, 3}), 3), InvalidArgument);
}

TEST_P(MedianFilter, StopsWhenCancelled) {
  // Prepare
  std::atomic<bool> cancel{true};
  const Image in = tiedImage({2, 8, 8}, 10);

  // Run, Verify
  EXPECT_THROW(backend->medianFilter(in, 3, Job(&cancel)), Cancelled);
}

// The CUDA backend against the CPU backend on a fresh random stack with NaN and ties.
class MedianFilterCudaAndCpu : public stacklens::testing::GpuTest {};

TEST_F(MedianFilterCudaAndCpu, AgreeBitForBitOnFreshRandomInputs) {
  // Prepare
  Image in = randomImage({3, 130, 140}, 2);
  for (int64_t i = 0; i < in.shape().count(); i += 29) in.data()[i] = kNaN;
  for (int64_t i = 5; i < in.shape().count(); i += 31) in.data()[i] = 7.f;

  for (int size : {1, 3, 5, 7, 9}) {
    // Run
    const Image want = cpu->medianFilter(in, size);
    const Image got = gpu->download(gpu->medianFilter(in, size));

    // Verify
    expectIdentical(got, want, "median " + std::to_string(size));
  }
}

}  // namespace
