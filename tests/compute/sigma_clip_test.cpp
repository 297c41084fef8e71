// Sigma-clipped statistics on every backend against one reference (clip_reference.h) and astropy
// data: iteration limits, even counts, crowded values, zeros, NaN, bad input; CUDA against the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "compute/backend.h"
#include "tests/compute/clip_reference.h"
#include "tests/compute/filter_reference.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"
#include "tests/compute/test_values.h"

namespace {

using stacklens::testing::kAnalysisData;
using stacklens::testing::kNaN;
using namespace stacklens::compute;
using stacklens::testing::clipReference;
using stacklens::testing::expectClipOnScale;
using stacklens::testing::expectStatsNear;
using stacklens::testing::readReference;
using stacklens::testing::readReferenceImage;
using stacklens::testing::skyImage;

Image fromValues(const std::vector<float>& v, int64_t y, int64_t x) {
  Image im = Image::host({1, y, x});
  std::copy(v.begin(), v.end(), im.data());
  return im;
}

Image row(const std::vector<float>& v) { return fromValues(v, 1, int64_t(v.size())); }

std::vector<float> readF32(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  in.seekg(0, std::ios::end);
  std::vector<float> v(static_cast<size_t>(in.tellg()) / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
  return v;
}

class SigmaClip : public stacklens::testing::OnEachBackend {
 protected:
  // CUDA sums in another order than the CPU: its statistics are held to 1e-5 relative, as its
  // own tests always held them.
  double tolerance(double onCpu) const {
    return GetParam() == "cuda" ? std::max(onCpu, 1e-5) : onCpu;
  }
};
STACKLENS_ON_EACH_BACKEND(SigmaClip);

TEST_P(SigmaClip, MatchesAstropyOnCommittedCases) {
  // Prepare
  std::ifstream expected(kAnalysisData + "sigma_clip_expected.txt");
  ASSERT_TRUE(expected) << "missing reference";
  const double tol = tolerance(1e-6);
  auto expectClose = [&](double got, double want, const std::string& what) {
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got)) << what;
    else
      EXPECT_NEAR(got, want, tol * std::max(1.0, std::abs(want))) << what;
  };
  auto expectSummary = [&](const SummaryStats& got, const double* want, const std::string& what) {
    EXPECT_EQ(got.n, static_cast<int64_t>(want[0])) << what << " n";
    expectClose(got.mean, want[1], what + " mean");
    expectClose(got.median, want[2], what + " median");
    expectClose(got.std, want[3], what + " std");
    expectClose(got.min, want[4], what + " min");
    expectClose(got.max, want[5], what + " max");
  };
  std::string line;
  int cases = 0;
  while (std::getline(expected, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name;
    double kl, ku, f[12];
    int maxIter, iterations;
    int64_t count;
    fields >> name >> kl >> ku >> maxIter >> count;
    for (double& v : f) fields >> v;
    fields >> iterations;
    ASSERT_TRUE(fields) << line;
    const std::vector<float> values = readF32(kAnalysisData + "sigma_clip_" + name + ".f32");
    ASSERT_EQ(static_cast<int64_t>(values.size()), count) << name;

    // Run
    const ClipStats got = backend->sigmaClip(fromValues(values, 1, count), {kl, ku, maxIter});

    // Verify
    expectSummary(got.all, f, name + " all");
    expectSummary(got.clipped, f + 6, name + " clipped");
    EXPECT_EQ(got.iterations, iterations) << name;
    ++cases;
  }
  EXPECT_EQ(cases, 8);
}

TEST_P(SigmaClip, MatchesAstropyOnAnImageWithANan) {
  // Prepare
  const Shape s{1, 40, 50};
  const Image in = readReferenceImage("cuda_clip_in.f32", s);
  const std::vector<double> want = readReference<double>("cuda_clip_stats.f64", 6);
  ClipParams p;
  p.maxIterations = -1;

  // Run
  const ClipStats st = backend->sigmaClip(in, p);

  // Verify
  EXPECT_EQ(st.clipped.n, static_cast<int64_t>(want[0]));
  EXPECT_NEAR(st.clipped.mean, want[1], 1e-5 * std::abs(want[1]));
  EXPECT_NEAR(st.clipped.median, want[2], 1e-5 * std::abs(want[2]));
  EXPECT_NEAR(st.clipped.std, want[3], 1e-5 * want[3]);
  EXPECT_FLOAT_EQ(static_cast<float>(st.clipped.min), static_cast<float>(want[4]));
  EXPECT_FLOAT_EQ(static_cast<float>(st.clipped.max), static_cast<float>(want[5]));
  EXPECT_EQ(st.all.n, s.count() - 1);  // the NaN is not a value
  EXPECT_GE(st.iterations, 2);
}

TEST_P(SigmaClip, MatchesTheReferenceOnALargeImageWithNanAndInfinities) {
  // Prepare
  const std::vector<float> v = stacklens::testing::clipSampleWithOutliersAndGaps();
  const ClipParams p{2.5, 3.0, -1};

  // Run
  const ClipStats got = backend->sigmaClip(fromValues(v, 421, 397), p);

  // Verify
  const ClipStats want = clipReference(v, p);
  expectStatsNear(got.all, want.all, tolerance(1e-6), "all");
  expectStatsNear(got.clipped, want.clipped, tolerance(1e-6), "clipped");
  EXPECT_EQ(got.iterations, want.iterations);
  EXPECT_GT(got.iterations, 1);
}

TEST_P(SigmaClip, MatchesTheReferenceOnAMillionValuesWhoseMedianMovesFar) {
  // Prepare: over 2^20 values the CPU's median search starts from a sampled window; a heavy
  // one-sided tail makes the clipped median move out of it (the fallback and a regathered window).
  std::mt19937 rng(3);
  std::normal_distribution<float> noise(100.0f, 1.0f);
  std::exponential_distribution<float> tail(0.05f);
  std::vector<float> v(1030 * 1021);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 3 == 0 ? 100.0f + tail(rng) : noise(rng);
  v[5] = kNaN;
  const ClipParams p{2.0, 2.0, 6};

  // Run
  const ClipStats got = backend->sigmaClip(fromValues(v, 1030, 1021), p);

  // Verify
  const ClipStats want = clipReference(v, p);
  expectStatsNear(got.clipped, want.clipped, tolerance(1e-6), "clipped");
  EXPECT_NEAR(got.all.median, want.all.median, tolerance(1e-6) * std::abs(want.all.median));
  EXPECT_EQ(got.iterations, want.iterations);
  EXPECT_GT(want.clipped.median - 100.0, -1.0);
}

TEST_P(SigmaClip, MatchesTheReferenceOnAwkwardValueMixes) {
  // Prepare: small inputs of every awkward kind and many sizes (on the CPU: the buckets, the
  // partial edge buckets and the median inside a partial bucket).
  const float inf = std::numeric_limits<float>::infinity();
  const float tiny = std::numeric_limits<float>::denorm_min();
  const float big = std::numeric_limits<float>::max();
  std::mt19937 rng(11);
  std::normal_distribution<float> noise(0.f, 1.f);
  std::uniform_int_distribution<int> pick(0, 99);
  int cases = 0;
  for (int mix = 0; mix < 8; ++mix)
    for (int size : {1, 2, 3, 5, 16, 17, 100, 257, 1000, 4099}) {
      std::vector<float> v(static_cast<size_t>(size));
      for (float& x : v) {
        const int r = pick(rng);
        switch (mix) {
          case 0:  // Gaussian with outliers
            x = r < 5 ? 50.f * noise(rng) : noise(rng);
            break;
          case 1:  // signed zeros and tiny values around them
            x = r < 30 ? 0.f : r < 60 ? -0.f : r < 80 ? 1e-3f * noise(rng) : noise(rng);
            break;
          case 2:  // subnormals only (a few zeros)
            x = r < 10 ? 0.f : tiny * static_cast<float>(1 + r * 1000) * (r % 2 ? -1.f : 1.f);
            break;
          case 3:  // huge dynamic range
            x = r < 3 ? (r % 2 ? -big : big) : r < 10 ? 1e30f * noise(rng) : noise(rng);
            break;
          case 4:  // non-finite values sprinkled in
            x = r < 5 ? kNaN : r < 8 ? inf : r < 10 ? -inf : 10.f + noise(rng);
            break;
          case 5:  // heavy duplicates: few distinct values
            x = static_cast<float>(r % 4) + (r < 3 ? 100.f : 0.f);
            break;
          case 6:  // one narrow cluster far from zero (all in few keys) plus a far tail
            x = r < 2 ? 1e6f : 1000.f + 1e-4f * static_cast<float>(r % 7);
            break;
          default:  // constant
            x = 3.25f;
        }
      }
      for (int maxIter : {-1, 1, 3})
        for (auto kappa : {std::pair{3.0, 3.0}, std::pair{1.5, 2.5}, std::pair{0.7, 0.4}}) {
          const ClipParams p{kappa.first, kappa.second, maxIter};
          const std::string what = "mix " + std::to_string(mix) + " size " + std::to_string(size) +
                                   " maxIter " + std::to_string(maxIter) + " kappa " +
                                   std::to_string(kappa.first);

          // Run
          const ClipStats got = backend->sigmaClip(row(v), p);

          // Verify
          expectClipOnScale(got, clipReference(v, p), tolerance(1e-9), what);
          ++cases;
        }
    }
  EXPECT_EQ(cases, 8 * 10 * 3 * 3);
}

TEST_P(SigmaClip, OutliersTheKeySampleMissesStillCount) {
  // Prepare: over 2^15 values the CPU's key range comes from a strided sample; values beyond it
  // (here off the sample's stride) fall into the end buckets and must still be clipped exactly.
  std::mt19937 rng(5);
  std::normal_distribution<float> noise(20.f, 2.f);
  std::vector<float> v(300007);
  for (float& x : v) x = noise(rng);
  const float big = std::numeric_limits<float>::max();
  for (size_t i = 1; i < v.size(); i += 9973) v[i] = (i % 3 == 0) ? -big : 1e25f;
  v[7] = -std::numeric_limits<float>::denorm_min();
  v[13] = -0.f;
  v[17] = std::numeric_limits<float>::infinity();

  for (const ClipParams& p : {ClipParams{3.0, 3.0, -1}, ClipParams{1.0, 1.0, 4}}) {
    // Run
    const ClipStats got = backend->sigmaClip(row(v), p);

    // Verify
    expectClipOnScale(got, clipReference(v, p), tolerance(1e-9),
                      "kappa " + std::to_string(p.kappaLower));
  }
}

TEST_P(SigmaClip, AllValuesInOneBucketStillClipExactly) {
  // Prepare: the CPU's key range comes from a strided sample (stride 4 here); when every sampled
  // value is the same, there is one key and one bucket, scanned each iteration as a partial one.
  std::mt19937 rng(4);
  std::normal_distribution<float> noise(5.f, 1.f);
  std::vector<float> v(131072);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 4 == 0 ? 5.f : noise(rng);
  v[1] = 400.f;
  const ClipParams p{2.0, 2.0, -1};

  // Run
  const ClipStats got = backend->sigmaClip(row(v), p);

  // Verify
  expectClipOnScale(got, clipReference(v, p), tolerance(1e-9), "one bucket");
  EXPECT_GT(got.iterations, 2);
}

TEST_P(SigmaClip, MatchesTheReferenceForIterationLimitsAndEvenCounts) {
  // Prepare
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(100.f, 5.f);
  Image in = Image::host({2, 60, 64});  // even count: the median averages two values
  for (int64_t i = 0; i < in.shape().count(); ++i) in.data()[i] = noise(rng);
  for (int64_t i = 0; i < in.shape().count(); i += 37) in.data()[i] += 80.f;
  for (int64_t i = 5; i < in.shape().count(); i += 101) in.data()[i] -= 60.f;
  in.data()[3] = INFINITY;

  for (int iters : {1, 2, 10, 0}) {
    ClipParams p;
    p.kappaLower = 2.5;
    p.kappaUpper = 3.0;
    p.maxIterations = iters;

    // Run
    const ClipStats got = backend->sigmaClip(in, p);

    // Verify
    const ClipStats want = clipReference(in, p);
    EXPECT_EQ(got.iterations, want.iterations) << iters;
    expectStatsNear(got.all, want.all, 1e-5, "all");
    expectStatsNear(got.clipped, want.clipped, 1e-5, "clipped");
  }
}

// Two ways to the median's last digits on CUDA: from the guessed top-digit bin's keys (up to
// 65536 of them) or by full passes when the guess misses or the bin holds more. A crowded bin
// (140 000 values in [1, 1.25): one top digit) and a median that moves between bins across
// iterations take both ways; an odd count picks one middle value.
TEST_P(SigmaClip, CrowdedValuesAndAMovingMedianMatchTheReference) {
  // Prepare
  std::mt19937 rng(17);
  Image crowded = Image::host({1, 301, 501});
  std::uniform_real_distribution<float> inBin(1.f, 1.25f), wide(-40.f, 60.f);
  for (int64_t i = 0; i < crowded.shape().count(); ++i)
    crowded.data()[i] = i % 15 == 0 ? wide(rng) : inBin(rng);
  Image moving = Image::host({1, 201, 333});
  std::exponential_distribution<float> tail(0.05f);
  std::normal_distribution<float> core(0.f, 0.01f);
  for (int64_t i = 0; i < moving.shape().count(); ++i)
    moving.data()[i] = i % 4 == 0 ? tail(rng) : core(rng);

  for (const Image* in : std::vector<const Image*>{&crowded, &moving})
    for (int iters : {3, 0}) {
      ClipParams p;
      p.kappaLower = 2.0;
      p.kappaUpper = 2.0;
      p.maxIterations = iters;

      // Run
      const ClipStats got = backend->sigmaClip(*in, p);

      // Verify
      const ClipStats want = clipReference(*in, p);
      EXPECT_EQ(got.iterations, want.iterations) << iters;
      expectStatsNear(got.all, want.all, 1e-5, "all");
      expectStatsNear(got.clipped, want.clipped, 1e-5, "clipped");
      EXPECT_EQ(got.clipped.n, want.clipped.n);
    }
}

TEST_P(SigmaClip, SignedZerosCountAsEqual) {
  // Prepare: -0 and +0 compare equal, so a bound of +0 keeps -0 (and vice versa).
  const std::vector<float> v = {-0.f, 0.f, -0.f, 0.f, 1.f, -1.f, 0.f, -0.f};
  // With only zeros and the smallest subnormals the CPU's keys tell every float apart, and -0
  // and +0 land in different buckets unless their keys are made equal.
  const float tiny = std::numeric_limits<float>::denorm_min();
  std::vector<float> w;
  for (int i = 0; i < 12; ++i) w.insert(w.end(), {-tiny, tiny});
  for (int i = 0; i < 20; ++i) w.insert(w.end(), {-0.f, 0.f});
  const ClipParams p{0.0, 0.0, -1};

  // Run
  const ClipStats got = backend->sigmaClip(row(v), p);
  const ClipStats zeros = backend->sigmaClip(row(w), p);

  // Verify
  EXPECT_EQ(got.clipped.n, 6);  // κ = 0 keeps exactly the values equal to the median 0
  EXPECT_EQ(got.clipped.median, 0.0);
  EXPECT_EQ(got.clipped.std, 0.0);
  expectClipOnScale(got, clipReference(v, p), tolerance(1e-9), "signed zeros");
  EXPECT_EQ(zeros.clipped.n, 40);
  expectClipOnScale(zeros, clipReference(w, p), tolerance(1e-9), "zeros and subnormals");
}

TEST_P(SigmaClip, MaxIterationsStopsEarly) {
  // Prepare
  std::mt19937 rng(9);
  std::exponential_distribution<float> tail(1.f);
  std::vector<float> v(20000);
  for (float& x : v) x = tail(rng);

  for (int maxIter : {1, 2, 5}) {
    // Run
    const ClipStats got = backend->sigmaClip(row(v), {2.0, 2.0, maxIter});

    // Verify
    EXPECT_EQ(got.iterations, maxIter);
    expectClipOnScale(got, clipReference(v, {2.0, 2.0, maxIter}), tolerance(1e-9),
                      "maxIter " + std::to_string(maxIter));
  }

  // Run
  const ClipStats unlimited = backend->sigmaClip(row(v), {2.0, 2.0, 0});

  // Verify
  EXPECT_GT(unlimited.iterations, 5);
}

TEST_P(SigmaClip, MedianOfEvenCountIsTheMeanOfTheMiddlePair) {
  // Prepare
  const Image in = fromValues({4, 1, 3, 2}, 2, 2);

  // Run
  const ClipStats got = backend->sigmaClip(in, {3, 3, 10});

  // Verify
  EXPECT_DOUBLE_EQ(got.all.median, 2.5);
  EXPECT_DOUBLE_EQ(got.all.mean, 2.5);
  EXPECT_DOUBLE_EQ(got.all.std, std::sqrt(1.25));
}

TEST_P(SigmaClip, AllNanGivesEmptyStatistics) {
  // Prepare
  const Image in = fromValues({kNaN, kNaN, kNaN}, 1, 3);

  // Run
  const ClipStats got = backend->sigmaClip(in, {});

  // Verify
  EXPECT_EQ(got.all.n, 0);
  EXPECT_EQ(got.clipped.n, 0);
  EXPECT_TRUE(std::isnan(got.clipped.median));
  EXPECT_EQ(got.iterations, 1);
}

TEST_P(SigmaClip, KappaBelowOneCanClipEverything) {
  // Prepare: two values, median in the middle, σ half the gap; κ = 0.5 keeps neither.
  const Image in = fromValues({1, 3}, 1, 2);

  // Run
  const ClipStats got = backend->sigmaClip(in, {0.5, 0.5, -1});

  // Verify
  EXPECT_EQ(got.clipped.n, 0);
  EXPECT_EQ(got.iterations, 2);  // as astropy: the step that empties, then one that does nothing
}

TEST_P(SigmaClip, ClipsTheOneOutlierOfFourValues) {
  // Prepare
  const Image in = fromValues({1, 2, 3, 100}, 1, 4);

  // Run
  const ClipStats got = backend->sigmaClip(in, {2.0, 2.0, -1});

  // Verify
  EXPECT_EQ(got.clipped.n, 3);
  EXPECT_DOUBLE_EQ(got.clipped.median, 2.0);
}

TEST_P(SigmaClip, RejectsBadParametersAndEmptyImages) {
  // Prepare
  const Image one = fromValues({1}, 1, 1);

  // Run, Verify
  EXPECT_THROW(backend->sigmaClip(one, {-1, 3, 5}), InvalidArgument);
  EXPECT_THROW(backend->sigmaClip(one, {3, std::nan(""), 5}), InvalidArgument);
  EXPECT_THROW(backend->sigmaClip(Image::host({1, 0, 0}), {}), InvalidArgument);
}

TEST_P(SigmaClip, StopsWhenCancelled) {
  // Prepare
  std::vector<float> v(100000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000) + (i % 7 ? 0.f : 1e4f);
  std::atomic<bool> cancelled{true};

  // Run, Verify
  EXPECT_THROW(backend->sigmaClip(row(v), {}, Job(&cancelled)), Cancelled);
}

// The CUDA backend against the CPU backend on a fresh sky with a NaN.
class SigmaClipCudaAndCpu : public stacklens::testing::GpuTest {};

TEST_F(SigmaClipCudaAndCpu, AgreeOnAFreshSky) {
  // Prepare
  Image sky = skyImage(300, 6);
  sky.data()[10] = kNaN;
  auto expectStats = [](const SummaryStats& g, const SummaryStats& c, const std::string& what) {
    auto relative = [](double want) { return 1e-5 * std::max(std::abs(want), 1e-30); };
    EXPECT_EQ(g.n, c.n) << what;
    EXPECT_NEAR(g.mean, c.mean, relative(c.mean)) << what << " mean";
    EXPECT_NEAR(g.median, c.median, relative(c.median)) << what << " median";
    EXPECT_NEAR(g.std, c.std, relative(c.std)) << what << " std";
    EXPECT_EQ(g.min, c.min) << what;
    EXPECT_EQ(g.max, c.max) << what;
  };

  for (int iters : {1, 3, 0}) {
    ClipParams p;
    p.maxIterations = iters;

    // Run
    const ClipStats want = cpu->sigmaClip(sky, p);
    const ClipStats got = gpu->sigmaClip(sky, p);

    // Verify
    EXPECT_EQ(got.iterations, want.iterations);
    expectStats(got.all, want.all, "all");
    expectStats(got.clipped, want.clipped, "clipped");
  }
}

TEST_F(SigmaClipCudaAndCpu, BackToBackCallsEachReadTheirOwnResult) {
  // Prepare: two skies whose statistics differ, queued behind a blur that keeps the device busy,
  // so that a result read before its kernel has written it would be the other sky's.
  const Image skies[2] = {skyImage(400, 11), skyImage(700, 12)};
  ClipStats want[2];
  for (int k = 0; k < 2; ++k) want[k] = cpu->sigmaClip(skies[k], ClipParams{});
  ASSERT_NE(want[0].clipped.n, want[1].clipped.n);
  const Image onDevice[2] = {gpu->upload(skies[0]), gpu->upload(skies[1])};
  const Image busy = gpu->upload(skyImage(2048, 13));
  BlurParams wide;
  wide.sigmaY = wide.sigmaX = 12.0;

  for (int i = 0; i < 20; ++i) {
    // Run
    const int k = i % 2;
    if (i % 4 < 2) Image blurred = gpu->gaussianBlur(busy, wide);
    const ClipStats got = gpu->sigmaClip(onDevice[k], ClipParams{});

    // Verify
    ASSERT_EQ(got.iterations, want[k].iterations) << "call " << i;
    ASSERT_EQ(got.clipped.n, want[k].clipped.n) << "call " << i;
    EXPECT_NEAR(got.clipped.median, want[k].clipped.median, 1e-5 * std::abs(want[k].clipped.median))
        << "call " << i;
    EXPECT_NEAR(got.clipped.std, want[k].clipped.std, 1e-5 * want[k].clipped.std) << "call " << i;
  }
}

TEST_F(SigmaClipCudaAndCpu, AgreeOnASkyTooLargeToHoldOnChip) {
  // Prepare: more values than the SMs' shared memory holds on any current GPU (about 6.5 million
  // on an H200), so the CUDA backend streams them from device memory instead; also a view of
  // them that is not 16-byte aligned, which those passes compact first.
  Image sky = skyImage(3200, 7);
  sky.data()[12345] = kNaN;
  const int64_t n = sky.shape().count();
  Image device = gpu->upload(sky);
  Image unaligned({1, 1, n - 1}, Location::Cuda,
                  std::shared_ptr<float>(device.data() + 1, [device](float*) {}));
  Image tail = Image::host({1, 1, n - 1});
  std::copy(sky.data() + 1, sky.data() + n, tail.data());
  const ClipParams p;

  // Run
  const ClipStats gotWhole = gpu->sigmaClip(device, p), gotTail = gpu->sigmaClip(unaligned, p);

  // Verify
  for (const auto& [got, want] :
       {std::pair{gotWhole, cpu->sigmaClip(sky, p)}, std::pair{gotTail, cpu->sigmaClip(tail, p)}}) {
    EXPECT_EQ(got.iterations, want.iterations);
    for (const auto& [g, c] :
         {std::pair{got.all, want.all}, std::pair{got.clipped, want.clipped}}) {
      EXPECT_EQ(g.n, c.n);
      EXPECT_NEAR(g.mean, c.mean, 1e-5 * std::abs(c.mean));
      EXPECT_NEAR(g.median, c.median, 1e-5 * std::abs(c.median));
      EXPECT_NEAR(g.std, c.std, 1e-5 * c.std);
      EXPECT_EQ(g.min, c.min);
      EXPECT_EQ(g.max, c.max);
    }
  }
}

}  // namespace
