// Gaussian blur on the CPU: closed forms, a brute-force reference, SciPy data, NaN and bad input.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "brute_force.h"
#include "compute/backend.h"
#include "compute/cpu/operations.h"
#include "filter_reference.h"

namespace {

using namespace stacklens::compute;
using stacklens::compute::cpu::ThreadPool;

const float kNaN = std::numeric_limits<float>::quiet_NaN();

Image randomImage(Shape shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  Image image = Image::host(shape);
  for (int64_t i = 0; i < shape.count(); ++i) image.data()[i] = normal(rng);
  return image;
}

// Equal within tol·(1 + |expected|), NaN only where expected is NaN.
void expectClose(const Image& actual, const Image& expected, double tol) {
  ASSERT_EQ(actual.shape(), expected.shape());
  int reported = 0;
  for (int64_t i = 0; i < expected.shape().count(); ++i) {
    const double a = actual.data()[i], e = expected.data()[i];
    const bool ok = std::isnan(e) ? std::isnan(a) : std::fabs(a - e) <= tol * (1 + std::fabs(e));
    if (!ok && reported++ < 5) ADD_FAILURE() << "index " << i << ": got " << a << ", want " << e;
  }
  EXPECT_EQ(reported, 0);
}

std::vector<double> kernel(double sigma, double truncate) {
  const int r = static_cast<int>(truncate * sigma + 0.5);
  std::vector<double> w;
  double sum = 0;
  for (int k = -r; k <= r; ++k) sum += w.emplace_back(std::exp(-k * k / (2 * sigma * sigma)));
  for (double& v : w) v /= sum;
  return w;
}

// Direct 3D correlation with the separable kernel's product, in double.
Image bruteForceBlur(const Image& in, const BlurParams& p) {
  const Shape s = in.shape();
  const auto wz = p.sigmaZ > 0 ? kernel(p.sigmaZ, p.truncate) : std::vector<double>{1.0};
  const auto wy = kernel(p.sigmaY, p.truncate), wx = kernel(p.sigmaX, p.truncate);
  const int rz = int(wz.size() / 2), ry = int(wy.size() / 2), rx = int(wx.size() / 2);
  Image out = Image::host(s);
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        double sum = 0;
        for (int a = -rz; a <= rz; ++a)
          for (int b = -ry; b <= ry; ++b)
            for (int c = -rx; c <= rx; ++c)
              sum += wz[a + rz] * wy[b + ry] * wx[c + rx] *
                     in.at(brute_force::reflect(z + a, s.z), brute_force::reflect(y + b, s.y),
                           brute_force::reflect(x + c, s.x));
        out.at(z, y, x) = static_cast<float>(sum);
      }
  return out;
}

TEST(GaussianBlur, DeltaBlursToTheSampledNormalisedGaussian) {
  ThreadPool pool(2);
  Image delta = Image::host({1, 31, 33});
  delta.at(0, 15, 16) = 1.0f;
  BlurParams p;
  p.sigmaY = 1.3;
  p.sigmaX = 2.1;  // radii 5 and 8: the kernel stays inside the image
  Image out = cpu::gaussianBlur(delta, p, {}, pool);
  const auto wy = kernel(1.3, 4.0), wx = kernel(2.1, 4.0);
  ASSERT_EQ(wy.size(), 11u);
  ASSERT_EQ(wx.size(), 17u);
  for (int64_t y = 0; y < 31; ++y)
    for (int64_t x = 0; x < 33; ++x) {
      const int64_t dy = y - 15 + 5, dx = x - 16 + 8;
      const double want = (dy >= 0 && dy < 11 && dx >= 0 && dx < 17) ? wy[dy] * wx[dx] : 0.0;
      ASSERT_NEAR(out.at(0, y, x), want, 1e-7) << y << "," << x;
    }
}

TEST(GaussianBlur, Delta3DBlursToTheProductOfThreeKernels) {
  ThreadPool pool(2);
  Image delta = Image::host({15, 13, 12});
  delta.at(7, 6, 5) = 1.0f;
  BlurParams p{1.0, 0.8, 1.1, 3.0, false};  // radii 3, 2, 3
  Image out = cpu::gaussianBlur(delta, p, {}, pool);
  const auto wz = kernel(1.0, 3.0), wy = kernel(0.8, 3.0), wx = kernel(1.1, 3.0);
  for (int64_t z = 0; z < 15; ++z)
    for (int64_t y = 0; y < 13; ++y)
      for (int64_t x = 0; x < 12; ++x) {
        const int64_t a = z - 7 + 3, b = y - 6 + 2, c = x - 5 + 3;
        const bool inside = a >= 0 && a < 7 && b >= 0 && b < 5 && c >= 0 && c < 7;
        ASSERT_NEAR(out.at(z, y, x), inside ? wz[a] * wy[b] * wx[c] : 0.0, 1e-7);
      }
}

TEST(GaussianBlur, ConstantStaysConstantAtEveryBorder) {
  ThreadPool pool(2);
  Image flat = Image::host({2, 9, 7});
  for (int64_t i = 0; i < flat.shape().count(); ++i) flat.data()[i] = 3.25f;
  for (BlurParams p : {BlurParams{0, 1.0, 1.0, 4.0, false}, BlurParams{2.0, 5.0, 7.0, 4.0, false},
                       BlurParams{0, 0.5, 3.0, 4.0, true}}) {
    Image out = cpu::gaussianBlur(flat, p, {}, pool);
    for (int64_t i = 0; i < flat.shape().count(); ++i)
      ASSERT_NEAR(out.data()[i], 3.25f, 3.25e-6) << i;
  }
}

TEST(GaussianBlur, MatchesBruteForceWithKernelsWiderThanTheImage) {
  ThreadPool pool(3);
  const Image in = randomImage({3, 7, 5}, 1);
  for (BlurParams p : {BlurParams{0, 2.0, 3.0, 4.0, false}, BlurParams{1.5, 0.6, 2.5, 4.0, false},
                       BlurParams{0, 0.3, 0.4, 1.0, false}}) {
    expectClose(cpu::gaussianBlur(in, p, {}, pool), bruteForceBlur(in, p), 2e-6);
  }
  const Image row = randomImage({1, 1, 9}, 2), column = randomImage({1, 9, 1}, 3);
  const Image pixel = randomImage({1, 1, 1}, 4);
  BlurParams p{0, 2.0, 2.0, 4.0, false};
  expectClose(cpu::gaussianBlur(row, p, {}, pool), bruteForceBlur(row, p), 2e-6);
  expectClose(cpu::gaussianBlur(column, p, {}, pool), bruteForceBlur(column, p), 2e-6);
  expectClose(cpu::gaussianBlur(pixel, p, {}, pool), pixel, 1e-6);
}

TEST(GaussianBlur, MatchesScipyGaussianFilterReflect) {
  ThreadPool pool(2);
  const Image in = loadFilterReference("blur_in", {3, 13, 17});
  expectClose(cpu::gaussianBlur(in, {0, 1.5, 2.0, 4.0, false}, {}, pool),
              loadFilterReference("blur2d_s1.5x2.0_t4", {3, 13, 17}), 2e-6);
  expectClose(cpu::gaussianBlur(in, {1.0, 1.5, 0.7, 3.0, false}, {}, pool),
              loadFilterReference("blur3d_s1.0x1.5x0.7_t3", {3, 13, 17}), 2e-6);
  const Image small = loadFilterReference("blur_small_in", {1, 5, 6});
  expectClose(cpu::gaussianBlur(small, {0, 4.0, 4.0, 4.0, false}, {}, pool),
              loadFilterReference("blur_small_s4_t4", {1, 5, 6}), 2e-6);
}

TEST(GaussianBlur, NanAwareMatchesScipyNormalisedConvolution) {
  ThreadPool pool(2);
  const Image in = loadFilterReference("blur_nan_in", {1, 13, 17});
  expectClose(cpu::gaussianBlur(in, {0, 1.2, 1.2, 4.0, true}, {}, pool),
              loadFilterReference("blur_nanaware_s1.2_t4", {1, 13, 17}), 2e-6);
}

TEST(GaussianBlur, NanSpreadsOverTheKernelFootprintWithoutNanAware) {
  ThreadPool pool(2);
  Image in = randomImage({1, 20, 20}, 5);
  in.at(0, 10, 10) = kNaN;
  Image out = cpu::gaussianBlur(in, {0, 1.0, 1.0, 2.0, false}, {}, pool);  // radius 2
  for (int64_t y = 0; y < 20; ++y)
    for (int64_t x = 0; x < 20; ++x) {
      const bool near = std::abs(y - 10) <= 2 && std::abs(x - 10) <= 2;
      EXPECT_EQ(std::isnan(out.at(0, y, x)), near) << y << "," << x;
    }
}

TEST(GaussianBlur, NanAwareKeepsNanAndIgnoresItElsewhere) {
  ThreadPool pool(2);
  Image in = Image::host({1, 12, 12});
  for (int64_t i = 0; i < in.shape().count(); ++i) in.data()[i] = -2.0f;
  in.at(0, 0, 0) = kNaN;
  in.at(0, 5, 5) = kNaN;
  in.at(0, 5, 6) = kNaN;
  Image out = cpu::gaussianBlur(in, {0, 1.5, 1.5, 4.0, true}, {}, pool);
  for (int64_t i = 0; i < in.shape().count(); ++i) {
    if (std::isnan(in.data()[i]))
      EXPECT_TRUE(std::isnan(out.data()[i])) << i;
    else
      EXPECT_NEAR(out.data()[i], -2.0f, 1e-6) << i;
  }
}

TEST(GaussianBlur, InfinitySpreadsAsInScipy) {
  ThreadPool pool(1);
  Image in = Image::host({1, 9, 9});
  in.at(0, 4, 4) = std::numeric_limits<float>::infinity();
  Image out = cpu::gaussianBlur(in, {0, 1.0, 1.0, 1.0, false}, {}, pool);  // radius 1
  EXPECT_EQ(out.at(0, 4, 4), std::numeric_limits<float>::infinity());
  EXPECT_EQ(out.at(0, 3, 5), std::numeric_limits<float>::infinity());
  EXPECT_EQ(out.at(0, 4, 6), 0.0f);
}

TEST(GaussianBlur, ResultDoesNotDependOnTheThreadCount) {
  ThreadPool one(1), three(3);
  const Image in = randomImage({2, 37, 29}, 6);
  for (BlurParams p : {BlurParams{0, 2.0, 1.0, 4.0, false}, BlurParams{1.0, 1.0, 1.0, 4.0, true}}) {
    Image a = cpu::gaussianBlur(in, p, {}, one), b = cpu::gaussianBlur(in, p, {}, three);
    for (int64_t i = 0; i < in.shape().count(); ++i) ASSERT_EQ(a.data()[i], b.data()[i]);
  }
}

TEST(GaussianBlur, RejectsInvalidParametersByName) {
  ThreadPool pool(1);
  const Image in = randomImage({1, 4, 4}, 7);
  auto expectInvalid = [&](BlurParams p, const std::string& word) {
    try {
      cpu::gaussianBlur(in, p, {}, pool);
      ADD_FAILURE() << "accepted " << word;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  expectInvalid({0, 0.0, 1.0, 4.0, false}, "sigma");
  expectInvalid({0, 1.0, -1.0, 4.0, false}, "sigma");
  expectInvalid({-0.5, 1.0, 1.0, 4.0, false}, "sigma on z");
  expectInvalid({0, std::nan(""), 1.0, 4.0, false}, "sigma");
  expectInvalid({0, 1.0, 1.0, 0.0, false}, "truncate");
  expectInvalid({0, 1.0, 1.0, -2.0, false}, "truncate");
  expectInvalid({0, 1.0e12, 1.0, 4.0, false}, "radius");
  EXPECT_THROW(cpu::gaussianBlur(Image::host({1, 0, 5}), {}, {}, pool), InvalidArgument);
  EXPECT_THROW(cpu::gaussianBlur(Image(), {}, {}, pool), InvalidArgument);
}

TEST(GaussianBlur, StopsWhenCancelled) {
  ThreadPool pool(2);
  std::atomic<bool> cancel{true};
  EXPECT_THROW(cpu::gaussianBlur(randomImage({2, 8, 8}, 8), {}, Job(&cancel), pool), Cancelled);
}

TEST(GaussianBlur, RunsThroughTheBackendApiAndKeepsSpacing) {
  auto backend = makeCpuBackend(2);
  Image in = randomImage({1, 16, 16}, 9);
  in.spacing = {2.0, 0.5, 0.25, true, "um"};
  BlurParams p{0, 1.0, 1.0, 4.0, false};
  Image out = backend->download(backend->gaussianBlur(backend->upload(in), p));
  expectClose(out, bruteForceBlur(in, p), 2e-6);
  EXPECT_EQ(out.spacing.x, 0.25);
  EXPECT_TRUE(out.spacing.known);
}

}  // namespace
