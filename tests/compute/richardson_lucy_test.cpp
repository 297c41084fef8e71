// Richardson–Lucy on every backend against one reference (rl_reference.h: the iterations written
// out with circular sums in double) and float64 NumPy results: boundaries, 2D and 3D, NaN, TV,
// acceleration, cancellation, bad input; CUDA against the CPU too.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "compute/rl_frame.h"
#include "tests/compute/brute_force.h"
#include "tests/compute/filter_reference.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"
#include "tests/compute/invalid_argument_check.h"
#include "tests/compute/rl_cases.h"
#include "tests/compute/rl_reference.h"
#include "tests/compute/test_values.h"

namespace {

using stacklens::testing::kAnalysisData;
using namespace stacklens::compute;
using stacklens::testing::expectInvalidNaming;
using stacklens::testing::periodicConvolution;
using stacklens::testing::randomImage;
using stacklens::testing::readReferenceImage;
using stacklens::testing::relativeL2;
using stacklens::testing::rlBoundaryAndOptionCases;
using stacklens::testing::rlPeriodicReference;

Image analysisImage(const std::string& name, Shape s) {
  return readReferenceImage("analysis/" + name, s);
}

std::vector<double> valuesOf(const Image& im) {
  return std::vector<double>(im.data(), im.data() + im.shape().count());
}

// The PSF's values divided by their sum.
std::vector<double> normalised(const Image& psf) {
  std::vector<double> k = valuesOf(psf);
  double sum = 0;
  for (double x : k) sum += x;
  for (double& x : k) x /= sum;
  return k;
}

// One slice circularly convolved with a normalised PSF, for making blurred test scenes.
Image blurPeriodic(const Image& im, const Image& psf) {
  const std::vector<double> out =
      periodicConvolution(valuesOf(im), im.shape(), normalised(psf), psf.shape());
  Image result = Image::host(im.shape());
  for (int64_t i = 0; i < im.shape().count(); ++i) result.data()[i] = float(out[size_t(i)]);
  return result;
}

// ‖PSF ⊛ est − observed‖ with circular sums.
double residual(const Image& est, const Image& observed, const Image& psf) {
  const std::vector<double> c =
      periodicConvolution(valuesOf(est), est.shape(), normalised(psf), psf.shape());
  double r = 0;
  for (int64_t i = 0; i < est.shape().count(); ++i) {
    const double d = c[size_t(i)] - observed.data()[i];
    r += d * d;
  }
  return std::sqrt(r);
}

double relativeL2(const Image& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double d = double(got.data()[i]) - want[i];
    num += d * d;
    den += want[i] * want[i];
  }
  return std::sqrt(num / den);
}

class RichardsonLucy : public stacklens::testing::OnEachBackend {};
STACKLENS_ON_EACH_BACKEND(RichardsonLucy);

TEST_P(RichardsonLucy, MatchesFloat64NumpyReference) {
  std::ifstream cases(kAnalysisData + "rl_cases.txt");
  ASSERT_TRUE(cases);
  std::string line;
  int n = 0;
  while (std::getline(cases, line)) {
    if (line.empty() || line[0] == '#') continue;
    // Prepare
    std::istringstream f(line);
    std::string name, boundary;
    int threeD, iterations;
    Shape is, ps;
    f >> name >> boundary >> threeD >> iterations >> is.z >> is.y >> is.x >> ps.z >> ps.y >> ps.x;
    ASSERT_TRUE(f) << line;
    const Image image = analysisImage("rl_" + name + "_image.f32", is);
    const Image psf = analysisImage("rl_" + name + "_psf.f32", ps);
    const Image want = analysisImage("rl_" + name + "_expected.f32", is);
    DeconvolveParams p;
    p.iterations = iterations;
    p.threeD = threeD != 0;
    p.boundary = boundary == "periodic" ? Boundary::Periodic
                 : boundary == "zero"   ? Boundary::Zero
                                        : Boundary::Reflect;

    // Run
    const Image got = onHost(backend->richardsonLucy(image, psf, p));

    // Verify
    EXPECT_LT(relativeL2(got, want), 1e-4) << name;
    // Guard against a reference that would pass anything: the input is far from the answer.
    EXPECT_GT(relativeL2(image, want), 1e-2) << name;
    ++n;
  }
  EXPECT_EQ(n, 5);
}

// Each slice in its padded frame (reflected or zero-padded by the PSF's half-size, grown to the
// frame length compute/rl_frame.h picks for both backends), against the direct sums.
TEST_P(RichardsonLucy, MatchesDirectSumsForEachBoundary) {
  // Prepare: an asymmetric PSF (not normalised: the backend normalises it), 3 slices: 2D uses the
  // middle one.
  const Shape s{2, 12, 11};
  const Image in = randomImage(s, 10, 0.2f, 1.f);
  Image psf = Image::host({3, 5, 3});
  for (int64_t i = 0; i < psf.shape().count(); ++i) psf.data()[i] = 1.f + float(i % 7);
  Image middle = Image::host({1, 5, 3});
  std::copy(psf.slice(1), psf.slice(1) + 15, middle.data());
  const std::vector<double> psf2d = normalised(middle);

  for (Boundary b : {Boundary::Periodic, Boundary::Reflect, Boundary::Zero}) {
    DeconvolveParams p;
    p.iterations = 6;
    p.boundary = b;

    // Run
    const Image got = onHost(backend->richardsonLucy(in, psf, p));

    // Verify
    std::vector<double> want(s.count());
    for (int64_t z = 0; z < s.z; ++z) {
      Shape f{1, s.y, s.x};
      int64_t ly = 0, lx = 0;
      if (b != Boundary::Periodic) {
        ly = 2, lx = 1;
        f.y = nextSmoothLength(s.y + 4);
        f.x = nextSmoothLength(s.x + 2);
      }
      std::vector<double> obs(f.count());
      for (int64_t y = 0; y < f.y; ++y)
        for (int64_t x = 0; x < f.x; ++x) {
          const int64_t sy = y - ly, sx = x - lx;
          const bool inside = sy >= 0 && sy < s.y && sx >= 0 && sx < s.x;
          obs[y * f.x + x] =
              b == Boundary::Zero && !inside
                  ? 0.0
                  : in.at(z, brute_force::reflect(sy, s.y), brute_force::reflect(sx, s.x));
        }
      const std::vector<double> est = rlPeriodicReference(obs, f, psf2d, {1, 5, 3}, 6, 1e-12);
      for (int64_t y = 0; y < s.y; ++y)
        for (int64_t x = 0; x < s.x; ++x)
          want[(z * s.y + y) * s.x + x] = est[(y + ly) * f.x + (x + lx)];
    }
    EXPECT_LT(relativeL2(got, want), 1e-5) << "boundary " << int(b);
  }
}

TEST_P(RichardsonLucy, ThreeDMatchesDirectSums) {
  // Prepare
  const Shape s{6, 8, 10};
  const Image in = randomImage(s, 11, 0.2f, 1.f);
  const Image psf = randomImage({3, 3, 3}, 12, 0.1f, 1.f);
  DeconvolveParams dp;
  dp.iterations = 5;
  dp.threeD = true;
  dp.boundary = Boundary::Periodic;

  // Run
  const Image got = onHost(backend->richardsonLucy(in, psf, dp));

  // Verify
  EXPECT_LT(
      relativeL2(got, rlPeriodicReference(valuesOf(in), s, normalised(psf), {3, 3, 3}, 5, 1e-12)),
      1e-5);
}

TEST_P(RichardsonLucy, TwoDModeUsesTheCentreSliceOfA3dPsf) {
  // Prepare
  const Image image = analysisImage("rl_reflect2d_image.f32", {1, 30, 37});
  const Image psf2 = analysisImage("rl_reflect2d_psf.f32", {1, 9, 9});
  Image psf3 = Image::host({3, 9, 9});
  for (int64_t i = 0; i < 81; ++i) {
    psf3.data()[i] = (i % 9 == 0) ? 1.f : 0.f;   // slices 0 and 2 are something else entirely
    psf3.data()[81 + i] = psf2.data()[i] * 3.f;  // scale does not matter: normalised
    psf3.data()[162 + i] = (i / 9 == 4) ? 1.f : 0.f;
  }
  DeconvolveParams p;
  p.iterations = 5;

  // Run
  const Image a = onHost(backend->richardsonLucy(image, psf2, p));
  const Image b = onHost(backend->richardsonLucy(image, psf3, p));

  // Verify
  EXPECT_LT(relativeL2(b, a), 1e-6);
}

TEST_P(RichardsonLucy, ConstantImageStaysConstantWithReflectAndPeriodic) {
  // Prepare
  Image image = Image::host({2, 23, 31});
  for (int64_t i = 0; i < image.shape().count(); ++i) image.data()[i] = 2.5f;
  const Image psf = gaussianPsf(0, 2.0, 1.5);

  for (Boundary b : {Boundary::Reflect, Boundary::Periodic}) {
    DeconvolveParams p;
    p.iterations = 7;
    p.boundary = b;

    // Run
    const Image got = onHost(backend->richardsonLucy(image, psf, p));

    // Verify
    for (int64_t i = 0; i < got.shape().count(); ++i) ASSERT_NEAR(got.data()[i], 2.5f, 1e-4) << i;
  }

  // Run: with zero padding the edges lose light to the zero region.
  DeconvolveParams p;
  p.boundary = Boundary::Zero;
  p.iterations = 7;
  const Image got = onHost(backend->richardsonLucy(image, psf, p));

  // Verify: no longer constant.
  EXPECT_GT(std::abs(got.at(0, 0, 0) - 2.5f), 1e-2);
}

TEST_P(RichardsonLucy, NanPixelsAreRestoredAndDoNotSpread) {
  // Prepare
  Image image = analysisImage("rl_reflect2d_image.f32", {1, 30, 37});
  const Image psf = analysisImage("rl_reflect2d_psf.f32", {1, 9, 9});
  image.at(0, 10, 10) = std::numeric_limits<float>::quiet_NaN();
  image.at(0, 0, 36) = std::numeric_limits<float>::infinity();
  DeconvolveParams p;
  p.iterations = 5;

  // Run
  const Image got = onHost(backend->richardsonLucy(image, psf, p));

  // Verify
  EXPECT_TRUE(std::isnan(got.at(0, 10, 10)));
  EXPECT_EQ(got.at(0, 0, 36), std::numeric_limits<float>::infinity());
  int64_t finite = 0;
  for (int64_t i = 0; i < got.shape().count(); ++i) finite += std::isfinite(got.data()[i]);
  EXPECT_EQ(finite, got.shape().count() - 2);
}

TEST_P(RichardsonLucy, TvWithZeroLambdaEqualsPlainAndPositiveLambdaSmooths) {
  // Prepare
  Image truth = Image::host({1, 48, 48});
  for (int64_t y = 0; y < 48; ++y)
    for (int64_t x = 0; x < 48; ++x)
      truth.at(0, y, x) = 1.f + ((x / 12 + y / 12) % 2) * 4.f + 0.3f * ((x * 7 + y * 13) % 5);
  const Image psf = gaussianPsf(0, 1.5, 1.5);
  const Image blurred = blurPeriodic(truth, psf);
  DeconvolveParams p;
  p.iterations = 15;
  p.boundary = Boundary::Periodic;
  DeconvolveParams zero = p, smoothing = p;
  zero.tvLambda = 0.0;
  smoothing.tvLambda = 0.02;

  // Run
  const Image plain = onHost(backend->richardsonLucy(blurred, psf, p));
  const Image tv0 = onHost(backend->richardsonLucy(blurred, psf, zero));
  const Image tv = onHost(backend->richardsonLucy(blurred, psf, smoothing));

  // Verify
  auto totalVariation = [](const Image& im) {
    double v = 0;
    for (int64_t y = 0; y + 1 < im.shape().y; ++y)
      for (int64_t x = 0; x + 1 < im.shape().x; ++x)
        v += std::hypot(im.at(0, y, x + 1) - im.at(0, y, x), im.at(0, y + 1, x) - im.at(0, y, x));
    return v;
  };
  EXPECT_EQ(relativeL2(tv0, plain), 0.0);
  EXPECT_LT(totalVariation(tv), 0.97 * totalVariation(plain));
  EXPECT_LT(relativeL2(tv, plain), 0.1);  // regularised, not a different answer
}

TEST_P(RichardsonLucy, AccelerationConvergesInFewerIterationsOnABlurredPoint) {
  // Prepare
  Image truth = Image::host({1, 64, 64});
  for (int64_t i = 0; i < truth.shape().count(); ++i) truth.data()[i] = 0.01f;
  truth.at(0, 32, 30) = 50.f;
  const Image psf = gaussianPsf(0, 2.5, 2.5);
  const Image blurred = blurPeriodic(truth, psf);
  auto errorAfter = [&](int iterations, bool accelerate) {
    DeconvolveParams p;
    p.iterations = iterations;
    p.accelerate = accelerate;
    p.boundary = Boundary::Periodic;
    return relativeL2(onHost(backend->richardsonLucy(blurred, psf, p)), truth);
  };

  // Run
  const double plain10 = errorAfter(10, false), plain40 = errorAfter(40, false);
  const double fast10 = errorAfter(10, true), fast20 = errorAfter(20, true);

  // Verify
  EXPECT_LT(fast10, plain10);
  EXPECT_LT(fast20, plain40);  // half the iterations, at least as close
  EXPECT_LT(plain40, plain10);
}

// Sparse bright points on a faint floor, blurred (reflect edges): the classic case where the
// acceleration lowers the periodic residual after 10 iterations and TV lowers the total variation.
TEST_P(RichardsonLucy, AccelerationLowersTheResidualAndTotalVariationSmoothsSparsePoints) {
  // Prepare
  const Shape s{1, 32, 32};
  Image truth = randomImage(s, 13, 0.05f, 0.1f);
  truth.at(0, 8, 9) = 5.f;
  truth.at(0, 20, 22) = 3.f;
  truth.at(0, 25, 5) = 4.f;
  const Image psf = gaussianPsf(0, 1.5, 1.5);
  const Image observed =
      onHost(backend->gaussianBlur(truth, BlurParams{0.0, 1.5, 1.5, 4.0, false}));
  DeconvolveParams plain;
  plain.iterations = 10;
  plain.boundary = Boundary::Periodic;
  DeconvolveParams fast = plain, tv = plain, none = plain;
  fast.accelerate = true;
  tv.tvLambda = 0.01;
  none.iterations = 0;

  // Run
  const Image a = onHost(backend->richardsonLucy(observed, psf, plain));
  const Image b = onHost(backend->richardsonLucy(observed, psf, fast));
  const Image t = onHost(backend->richardsonLucy(observed, psf, tv));

  // Verify
  for (int64_t i = 0; i < s.count(); ++i)
    ASSERT_TRUE(std::isfinite(b.data()[i]) && b.data()[i] >= 0);
  EXPECT_LT(residual(b, observed, psf), residual(a, observed, psf));
  auto totalVariation = [&](const Image& im) {
    double v = 0;
    for (int64_t y = 0; y + 1 < s.y; ++y)
      for (int64_t x = 0; x + 1 < s.x; ++x)
        v += std::abs(im.at(0, y, x + 1) - im.at(0, y, x)) +
             std::abs(im.at(0, y + 1, x) - im.at(0, y, x));
    return v;
  };
  EXPECT_LT(totalVariation(t), totalVariation(a));
  EXPECT_THROW(backend->richardsonLucy(observed, psf, none), InvalidArgument);
}

TEST_P(RichardsonLucy, StopsWhenCancelledAndStaysUsable) {
  // Prepare
  const Image image = analysisImage("rl_reflect2d_image.f32", {1, 30, 37});
  const Image psf = analysisImage("rl_reflect2d_psf.f32", {1, 9, 9});
  DeconvolveParams p;
  p.iterations = 6;
  std::atomic<bool> cancel{false};
  Job cancelling(&cancel, [&](double) { cancel = true; });
  std::atomic<bool> cancelled{true};
  DeconvolveParams many;
  many.iterations = 50;

  // Run, Verify: cancelled from a progress report, and cancelled before it starts.
  EXPECT_THROW(backend->richardsonLucy(image, psf, p, cancelling), Cancelled);
  EXPECT_THROW(backend->richardsonLucy(randomImage({1, 64, 64}, 14), gaussianPsf(0, 2, 2), many,
                                       Job(&cancelled)),
               Cancelled);
  // And the backend stays usable.
  EXPECT_NO_THROW(onHost(backend->gaussianBlur(randomImage({1, 8, 8}, 15), BlurParams{})));
}

// An image without a finite value (a blank channel of a cube) comes back unchanged, NaN and ±Inf
// alike, as non-finite values always do; the PSF is still checked.
TEST_P(RichardsonLucy, AnImageWithoutFiniteValuesComesBackUnchanged) {
  Image blank = Image::host({2, 8, 9});
  for (int64_t i = 0; i < blank.shape().count(); ++i)
    blank.data()[i] = i % 3 == 0 ? std::numeric_limits<float>::infinity()
                                 : std::numeric_limits<float>::quiet_NaN();
  const Image psf = gaussianPsf(1.0, 1.0, 1.0);
  for (bool threeD : {false, true}) {
    DeconvolveParams p;
    p.threeD = threeD;
    const Image got = backend->download(backend->richardsonLucy(blank, psf, p));
    ASSERT_EQ(got.shape(), blank.shape());
    for (int64_t i = 0; i < blank.shape().count(); ++i)
      ASSERT_EQ(std::memcmp(&got.data()[i], &blank.data()[i], sizeof(float)), 0) << "at " << i;
  }
  Image badPsf = cloneHost(psf);
  badPsf.at(4, 4, 3) = std::numeric_limits<float>::quiet_NaN();  // in the centre slice
  EXPECT_THROW(backend->richardsonLucy(blank, badPsf, DeconvolveParams{}), InvalidArgument);
}

TEST_P(RichardsonLucy, RejectsInvalidInput) {
  // Prepare
  Image image = Image::host({1, 8, 8});
  for (int64_t i = 0; i < 64; ++i) image.data()[i] = 1.f;
  const Image psf = gaussianPsf(0, 1.0, 1.0);  // 9×9
  Image badPsf = cloneHost(psf);
  badPsf.data()[3] = std::numeric_limits<float>::quiet_NaN();
  const Image zeroPsf = Image::host({1, 3, 3});
  DeconvolveParams p;

  // Run, Verify
  p.iterations = 0;
  EXPECT_THROW(backend->richardsonLucy(image, psf, p), InvalidArgument);
  p.iterations = 2;
  EXPECT_THROW(backend->richardsonLucy(Image::host({1, 0, 8}), psf, p), InvalidArgument);
  EXPECT_THROW(backend->richardsonLucy(image, badPsf, p), InvalidArgument);
  expectInvalidNaming([&] { backend->richardsonLucy(image, zeroPsf, p); }, "PSF");
  p.boundary = Boundary::Periodic;  // 9×9 PSF on an 8×8 periodic image
  EXPECT_THROW(backend->richardsonLucy(image, psf, p), InvalidArgument);
  p.boundary = Boundary::Reflect;  // fine once padded
  EXPECT_NO_THROW(backend->richardsonLucy(image, psf, p));
  p.tvLambda = -1;
  EXPECT_THROW(backend->richardsonLucy(image, psf, p), InvalidArgument);
}

// The CUDA backend against the CPU backend on fresh random stacks, 2D for every boundary and
// option and 3D (20 iterations: relative L2 1e-4).
class RichardsonLucyCudaAndCpu : public stacklens::testing::GpuTest {};

TEST_F(RichardsonLucyCudaAndCpu, AgreeForEachBoundaryAndOptionIn2DAnd3D) {
  // Prepare
  const Image in = randomImage({2, 96, 80}, 4, 0.1f, 1.f);
  const Image psf = gaussianPsf(1.0, 2.0, 1.5);
  const Image vol = randomImage({12, 40, 36}, 5, 0.1f, 1.f);
  DeconvolveParams p3;
  p3.threeD = true;

  for (const auto& [what, p] : rlBoundaryAndOptionCases()) {
    // Run
    const Image want = cpu->richardsonLucy(in, psf, p);
    const Image got = gpu->download(gpu->richardsonLucy(in, psf, p));

    // Verify
    EXPECT_LT(relativeL2(got, want), 1e-4) << what;
  }

  // Run
  const Image want3 = cpu->richardsonLucy(vol, psf, p3);
  const Image got3 = gpu->download(gpu->richardsonLucy(vol, psf, p3));

  // Verify
  EXPECT_LT(relativeL2(got3, want3), 1e-4);
}

}  // namespace
