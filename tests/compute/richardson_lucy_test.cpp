// Richardson–Lucy: float64 NumPy references, boundary modes, TV, acceleration, errors.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "compute/cpu/operations.h"
#include "tests/compute/image_checks.h"

namespace {

using namespace stacklens::compute;
using stacklens::testing::relativeL2;

const std::string kData = std::string(STACKLENS_TEST_DATA) + "/analysis/";

Image readImage(const std::string& path, Shape s) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  Image im = Image::host(s);
  in.read(reinterpret_cast<char*>(im.data()), static_cast<std::streamsize>(im.bytes()));
  EXPECT_EQ(in.gcount(), static_cast<std::streamsize>(im.bytes())) << path;
  return im;
}

// Circular convolution written out directly, for making blurred test scenes.
Image blurPeriodic(const Image& im, const Image& psf) {
  const Shape s = im.shape(), k = psf.shape();
  Image out = Image::host(s);
  for (int64_t y = 0; y < s.y; ++y)
    for (int64_t x = 0; x < s.x; ++x) {
      double sum = 0;
      for (int64_t b = 0; b < k.y; ++b)
        for (int64_t c = 0; c < k.x; ++c) {
          const int64_t yy = ((y - (b - k.y / 2)) % s.y + s.y) % s.y;
          const int64_t xx = ((x - (c - k.x / 2)) % s.x + s.x) % s.x;
          sum += static_cast<double>(psf.at(0, b, c)) * im.at(0, yy, xx);
        }
      out.at(0, y, x) = static_cast<float>(sum);
    }
  return out;
}

TEST(RichardsonLucy, MatchesFloat64NumpyReference) {
  std::ifstream cases(kData + "rl_cases.txt");
  ASSERT_TRUE(cases);
  std::string line;
  int n = 0;
  cpu::ThreadPool pool(2);
  while (std::getline(cases, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    std::string name, boundary;
    int threeD, iterations;
    Shape is, ps;
    f >> name >> boundary >> threeD >> iterations >> is.z >> is.y >> is.x >> ps.z >> ps.y >> ps.x;
    ASSERT_TRUE(f) << line;
    Image image = readImage(kData + "rl_" + name + "_image.f32", is);
    Image psf = readImage(kData + "rl_" + name + "_psf.f32", ps);
    Image want = readImage(kData + "rl_" + name + "_expected.f32", is);
    DeconvolveParams p;
    p.iterations = iterations;
    p.threeD = threeD != 0;
    p.boundary = boundary == "periodic" ? Boundary::Periodic
                 : boundary == "zero"   ? Boundary::Zero
                                        : Boundary::Reflect;
    Image got = cpu::richardsonLucy(image, psf, p, {}, pool);
    EXPECT_LT(relativeL2(got, want), 1e-4) << name;
    // Guard against a reference that would pass anything: the input is far from the answer.
    EXPECT_GT(relativeL2(image, want), 1e-2) << name;
    ++n;
  }
  EXPECT_EQ(n, 5);
}

TEST(RichardsonLucy, TwoDModeUsesTheCentreSliceOfA3dPsf) {
  Image image = readImage(kData + "rl_reflect2d_image.f32", {1, 30, 37});
  Image psf2 = readImage(kData + "rl_reflect2d_psf.f32", {1, 9, 9});
  Image psf3 = Image::host({3, 9, 9});
  for (int64_t i = 0; i < 81; ++i) {
    psf3.data()[i] = (i % 9 == 0) ? 1.f : 0.f;   // slices 0 and 2 are something else entirely
    psf3.data()[81 + i] = psf2.data()[i] * 3.f;  // scale does not matter: normalised
    psf3.data()[162 + i] = (i / 9 == 4) ? 1.f : 0.f;
  }
  cpu::ThreadPool pool(2);
  DeconvolveParams p;
  p.iterations = 5;
  Image a = cpu::richardsonLucy(image, psf2, p, {}, pool);
  Image b = cpu::richardsonLucy(image, psf3, p, {}, pool);
  EXPECT_LT(relativeL2(b, a), 1e-6);
}

TEST(RichardsonLucy, ConstantImageStaysConstantWithReflectAndPeriodic) {
  Image image = Image::host({2, 23, 31});
  for (int64_t i = 0; i < image.shape().count(); ++i) image.data()[i] = 2.5f;
  Image psf = gaussianPsf(0, 2.0, 1.5);
  cpu::ThreadPool pool(2);
  for (Boundary b : {Boundary::Reflect, Boundary::Periodic}) {
    DeconvolveParams p;
    p.iterations = 7;
    p.boundary = b;
    Image got = cpu::richardsonLucy(image, psf, p, {}, pool);
    for (int64_t i = 0; i < got.shape().count(); ++i) ASSERT_NEAR(got.data()[i], 2.5f, 1e-4) << i;
  }
  // With zero padding the edges lose light to the zero region: no longer constant.
  DeconvolveParams p;
  p.boundary = Boundary::Zero;
  p.iterations = 7;
  Image got = cpu::richardsonLucy(image, psf, p, {}, pool);
  EXPECT_GT(std::abs(got.at(0, 0, 0) - 2.5f), 1e-2);
}

TEST(RichardsonLucy, NanPixelsAreRestoredAndDoNotSpread) {
  Image image = readImage(kData + "rl_reflect2d_image.f32", {1, 30, 37});
  Image psf = readImage(kData + "rl_reflect2d_psf.f32", {1, 9, 9});
  image.at(0, 10, 10) = std::numeric_limits<float>::quiet_NaN();
  image.at(0, 0, 36) = std::numeric_limits<float>::infinity();
  cpu::ThreadPool pool(2);
  DeconvolveParams p;
  p.iterations = 5;
  Image got = cpu::richardsonLucy(image, psf, p, {}, pool);
  EXPECT_TRUE(std::isnan(got.at(0, 10, 10)));
  EXPECT_EQ(got.at(0, 0, 36), std::numeric_limits<float>::infinity());
  int64_t finite = 0;
  for (int64_t i = 0; i < got.shape().count(); ++i) finite += std::isfinite(got.data()[i]);
  EXPECT_EQ(finite, got.shape().count() - 2);
}

TEST(RichardsonLucy, TvWithZeroLambdaEqualsPlainAndPositiveLambdaSmooths) {
  Image truth = Image::host({1, 48, 48});
  for (int64_t y = 0; y < 48; ++y)
    for (int64_t x = 0; x < 48; ++x)
      truth.at(0, y, x) = 1.f + ((x / 12 + y / 12) % 2) * 4.f + 0.3f * ((x * 7 + y * 13) % 5);
  Image psf = gaussianPsf(0, 1.5, 1.5);
  Image blurred = blurPeriodic(truth, psf);
  cpu::ThreadPool pool(2);
  DeconvolveParams p;
  p.iterations = 15;
  p.boundary = Boundary::Periodic;
  Image plain = cpu::richardsonLucy(blurred, psf, p, {}, pool);
  p.tvLambda = 0.0;
  Image tv0 = cpu::richardsonLucy(blurred, psf, p, {}, pool);
  EXPECT_EQ(relativeL2(tv0, plain), 0.0);
  p.tvLambda = 0.02;
  Image tv = cpu::richardsonLucy(blurred, psf, p, {}, pool);
  auto totalVariation = [](const Image& im) {
    double tv = 0;
    for (int64_t y = 0; y + 1 < im.shape().y; ++y)
      for (int64_t x = 0; x + 1 < im.shape().x; ++x)
        tv += std::hypot(im.at(0, y, x + 1) - im.at(0, y, x), im.at(0, y + 1, x) - im.at(0, y, x));
    return tv;
  };
  EXPECT_LT(totalVariation(tv), 0.97 * totalVariation(plain));
  EXPECT_LT(relativeL2(tv, plain), 0.1);  // regularised, not a different answer
}

TEST(RichardsonLucy, AccelerationConvergesInFewerIterationsOnABlurredPoint) {
  Image truth = Image::host({1, 64, 64});
  for (int64_t i = 0; i < truth.shape().count(); ++i) truth.data()[i] = 0.01f;
  truth.at(0, 32, 30) = 50.f;
  Image psf = gaussianPsf(0, 2.5, 2.5);
  Image blurred = blurPeriodic(truth, psf);
  cpu::ThreadPool pool(2);
  auto errorAfter = [&](int iterations, bool accelerate) {
    DeconvolveParams p;
    p.iterations = iterations;
    p.accelerate = accelerate;
    p.boundary = Boundary::Periodic;
    return relativeL2(cpu::richardsonLucy(blurred, psf, p, {}, pool), truth);
  };
  const double plain10 = errorAfter(10, false), plain40 = errorAfter(40, false);
  const double fast10 = errorAfter(10, true), fast20 = errorAfter(20, true);
  EXPECT_LT(fast10, plain10);
  EXPECT_LT(fast20, plain40);  // half the iterations, at least as close
  EXPECT_LT(plain40, plain10);
}

TEST(RichardsonLucy, ThreadCountsAgree) {
  Image image = readImage(kData + "rl_periodic3d_image.f32", {10, 16, 20});
  Image psf = readImage(kData + "rl_periodic3d_psf.f32", {5, 5, 3});
  DeconvolveParams p;
  p.iterations = 4;
  p.threeD = true;
  cpu::ThreadPool one(1), three(3);
  Image a = cpu::richardsonLucy(image, psf, p, {}, one);
  Image b = cpu::richardsonLucy(image, psf, p, {}, three);
  EXPECT_LT(relativeL2(a, b), 1e-6);
}

TEST(RichardsonLucy, ReportsProgressAndHonoursCancel) {
  Image image = readImage(kData + "rl_reflect2d_image.f32", {1, 30, 37});
  Image psf = readImage(kData + "rl_reflect2d_psf.f32", {1, 9, 9});
  cpu::ThreadPool pool(2);
  DeconvolveParams p;
  p.iterations = 6;
  std::vector<double> seen;
  std::atomic<bool> cancel{false};
  Job job(&cancel, [&](double f) { seen.push_back(f); });
  cpu::richardsonLucy(image, psf, p, job, pool);
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
  Job cancelling(&cancel, [&](double) { cancel = true; });
  EXPECT_THROW(cpu::richardsonLucy(image, psf, p, cancelling, pool), Cancelled);
}

TEST(RichardsonLucy, RejectsInvalidInput) {
  cpu::ThreadPool pool(1);
  Image image = Image::host({1, 8, 8});
  for (int64_t i = 0; i < 64; ++i) image.data()[i] = 1.f;
  Image psf = gaussianPsf(0, 1.0, 1.0);  // 9×9
  DeconvolveParams p;
  p.iterations = 0;
  EXPECT_THROW(cpu::richardsonLucy(image, psf, p, {}, pool), InvalidArgument);
  p.iterations = 2;
  EXPECT_THROW(cpu::richardsonLucy(Image::host({1, 0, 8}), psf, p, {}, pool), InvalidArgument);
  Image nan = cloneHost(image);
  for (int64_t i = 0; i < 64; ++i) nan.data()[i] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(cpu::richardsonLucy(nan, psf, p, {}, pool), InvalidArgument);
  Image badPsf = cloneHost(psf);
  badPsf.data()[3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(cpu::richardsonLucy(image, badPsf, p, {}, pool), InvalidArgument);
  Image zeroPsf = Image::host({1, 3, 3});
  EXPECT_THROW(cpu::richardsonLucy(image, zeroPsf, p, {}, pool), InvalidArgument);
  p.boundary = Boundary::Periodic;  // 9×9 PSF on an 8×8 periodic image
  EXPECT_THROW(cpu::richardsonLucy(image, psf, p, {}, pool), InvalidArgument);
  p.boundary = Boundary::Reflect;  // fine once padded
  EXPECT_NO_THROW(cpu::richardsonLucy(image, psf, p, {}, pool));
  p.tvLambda = -1;
  EXPECT_THROW(cpu::richardsonLucy(image, psf, p, {}, pool), InvalidArgument);
}

}  // namespace
