// The parameters' rules (compute/params.h) and texts (compute/params_text.h): each rule refuses its
// bad values and takes its boundary value, every caller refuses with the same words, and the texts
// say what the parameters are.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "compute/params.h"
#include "compute/params_text.h"
#include "compute/pipeline.h"
#include "gpu_test_backends.h"

namespace {

using namespace stacklens::compute;

constexpr double kDoubleNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kDoubleInf = std::numeric_limits<double>::infinity();
constexpr double kTiny = std::numeric_limits<double>::denorm_min();

// "parameter: message" of the refusal, or "" when the check passes.
std::string refusalOf(const std::function<void()>& check) {
  try {
    check();
  } catch (const InvalidParameter& e) {
    return e.parameter() + ": " + e.what();
  }
  return "";
}

template <class Params>
std::string refusal(const Params& p) {
  return refusalOf([&] { validate(p); });
}

// ---- the rules --------------------------------------------------------------------------------

TEST(BlurParams, SigmaOnYAndXIsFiniteAndPositive) {
  BlurParams p;
  p.sigmaY = 0;
  EXPECT_EQ(refusal(p), "sigmaY: blur sigma on y must be finite and > 0, got 0");
  p.sigmaY = kDoubleNaN;
  EXPECT_EQ(refusal(p), "sigmaY: blur sigma on y must be finite and > 0, got nan");
  p.sigmaY = kTiny;
  EXPECT_EQ(refusal(p), "");
  p.sigmaX = -1;
  EXPECT_EQ(refusal(p), "sigmaX: blur sigma on x must be finite and > 0, got -1");
  p.sigmaX = kDoubleInf;
  EXPECT_EQ(refusal(p), "sigmaX: blur sigma on x must be finite and > 0, got inf");
}

TEST(BlurParams, SigmaOnZIsFiniteAndAtLeastZero) {
  BlurParams p;
  p.sigmaZ = -0.5;
  EXPECT_EQ(refusal(p),
            "sigmaZ: blur sigma on z must be finite and ≥ 0 (0: each slice in 2D), got -0.5");
  p.sigmaZ = kDoubleInf;
  EXPECT_NE(refusal(p), "");
  p.sigmaZ = 0;
  EXPECT_EQ(refusal(p), "");
}

TEST(BlurParams, TheKernelRadiusStaysBelowAMillionPixels) {
  BlurParams p;
  p.truncate = 4;
  p.sigmaX = 249999.8;  // radius 999999.7: the last one allowed
  EXPECT_EQ(refusal(p), "");
  p.sigmaX = 250000;
  EXPECT_EQ(refusal(p),
            "truncate: blur truncate · sigma (the kernel radius) must be below 10^6 pixels, got "
            "1e+06");
  p.sigmaX = 1;
  p.sigmaZ = 1e12;
  EXPECT_NE(refusal(p).find("kernel radius"), std::string::npos);
}

TEST(BlurParams, TruncateIsFiniteAndPositive) {
  BlurParams p;
  p.truncate = 0;
  EXPECT_EQ(refusal(p), "truncate: blur truncate must be finite and > 0, got 0");
  p.truncate = kDoubleInf;
  EXPECT_NE(refusal(p), "");
  p.truncate = kTiny;
  EXPECT_EQ(refusal(p), "");
}

TEST(BlurRadius, IsSciPysIntOfTruncateTimesSigmaPlusAHalf) {
  // scipy.ndimage.gaussian_filter: radius = int(truncate * sigma + 0.5).
  EXPECT_EQ(blurRadius(1.0, 4.0), 4);
  EXPECT_EQ(blurRadius(1.5, 4.0), 6);
  EXPECT_EQ(blurRadius(0.6, 4.0), 2);    // 2.9 rounds down
  EXPECT_EQ(blurRadius(0.625, 4.0), 3);  // 3.0 exactly
  EXPECT_EQ(blurRadius(3.5, 2.0), 7);    // the bench's 15 taps
  EXPECT_EQ(blurRadius(0.0, 4.0), 0);    // sigma 0: no neighbours (a 2D blur's z)
  EXPECT_EQ(blurRadius(0.1, 1.0), 0);
}

TEST(BlurRadius, SaturatesInsteadOfOverflowing) {
  constexpr int64_t kMost = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(blurRadius(1e300, 1e300), kMost);
  EXPECT_EQ(blurRadius(kDoubleInf, 4.0), kMost);
  EXPECT_EQ(blurRadius(kDoubleNaN, 4.0), kMost);
  EXPECT_EQ(blurRadius(1e12, 4.0), int64_t(4e12));
}

TEST(SigmasFromList, OneValueMeansYAndXWithZAsTheCallerSays) {
  const Sigmas perSlice = sigmasFromList({1.5}, OneSigma::PerSlice);
  EXPECT_EQ(perSlice.z, 0.0);
  EXPECT_EQ(perSlice.y, 1.5);
  EXPECT_EQ(perSlice.x, 1.5);
  const Sigmas everyAxis = sigmasFromList({1.5}, OneSigma::EveryAxis);
  EXPECT_EQ(everyAxis.z, 1.5);
  EXPECT_EQ(everyAxis.y, 1.5);
  EXPECT_EQ(everyAxis.x, 1.5);
}

TEST(SigmasFromList, ThreeValuesAreZYX) {
  for (OneSigma one : {OneSigma::PerSlice, OneSigma::EveryAxis}) {
    const Sigmas s = sigmasFromList({2, 1.5, 0.5}, one);
    EXPECT_EQ(s.z, 2.0);
    EXPECT_EQ(s.y, 1.5);
    EXPECT_EQ(s.x, 0.5);
  }
}

TEST(SigmasFromList, OtherCountsAreRefusedSayingTheNotation) {
  for (const std::vector<double>& v :
       {std::vector<double>{}, std::vector<double>{1, 2}, std::vector<double>{1, 2, 3, 4}}) {
    try {
      sigmasFromList(v, OneSigma::PerSlice);
      ADD_FAILURE() << v.size() << " values were taken";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()),
                "expected S or SZ,SY,SX, got " + std::to_string(v.size()) + " values");
    }
  }
}

TEST(MedianSize, IsOddFromOneToTheLargestWindow) {
  for (int size : {0, -1, 2, 4, kLargestMedianWindow + 2})
    EXPECT_EQ(refusalOf([&] { validateMedianSize(size); }),
              "size: median size must be odd, from 1 to 1001, got " + std::to_string(size));
  for (int size : {1, 3, kLargestMedianWindow})
    EXPECT_EQ(refusalOf([&] { validateMedianSize(size); }), "") << size;
}

TEST(OutlierParams, SizeThresholdAndMode) {
  OutlierParams p;
  p.size = 4;
  EXPECT_EQ(refusal(p), "size: outlier window size must be odd, from 1 to 1001, got 4");
  p.size = 1;
  EXPECT_EQ(refusal(p), "");
  p.size = kLargestMedianWindow;
  EXPECT_EQ(refusal(p), "");
  p.threshold = -1e-9;
  EXPECT_EQ(refusal(p), "threshold: outlier threshold must be finite and ≥ 0, got -1e-09");
  p.threshold = kDoubleNaN;
  EXPECT_NE(refusal(p), "");
  p.threshold = 0;
  EXPECT_EQ(refusal(p), "");
  p.mode = static_cast<OutlierMode>(3);
  EXPECT_EQ(refusal(p), "mode: outlier mode must be bright (0), dark (1) or both (2), got 3");
}

TEST(DeconvolveParams, IterationsTvWeightEpsilonAndBoundary) {
  DeconvolveParams p;
  p.iterations = 0;
  EXPECT_EQ(refusal(p), "iterations: deconvolution iterations must be ≥ 1, got 0");
  p.iterations = 1;
  EXPECT_EQ(refusal(p), "");
  p.tvLambda = -0.25;
  EXPECT_EQ(refusal(p), "tvLambda: deconvolution TV weight must be finite and ≥ 0, got -0.25");
  p.tvLambda = kDoubleInf;
  EXPECT_NE(refusal(p), "");
  p.tvLambda = 0;
  EXPECT_EQ(refusal(p), "");
  p.epsilon = 0;
  EXPECT_EQ(refusal(p), "epsilon: deconvolution epsilon must be finite and > 0, got 0");
  p.epsilon = std::numeric_limits<float>::infinity();
  EXPECT_NE(refusal(p), "");
  p.epsilon = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(refusal(p), "");
  p.boundary = Boundary::ReflectExact;
  EXPECT_EQ(refusal(p), "");
  p.tvLambda = 0.01;
  EXPECT_EQ(refusal(p),
            "tvLambda: deconvolution TV weight with the reflect-exact boundary must be 0, got "
            "0.01");
  p.tvLambda = 0;
  p.boundary = static_cast<Boundary>(4);
  EXPECT_EQ(refusal(p),
            "boundary: deconvolution boundary must be reflect (0), periodic (1), zero (2) or "
            "reflect-exact (3), got 4");
}

TEST(ClipParams, KappasAreFiniteAndAtLeastZero) {
  ClipParams p;
  p.kappaLower = -1;
  EXPECT_EQ(refusal(p), "kappaLower: clipping kappa lower must be finite and ≥ 0, got -1");
  p.kappaLower = 0;  // keeps the values equal to the median
  EXPECT_EQ(refusal(p), "");
  p.kappaUpper = kDoubleNaN;
  EXPECT_EQ(refusal(p), "kappaUpper: clipping kappa upper must be finite and ≥ 0, got nan");
  p.kappaUpper = 0;
  p.maxIterations = -5;  // to convergence
  EXPECT_EQ(refusal(p), "");
}

TEST(SegmentParams, ConnectivityMinimumPixelsAndThreshold) {
  SegmentParams p;
  p.connectivity = 6;
  EXPECT_EQ(refusal(p), "connectivity: segmentation connectivity must be 4 or 8, got 6");
  p.connectivity = 4;
  EXPECT_EQ(refusal(p), "");
  p.minPixels = 0;
  EXPECT_EQ(refusal(p), "minPixels: segmentation minimum pixels must be ≥ 1, got 0");
  p.minPixels = 1;
  p.nSigma = 0;
  EXPECT_EQ(refusal(p), "nSigma: segmentation nsigma must be finite and > 0, got 0");
  p.nSigma = kTiny;
  EXPECT_EQ(refusal(p), "");
  p.nSigma = 0;  // ignored with an absolute threshold
  p.absoluteThreshold = -1e30;
  EXPECT_EQ(refusal(p), "");
  p.absoluteThreshold = kDoubleInf;
  EXPECT_EQ(refusal(p), "absoluteThreshold: segmentation threshold must be finite, got inf");
}

TEST(SegmentParams, BackgroundClippingUnlessTheBackgroundIsGiven) {
  SegmentParams p;
  p.clip.kappaLower = -2;
  EXPECT_EQ(refusal(p),
            "clip.kappaLower: segmentation background clipping kappa lower must be finite and ≥ "
            "0, got -2");
  p.background = ClipStats{};  // not clipped again: the clipping does not matter
  EXPECT_EQ(refusal(p), "");
}

TEST(ResampleParams, ZoomsAndOrder) {
  for (double bad : {0.0, -1.0, kDoubleNaN, kDoubleInf}) {
    EXPECT_NE(refusal(ResampleParams{bad, 1, 1, 3}).rfind("zoomZ: resample zoom on z", 0),
              std::string::npos);
    EXPECT_NE(refusal(ResampleParams{1, bad, 1, 3}).rfind("zoomY: resample zoom on y", 0),
              std::string::npos);
    EXPECT_NE(refusal(ResampleParams{1, 1, bad, 3}).rfind("zoomX: resample zoom on x", 0),
              std::string::npos);
  }
  EXPECT_EQ(refusal(ResampleParams{1, 0, 1, 3}),
            "zoomY: resample zoom on y must be finite and > 0, got 0");
  EXPECT_EQ(refusal(ResampleParams{kTiny, kTiny, kTiny, 1}), "");
  for (int order : {0, 2, 4})
    EXPECT_EQ(
        refusal(ResampleParams{1, 1, 1, order}),
        "order: resample order must be 1 (linear) or 3 (cubic), got " + std::to_string(order));
  EXPECT_EQ(refusal(ResampleParams{1, 1, 1, 3}), "");
}

TEST(MomentParams, OrderAndClip) {
  MomentParams p;
  p.order = 3;
  EXPECT_EQ(refusal(p), "order: moment order must be 0, 1 or 2, got 3");
  p.order = -1;
  EXPECT_NE(refusal(p), "");
  p.order = 2;
  EXPECT_EQ(refusal(p), "");
  p.clip = kDoubleNaN;
  EXPECT_EQ(refusal(p), "clip: moment clip level must be a number, got nan");
  p.clip = -kDoubleInf;
  EXPECT_EQ(refusal(p), "");
}

// ---- every caller refuses with the same words -------------------------------------------------

// Runs each operation with one bad parameter on backend and expects validate's own message.
void expectTheLibrarysWords(Backend& backend) {
  Image host = Image::host({1, 8, 8});
  for (int64_t i = 0; i < host.shape().count(); ++i) host.data()[i] = float(i % 5);
  const Image image = backend.upload(host);
  Image psf = Image::host({1, 3, 3});
  psf.at(0, 1, 1) = 1.0f;
  auto same = [](const std::function<void()>& run, const std::function<void()>& check) {
    std::string got = "(accepted)", want = "(accepted)";
    try {
      run();
    } catch (const InvalidArgument& e) {
      got = e.what();
    }
    try {
      check();
    } catch (const InvalidArgument& e) {
      want = e.what();
    }
    EXPECT_EQ(got, want);
    EXPECT_NE(want, "(accepted)");
  };
  same([&] { backend.medianFilter(image, 4); }, [] { validateMedianSize(4); });
  const OutlierParams outliers{3, -1.0, OutlierMode::Both};
  same([&] { backend.removeOutliers(image, outliers); }, [&] { validate(outliers); });
  const BlurParams blur{0, 0.0, 1.0, 4.0, false};
  same([&] { backend.gaussianBlur(image, blur); }, [&] { validate(blur); });
  DeconvolveParams rl;
  rl.iterations = 0;
  same([&] { backend.richardsonLucy(image, psf, rl); }, [&] { validate(rl); });
  const ClipParams clip{-1.0, 3.0, 10};
  same([&] { backend.sigmaClip(image, clip); }, [&] { validate(clip); });
  SegmentParams segment;
  segment.connectivity = 6;
  same([&] { backend.segment(image, segment); }, [&] { validate(segment); });
  const ResampleParams resample{1, 1, 1, 2};
  same([&] { backend.resample(image, resample); }, [&] { validate(resample); });
}

TEST(Parameters, TheCpuBackendRefusesInTheLibrarysWords) {
  auto cpu = makeCpuBackend(1);
  expectTheLibrarysWords(*cpu);
}

class ParametersOnGpu : public stacklens::testing::GpuTest {};

TEST_F(ParametersOnGpu, TheCudaBackendRefusesInTheLibrarysWords) { expectTheLibrarysWords(*gpu); }

TEST(Parameters, ThePipelineRefusesInTheLibrarysWords) {
  auto cpu = makeCpuBackend(1);
  Pipeline p;
  p.outliers.enabled = true;
  p.outliers.params.threshold = -3;
  try {
    runPipeline(*cpu, Image::host({1, 4, 4}), 0, p);
    ADD_FAILURE() << "accepted";
  } catch (const InvalidParameter& e) {
    EXPECT_EQ(e.parameter(), "threshold");
    EXPECT_EQ(std::string(e.what()), "outlier threshold must be finite and ≥ 0, got -3");
  }
}

// ---- the texts --------------------------------------------------------------------------------

TEST(ParamsText, SaysEveryParameter) {
  EXPECT_EQ(describeMedianSize(5), "size=5");
  EXPECT_EQ(describe(OutlierParams{5, 2.5, OutlierMode::Bright}),
            "size=5 threshold=2.5 mode=bright");
  EXPECT_EQ(describe(BlurParams{0, 2, 2, 4, false}), "sigma=0,2,2 truncate=4");
  EXPECT_EQ(describe(BlurParams{1, 2, 3, 3.5, true}), "sigma=1,2,3 truncate=3.5 nan-aware");
  EXPECT_EQ(describe(DeconvolveParams{}), "2d iterations=20 boundary=reflect");
  DeconvolveParams rl;
  rl.threeD = true;
  rl.boundary = Boundary::Periodic;
  rl.tvLambda = 0.01;
  rl.accelerate = true;
  rl.epsilon = 1e-6f;
  EXPECT_EQ(describe(rl), "3d iterations=20 boundary=periodic tv=0.01 accelerated epsilon=1e-06");
  EXPECT_EQ(describe(ClipParams{2.5, 3, 0}), "kappa=2.5,3 max-iterations=0");
  SegmentParams s;
  EXPECT_EQ(describe(s), "nsigma=5 connectivity=8 min-pixels=1 kappa=3,3 max-iterations=10");
  s.absoluteThreshold = 12.5;
  s.connectivity = 4;
  EXPECT_EQ(describe(s), "threshold=12.5 connectivity=4 min-pixels=1 kappa=3,3 max-iterations=10");
  EXPECT_EQ(describe(ResampleParams{1, 2, 0.5, 1}), "zoom=1,2,0.5 order=1");
  EXPECT_EQ(describe(ProjectParams{Projection::Median, 2, 7}), "op=median first=2 last=7");
  MomentParams m;
  m.order = 1;
  m.last = 9;
  EXPECT_EQ(describe(m), "order=1 first=0 last=9");
  m.clip = 0.25;
  EXPECT_EQ(describe(m), "order=1 first=0 last=9 clip=0.25");
}

TEST(ParamsText, ExactDigitsTellApartWhatReadableOnesRound) {
  const BlurParams p{0, 0.1 + 0.2, 1.0 / 3.0, 4, false};
  EXPECT_EQ(describe(p), "sigma=0,0.3,0.333333 truncate=4");
  EXPECT_EQ(describe(p, Digits::Exact),
            "sigma=0,0.30000000000000004,0.3333333333333333 truncate=4");
  DeconvolveParams rl;
  rl.epsilon = 1.0f / 3.0f;
  EXPECT_EQ(describe(rl, Digits::Exact), "2d iterations=20 boundary=reflect epsilon=0.33333334");
}

TEST(ParamsText, ThePipelineSaysEachStageAsItsParametersDo) {
  Pipeline p;
  p.median.enabled = true;
  p.blur.enabled = true;
  p.blur.params.sigmaY = 0.1 + 0.2;
  p.segmentation.enabled = true;
  EXPECT_EQ(p.describe(), "median " + describeMedianSize(3) + " -> blur " +
                              describe(p.blur.params) + " -> segmentation " +
                              describe(p.segmentation.params));
  EXPECT_EQ(p.fingerprint(), "median size=3 -> blur " + describe(p.blur.params, Digits::Exact) +
                                 " -> segmentation " +
                                 describe(p.segmentation.params, Digits::Exact));
  Pipeline q = p;
  q.blur.params.sigmaY = 0.3;  // reads the same, blurs otherwise
  EXPECT_EQ(q.describe(), p.describe());
  EXPECT_NE(q.fingerprint(), p.fingerprint());
}

}  // namespace
