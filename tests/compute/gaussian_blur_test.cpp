// Gaussian blur on every backend against one reference (blur_reference.h), closed forms and SciPy
// data: kernels, edges, NaN and infinities, bad input, cancellation; CUDA against the CPU too.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "compute/backend.h"
#include "tests/compute/blur_reference.h"
#include "tests/compute/filter_reference.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"
#include "tests/compute/invalid_argument_check.h"
#include "tests/compute/test_values.h"

namespace {

using stacklens::testing::kInf;
using stacklens::testing::kNaN;
using namespace stacklens::compute;
using stacklens::testing::blurReference;
using stacklens::testing::expectClose;
using stacklens::testing::expectInvalidNaming;
using stacklens::testing::gaussianKernel;
using stacklens::testing::randomImage;
using stacklens::testing::readReferenceImage;
using stacklens::testing::relativeL2;

class GaussianBlur : public stacklens::testing::OnEachBackend {};
STACKLENS_ON_EACH_BACKEND(GaussianBlur);

TEST_P(GaussianBlur, DeltaBlursToTheSampledNormalisedGaussian) {
  // Prepare
  Image delta = Image::host({1, 31, 33});
  delta.at(0, 15, 16) = 1.0f;
  BlurParams p;
  p.sigmaY = 1.3;
  p.sigmaX = 2.1;  // radii 5 and 8: the kernel stays inside the image
  const auto wy = gaussianKernel(1.3, 4.0), wx = gaussianKernel(2.1, 4.0);
  ASSERT_EQ(wy.size(), 11u);
  ASSERT_EQ(wx.size(), 17u);

  // Run
  const Image out = onHost(backend->gaussianBlur(delta, p));

  // Verify
  for (int64_t y = 0; y < 31; ++y)
    for (int64_t x = 0; x < 33; ++x) {
      const int64_t dy = y - 15 + 5, dx = x - 16 + 8;
      const double want = (dy >= 0 && dy < 11 && dx >= 0 && dx < 17) ? wy[dy] * wx[dx] : 0.0;
      ASSERT_NEAR(out.at(0, y, x), want, 1e-7) << y << "," << x;
    }
}

TEST_P(GaussianBlur, Delta3DBlursToTheProductOfThreeKernels) {
  // Prepare
  Image delta = Image::host({15, 13, 12});
  delta.at(7, 6, 5) = 1.0f;
  const BlurParams p{1.0, 0.8, 1.1, 3.0, false};  // radii 3, 2, 3
  const auto wz = gaussianKernel(1.0, 3.0), wy = gaussianKernel(0.8, 3.0),
             wx = gaussianKernel(1.1, 3.0);

  // Run
  const Image out = onHost(backend->gaussianBlur(delta, p));

  // Verify
  for (int64_t z = 0; z < 15; ++z)
    for (int64_t y = 0; y < 13; ++y)
      for (int64_t x = 0; x < 12; ++x) {
        const int64_t a = z - 7 + 3, b = y - 6 + 2, c = x - 5 + 3;
        const bool inside = a >= 0 && a < 7 && b >= 0 && b < 5 && c >= 0 && c < 7;
        ASSERT_NEAR(out.at(z, y, x), inside ? wz[a] * wy[b] * wx[c] : 0.0, 1e-7);
      }
}

TEST_P(GaussianBlur, ConstantStaysConstantAtEveryBorder) {
  // Prepare
  Image flat = Image::host({2, 9, 7});
  for (int64_t i = 0; i < flat.shape().count(); ++i) flat.data()[i] = 3.25f;

  for (BlurParams p : {BlurParams{0, 1.0, 1.0, 4.0, false}, BlurParams{2.0, 5.0, 7.0, 4.0, false},
                       BlurParams{0, 0.5, 3.0, 4.0, true}}) {
    // Run
    const Image out = onHost(backend->gaussianBlur(flat, p));

    // Verify
    for (int64_t i = 0; i < flat.shape().count(); ++i)
      ASSERT_NEAR(out.data()[i], 3.25f, 3.25e-6) << i;
  }
}

TEST_P(GaussianBlur, MatchesTheReferenceWithKernelsWiderThanTheImage) {
  // Prepare
  const Image in = randomImage({3, 7, 5}, 1, -2.f, 2.f);
  const Image row = randomImage({1, 1, 9}, 2), column = randomImage({1, 9, 1}, 3);
  const Image pixel = randomImage({1, 1, 1}, 4);
  const BlurParams line{0, 2.0, 2.0, 4.0, false};

  for (BlurParams p : {BlurParams{0, 2.0, 3.0, 4.0, false}, BlurParams{1.5, 0.6, 2.5, 4.0, false},
                       BlurParams{0, 0.3, 0.4, 1.0, false}}) {
    // Run
    const Image out = onHost(backend->gaussianBlur(in, p));

    // Verify
    expectClose(out, blurReference(in, p), 2e-6);
  }

  // Run
  const Image rowOut = onHost(backend->gaussianBlur(row, line));
  const Image columnOut = onHost(backend->gaussianBlur(column, line));
  const Image pixelOut = onHost(backend->gaussianBlur(pixel, line));

  // Verify
  expectClose(rowOut, blurReference(row, line), 2e-6, "row");
  expectClose(columnOut, blurReference(column, line), 2e-6, "column");
  expectClose(pixelOut, pixel, 1e-6, "pixel");
}

// 1500 columns span two of CUDA's row tiles; sigma z > 0 takes the z pass; the NaN-aware mode
// normalises by the weights of the pixels that are not NaN.
TEST_P(GaussianBlur, MatchesTheReferenceAcrossRowTilesAndInNanAwareMode) {
  // Prepare
  const Image wide = randomImage({3, 9, 1500}, 2, -1.f, 1.f);
  const BlurParams p{0.8, 1.3, 2.7, 4.0, false};
  Image holes = randomImage({1, 17, 19}, 3);
  for (int64_t i = 0; i < holes.shape().count(); i += 7) holes.data()[i] = kNaN;
  const BlurParams q{0.0, 1.5, 1.0, 3.0, true};

  // Run
  const Image blurred = onHost(backend->gaussianBlur(wide, p));
  const Image filled = onHost(backend->gaussianBlur(holes, q));

  // Verify
  EXPECT_LT(relativeL2(blurred, blurReference(wide, p)), 1e-6);
  const Image want = blurReference(holes, q);
  for (int64_t i = 0; i < holes.shape().count(); ++i) {
    if (std::isnan(want.data()[i])) {
      EXPECT_TRUE(std::isnan(filled.data()[i])) << i;
    } else {
      EXPECT_NEAR(filled.data()[i], want.data()[i], 1e-5) << i;
    }
  }
}

TEST_P(GaussianBlur, MatchesScipyGaussianFilterReflect) {
  // Prepare
  const Image in = loadFilterReference("blur_in", {3, 13, 17});
  const Image small = loadFilterReference("blur_small_in", {1, 5, 6});
  const Image stack = readReferenceImage("cuda_blur_in.f32", {3, 20, 17});
  const Image tiny = readReferenceImage("cuda_blur_small_in.f32", {2, 6, 5});

  // Run
  const Image twoD = onHost(backend->gaussianBlur(in, {0, 1.5, 2.0, 4.0, false}));
  const Image threeD = onHost(backend->gaussianBlur(in, {1.0, 1.5, 0.7, 3.0, false}));
  const Image wideKernel = onHost(backend->gaussianBlur(small, {0, 4.0, 4.0, 4.0, false}));
  const Image perSlice = onHost(backend->gaussianBlur(stack, {0.0, 2.0, 1.5, 4.0, false}));
  // Radii (12 and 10) larger than the axes: the reflection must repeat like SciPy's.
  const Image repeated = onHost(backend->gaussianBlur(tiny, {1.0, 3.0, 2.5, 4.0, false}));

  // Verify
  expectClose(twoD, loadFilterReference("blur2d_s1.5x2.0_t4", {3, 13, 17}), 2e-6, "2D");
  expectClose(threeD, loadFilterReference("blur3d_s1.0x1.5x0.7_t3", {3, 13, 17}), 2e-6, "3D");
  expectClose(wideKernel, loadFilterReference("blur_small_s4_t4", {1, 5, 6}), 2e-6, "small");
  ASSERT_EQ(perSlice.shape(), stack.shape());
  EXPECT_LT(relativeL2(perSlice, readReferenceImage("cuda_blur_2d.f32", {3, 20, 17})), 1e-6);
  EXPECT_LT(relativeL2(repeated, readReferenceImage("cuda_blur_small_3d.f32", {2, 6, 5})), 1e-6);
}

TEST_P(GaussianBlur, NanAwareMatchesScipyNormalisedConvolution) {
  // Prepare
  const Image in = loadFilterReference("blur_nan_in", {1, 13, 17});

  // Run
  const Image out = onHost(backend->gaussianBlur(in, {0, 1.2, 1.2, 4.0, true}));

  // Verify
  expectClose(out, loadFilterReference("blur_nanaware_s1.2_t4", {1, 13, 17}), 2e-6);
}

TEST_P(GaussianBlur, NanSpreadsOverTheKernelFootprintWithoutNanAware) {
  // Prepare
  Image in = randomImage({1, 20, 20}, 5);
  in.at(0, 10, 10) = kNaN;

  // Run
  const Image out = onHost(backend->gaussianBlur(in, {0, 1.0, 1.0, 2.0, false}));  // radius 2

  // Verify
  for (int64_t y = 0; y < 20; ++y)
    for (int64_t x = 0; x < 20; ++x) {
      const bool near = std::abs(y - 10) <= 2 && std::abs(x - 10) <= 2;
      EXPECT_EQ(std::isnan(out.at(0, y, x)), near) << y << "," << x;
    }
}

TEST_P(GaussianBlur, NanAwareKeepsNanAndIgnoresItElsewhere) {
  // Prepare
  Image in = Image::host({1, 12, 12});
  for (int64_t i = 0; i < in.shape().count(); ++i) in.data()[i] = -2.0f;
  in.at(0, 0, 0) = kNaN;
  in.at(0, 5, 5) = kNaN;
  in.at(0, 5, 6) = kNaN;

  // Run
  const Image out = onHost(backend->gaussianBlur(in, {0, 1.5, 1.5, 4.0, true}));

  // Verify
  for (int64_t i = 0; i < in.shape().count(); ++i) {
    if (std::isnan(in.data()[i]))
      EXPECT_TRUE(std::isnan(out.data()[i])) << i;
    else
      EXPECT_NEAR(out.data()[i], -2.0f, 1e-6) << i;
  }
}

TEST_P(GaussianBlur, InfinitySpreadsAsInScipy) {
  // Prepare
  Image in = Image::host({1, 9, 9});
  in.at(0, 4, 4) = kInf;

  // Run
  const Image out = onHost(backend->gaussianBlur(in, {0, 1.0, 1.0, 1.0, false}));  // radius 1

  // Verify
  EXPECT_EQ(out.at(0, 4, 4), kInf);
  EXPECT_EQ(out.at(0, 3, 5), kInf);
  EXPECT_EQ(out.at(0, 4, 6), 0.0f);
}

TEST_P(GaussianBlur, KeepsTheSpacingAndTakesAnUploadedInput) {
  // Prepare
  Image in = randomImage({1, 16, 16}, 9);
  in.spacing = {2.0, 0.5, 0.25, true, "um"};
  const BlurParams p{0, 1.0, 1.0, 4.0, false};

  // Run
  const Image out = onHost(backend->gaussianBlur(backend->upload(in), p));

  // Verify
  expectClose(out, blurReference(in, p), 2e-6);
  EXPECT_EQ(out.spacing.x, 0.25);
  EXPECT_TRUE(out.spacing.known);
}

TEST_P(GaussianBlur, RejectsInvalidParametersByName) {
  // Prepare
  const Image in = randomImage({1, 4, 4}, 7);
  auto expectInvalid = [&](const Image& image, BlurParams p, const std::string& word) {
    expectInvalidNaming([&] { backend->gaussianBlur(image, p); }, word);
  };

  // Run, Verify

  expectInvalid(in, {0, 0.0, 1.0, 4.0, false}, "sigma");
  expectInvalid(in, {0, 1.0, -1.0, 4.0, false}, "sigma");
  expectInvalid(in, {-0.5, 1.0, 1.0, 4.0, false}, "sigma on z");
  expectInvalid(in, {0, std::nan(""), 1.0, 4.0, false}, "sigma");
  expectInvalid(in, {0, 1.0, 1.0, 0.0, false}, "truncate");
  expectInvalid(in, {0, 1.0, 1.0, -2.0, false}, "truncate");
  expectInvalid(in, {0, 1.0e12, 1.0, 4.0, false}, "radius");
  expectInvalid(Image::host({1, 0, 0}), BlurParams{}, "empty");
  EXPECT_THROW(backend->gaussianBlur(Image::host({1, 0, 5}), {}), InvalidArgument);
  EXPECT_THROW(backend->gaussianBlur(Image(), {}), InvalidArgument);
}

TEST_P(GaussianBlur, StopsWhenCancelled) {
  // Prepare
  std::atomic<bool> cancel{true};
  const Image in = randomImage({2, 8, 8}, 8);

  // Run, Verify
  EXPECT_THROW(backend->gaussianBlur(in, {}, Job(&cancel)), Cancelled);
}

// The CUDA backend against the CPU backend on fresh random inputs, through each of CUDA's paths.
class GaussianBlurCudaAndCpu : public stacklens::testing::GpuTest {};

TEST_F(GaussianBlurCudaAndCpu, AgreeOnFreshRandomInputs) {
  for (auto [shape, p] : std::vector<std::pair<Shape, BlurParams>>{
           {{2, 301, 257}, BlurParams{0.0, 2.5, 1.7, 4.0, false}},
           {{9, 64, 70}, BlurParams{1.2, 3.0, 3.0, 2.0, false}},   // fused tiles of 48 rows
           {{1, 100, 90}, BlurParams{0.0, 3.0, 3.0, 4.0, false}},  // of 32 rows (radius 12)
           {{1, 100, 90}, BlurParams{0.0, 9.0, 9.0, 4.0, true}}}) {
    // Prepare
    Image in = randomImage(shape, 1, -1.f, 1.f);
    if (p.nanAware)
      for (int64_t i = 0; i < shape.count(); i += 17) in.data()[i] = kNaN;

    // Run
    const Image want = cpu->gaussianBlur(in, p);
    const Image got = gpu->download(gpu->gaussianBlur(in, p));

    // Verify
    double num = 0, den = 0;
    for (int64_t i = 0; i < shape.count(); ++i) {
      if (std::isnan(want.data()[i])) {
        ASSERT_TRUE(std::isnan(got.data()[i])) << i;
        continue;
      }
      const double d = double(got.data()[i]) - want.data()[i];
      num += d * d;
      den += double(want.data()[i]) * want.data()[i];
    }
    EXPECT_LT(std::sqrt(num / den), 1e-5);
  }
}

// Equal radii up to 16 on both axes take CUDA's fused kernel, which sums in the separable passes'
// order: x then y, taps in order. So blurring along x, then along y, gives the same floats, bit
// for bit, on one device in one process. (The CPU backend sums in another order.) The shapes
// have columns not a multiple of four, several tiles each way, and rows fewer than the radius.
TEST_F(GaussianBlurCudaAndCpu, CudaBothAxesAtOnceEqualOneAxisAfterTheOther) {
  for (const Shape shape : {Shape{2, 75, 133}, Shape{1, 130, 256}, Shape{1, 3, 5}}) {
    const Image in = randomImage(shape, 7, -1.f, 1.f);
    for (int radius = 1; radius <= 16; ++radius) {
      // Prepare: sigmas truncated at 4 to the same radius on both axes, different weights; a
      // sigma of 0.1 is a radius of 0, the one tap 1.0, so it leaves its axis as it was.
      const double sx = radius / 4.0, sy = radius / 4.0 + 0.05, none = 0.1;

      // Run
      const Image both = gpu->download(gpu->gaussianBlur(in, BlurParams{0, sy, sx, 4.0, false}));
      const Image alongX =
          gpu->download(gpu->gaussianBlur(in, BlurParams{0, none, sx, 4.0, false}));
      const Image thenY =
          gpu->download(gpu->gaussianBlur(alongX, BlurParams{0, sy, none, 4.0, false}));

      // Verify
      int64_t differ = 0;
      for (int64_t i = 0; i < shape.count(); ++i) differ += both.data()[i] != thenY.data()[i];
      EXPECT_EQ(differ, 0) << "radius " << radius << ", shape " << shape.y << " x " << shape.x;
    }
  }
}

}  // namespace
