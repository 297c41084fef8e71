// Sigma-clipped statistics against astropy references and a brute-force clipper written here.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "compute/cpu/operations.h"

namespace {

using namespace stacklens::compute;

const std::string kData = std::string(STACKLENS_TEST_DATA) + "/analysis/";

Image fromValues(const std::vector<float>& v, int64_t y, int64_t x) {
  Image im = Image::host({1, y, x});
  std::copy(v.begin(), v.end(), im.data());
  return im;
}

std::vector<float> readF32(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  in.seekg(0, std::ios::end);
  std::vector<float> v(static_cast<size_t>(in.tellg()) / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
  return v;
}

void expectClose(double got, double want, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what;
    return;
  }
  EXPECT_NEAR(got, want, 1e-6 * std::max(1.0, std::abs(want))) << what;
}

void expectSummary(const SummaryStats& got, const double* want, const std::string& what) {
  EXPECT_EQ(got.n, static_cast<int64_t>(want[0])) << what << " n";
  expectClose(got.mean, want[1], what + " mean");
  expectClose(got.median, want[2], what + " median");
  expectClose(got.std, want[3], what + " std");
  expectClose(got.min, want[4], what + " min");
  expectClose(got.max, want[5], what + " max");
}

// The textbook algorithm: sort the kept values every iteration.
ClipStats bruteForceClip(const std::vector<float>& data, double kl, double ku, int maxIter) {
  std::vector<double> kept;
  for (float v : data)
    if (std::isfinite(v)) kept.push_back(v);
  auto summary = [](std::vector<double> v) {
    SummaryStats s;
    s.n = static_cast<int64_t>(v.size());
    if (v.empty()) return s;
    double sum = 0;
    for (double x : v) sum += x;
    s.mean = sum / v.size();
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.std = std::sqrt(ss / v.size());
    s.min = *std::min_element(v.begin(), v.end());
    s.max = *std::max_element(v.begin(), v.end());
    const size_t h = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + h, v.end());
    const double upper = v[h];
    s.median = v.size() % 2 ? upper : 0.5 * (*std::max_element(v.begin(), v.begin() + h) + upper);
    return s;
  };
  ClipStats out;
  out.all = summary(kept);
  int it = 0;
  while (maxIter <= 0 || it < maxIter) {
    ++it;
    SummaryStats s = summary(kept);
    std::vector<double> next;
    for (double x : kept)
      if (x >= s.median - kl * s.std && x <= s.median + ku * s.std) next.push_back(x);
    bool changed = next.size() != kept.size();
    kept = next;
    if (!changed) break;
  }
  out.clipped = summary(kept);
  out.iterations = it;
  return out;
}

TEST(SigmaClip, MatchesAstropyOnCommittedCases) {
  std::ifstream expected(kData + "sigma_clip_expected.txt");
  ASSERT_TRUE(expected) << "missing reference";
  std::string line;
  int cases = 0;
  cpu::ThreadPool pool(2);
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
    std::vector<float> values = readF32(kData + "sigma_clip_" + name + ".f32");
    ASSERT_EQ(static_cast<int64_t>(values.size()), count) << name;
    ClipStats got = cpu::sigmaClip(fromValues(values, 1, count), {kl, ku, maxIter}, {}, pool);
    expectSummary(got.all, f, name + " all");
    expectSummary(got.clipped, f + 6, name + " clipped");
    EXPECT_EQ(got.iterations, iterations) << name;
    ++cases;
  }
  EXPECT_EQ(cases, 8);
}

TEST(SigmaClip, MatchesBruteForceOnALargeImageAcrossThreadCounts) {
  // Several parallel blocks (the block is 65536 values), NaN/Inf sprinkled in, outliers.
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(-3.0f, 0.5f);
  std::vector<float> v(421 * 397);
  for (float& x : v) x = noise(rng);
  for (size_t i = 0; i < v.size(); i += 97) v[i] += 40.0f * (i % 5);
  for (size_t i = 3; i < v.size(); i += 1013) v[i] = std::numeric_limits<float>::quiet_NaN();
  v[11] = std::numeric_limits<float>::infinity();
  ClipStats want = bruteForceClip(v, 2.5, 3.0, -1);
  for (int threads : {1, 2, 3}) {
    cpu::ThreadPool pool(threads);
    ClipStats got = cpu::sigmaClip(fromValues(v, 421, 397), {2.5, 3.0, -1}, {}, pool);
    double all[6] = {double(want.all.n), want.all.mean, want.all.median,
                     want.all.std,       want.all.min,  want.all.max};
    double kept[6] = {double(want.clipped.n), want.clipped.mean, want.clipped.median,
                      want.clipped.std,       want.clipped.min,  want.clipped.max};
    expectSummary(got.all, all, "all");
    expectSummary(got.clipped, kept, "clipped");
    EXPECT_EQ(got.iterations, want.iterations);
    EXPECT_GT(got.iterations, 1);
  }
}

TEST(SigmaClip, MatchesBruteForceOnAMillionValuesWhoseMedianMovesFar) {
  // Over 2^20 values the median search starts from a sampled window; a heavy one-sided tail
  // makes the clipped median move out of it, exercising the fallback and the regathered window.
  std::mt19937 rng(3);
  std::normal_distribution<float> noise(100.0f, 1.0f);
  std::exponential_distribution<float> tail(0.05f);
  std::vector<float> v(1030 * 1021);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 3 == 0 ? 100.0f + tail(rng) : noise(rng);
  v[5] = std::numeric_limits<float>::quiet_NaN();
  for (int maxIter : {6}) {
    ClipStats want = bruteForceClip(v, 2.0, 2.0, maxIter);
    cpu::ThreadPool pool(2);
    ClipStats got = cpu::sigmaClip(fromValues(v, 1030, 1021), {2.0, 2.0, maxIter}, {}, pool);
    double kept[6] = {double(want.clipped.n), want.clipped.mean, want.clipped.median,
                      want.clipped.std,       want.clipped.min,  want.clipped.max};
    expectSummary(got.clipped, kept, "clipped");
    EXPECT_NEAR(got.all.median, want.all.median, 1e-6 * std::abs(want.all.median));
    EXPECT_EQ(got.iterations, want.iterations);
    EXPECT_GT(want.clipped.median - 100.0, -1.0);
  }
}

// Compares every field with the brute-force clipper: counts and iterations exactly, the
// statistics to a relative 1e-9 of the data's scale (min and max and medians are data values
// or means of two, so they match to rounding).
void expectMatchesBruteForce(const std::vector<float>& v, double kl, double ku, int maxIter,
                             cpu::ThreadPool& pool, const std::string& what) {
  const ClipStats want = bruteForceClip(v, kl, ku, maxIter);
  const ClipStats got =
      cpu::sigmaClip(fromValues(v, 1, static_cast<int64_t>(v.size())), {kl, ku, maxIter}, {}, pool);
  auto same = [&](const SummaryStats& g, const SummaryStats& w, const std::string& set) {
    EXPECT_EQ(g.n, w.n) << what << " " << set << " n";
    if (w.n == 0) {
      EXPECT_TRUE(std::isnan(g.median) && std::isnan(g.std)) << what << " " << set;
      return;
    }
    const double scale = std::max({std::abs(w.min), std::abs(w.max), 1e-300});
    auto near = [&](double a, double b, const char* field) {
      EXPECT_NEAR(a, b, 1e-9 * scale) << what << " " << set << " " << field;
    };
    near(g.mean, w.mean, "mean");
    near(g.median, w.median, "median");
    near(g.std, w.std, "std");
    near(g.min, w.min, "min");
    near(g.max, w.max, "max");
  };
  same(got.all, want.all, "all");
  same(got.clipped, want.clipped, "clipped");
  EXPECT_EQ(got.iterations, want.iterations) << what;
}

TEST(SigmaClip, MatchesBruteForceOnAwkwardValueMixes) {
  // Small inputs of every awkward kind, many sizes, several thread counts: the buckets, the
  // partial edge buckets and the median inside a partial bucket all get exercised.
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float tiny = std::numeric_limits<float>::denorm_min();
  const float big = std::numeric_limits<float>::max();
  std::mt19937 rng(11);
  std::normal_distribution<float> noise(0.f, 1.f);
  std::uniform_int_distribution<int> pick(0, 99);
  cpu::ThreadPool pool1(1), pool3(3);
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
            x = r < 5 ? nan : r < 8 ? inf : r < 10 ? -inf : 10.f + noise(rng);
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
          const std::string what = "mix " + std::to_string(mix) + " size " + std::to_string(size) +
                                   " maxIter " + std::to_string(maxIter) + " kappa " +
                                   std::to_string(kappa.first);
          expectMatchesBruteForce(v, kappa.first, kappa.second, maxIter, cases % 2 ? pool1 : pool3,
                                  what);
          ++cases;
        }
    }
  EXPECT_EQ(cases, 8 * 10 * 3 * 3);
}

TEST(SigmaClip, OutliersTheKeySampleMissesStillCount) {
  // Over 2^15 values the key range comes from a strided sample; values beyond it (here off the
  // sample's stride) fall into the end buckets and must still be clipped exactly.
  std::mt19937 rng(5);
  std::normal_distribution<float> noise(20.f, 2.f);
  std::vector<float> v(300007);
  for (float& x : v) x = noise(rng);
  const float big = std::numeric_limits<float>::max();
  for (size_t i = 1; i < v.size(); i += 9973) v[i] = (i % 3 == 0) ? -big : 1e25f;
  v[7] = -std::numeric_limits<float>::denorm_min();
  v[13] = -0.f;
  v[17] = std::numeric_limits<float>::infinity();
  for (int threads : {1, 2}) {
    cpu::ThreadPool pool(threads);
    expectMatchesBruteForce(v, 3.0, 3.0, -1, pool, "threads " + std::to_string(threads));
    expectMatchesBruteForce(v, 1.0, 1.0, 4, pool, "threads " + std::to_string(threads));
  }
}

TEST(SigmaClip, AllValuesInOneBucketStillClipExactly) {
  // The key range comes from a strided sample (stride 4 here); when every sampled value is the
  // same, there is one key and one bucket, and each iteration scans it as a partial bucket.
  std::mt19937 rng(4);
  std::normal_distribution<float> noise(5.f, 1.f);
  std::vector<float> v(131072);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 4 == 0 ? 5.f : noise(rng);
  v[1] = 400.f;
  cpu::ThreadPool pool(2);
  expectMatchesBruteForce(v, 2.0, 2.0, -1, pool, "one bucket");
  const ClipStats got = cpu::sigmaClip(fromValues(v, 1, 131072), {2.0, 2.0, -1}, {}, pool);
  EXPECT_GT(got.iterations, 2);
}

TEST(SigmaClip, SignedZerosCountAsEqual) {
  // -0 and +0 compare equal, so a bound of +0 keeps -0 (and vice versa).
  std::vector<float> v = {-0.f, 0.f, -0.f, 0.f, 1.f, -1.f, 0.f, -0.f};
  cpu::ThreadPool pool(1);
  const ClipStats got = cpu::sigmaClip(fromValues(v, 1, 8), {0.0, 0.0, -1}, {}, pool);
  EXPECT_EQ(got.clipped.n, 6);  // κ = 0 keeps exactly the values equal to the median 0
  EXPECT_EQ(got.clipped.median, 0.0);
  EXPECT_EQ(got.clipped.std, 0.0);
  expectMatchesBruteForce(v, 0.0, 0.0, -1, pool, "signed zeros");
  // With only zeros and the smallest subnormals the keys tell every float apart, and -0 and +0
  // land in different buckets unless their keys are made equal.
  const float tiny = std::numeric_limits<float>::denorm_min();
  std::vector<float> w;
  for (int i = 0; i < 12; ++i) w.insert(w.end(), {-tiny, tiny});
  for (int i = 0; i < 20; ++i) w.insert(w.end(), {-0.f, 0.f});
  const ClipStats zeros = cpu::sigmaClip(fromValues(w, 1, 64), {0.0, 0.0, -1}, {}, pool);
  EXPECT_EQ(zeros.clipped.n, 40);
  expectMatchesBruteForce(w, 0.0, 0.0, -1, pool, "zeros and subnormals");
}

TEST(SigmaClip, MaxIterationsStopsEarly) {
  std::mt19937 rng(9);
  std::exponential_distribution<float> tail(1.f);
  std::vector<float> v(20000);
  for (float& x : v) x = tail(rng);
  cpu::ThreadPool pool(2);
  for (int maxIter : {1, 2, 5}) {
    const ClipStats got = cpu::sigmaClip(fromValues(v, 1, 20000), {2.0, 2.0, maxIter}, {}, pool);
    EXPECT_EQ(got.iterations, maxIter);
    expectMatchesBruteForce(v, 2.0, 2.0, maxIter, pool, "maxIter " + std::to_string(maxIter));
  }
  const ClipStats unlimited = cpu::sigmaClip(fromValues(v, 1, 20000), {2.0, 2.0, 0}, {}, pool);
  EXPECT_GT(unlimited.iterations, 5);
}

TEST(SigmaClip, CancellationStopsTheSetupAndTheIterations) {
  std::vector<float> v(100000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000) + (i % 7 ? 0.f : 1e4f);
  cpu::ThreadPool pool(2);
  std::atomic<bool> cancelled{true};
  EXPECT_THROW(cpu::sigmaClip(fromValues(v, 1, 100000), {}, Job(&cancelled), pool), Cancelled);
  // Cancelled from the first progress report, i.e. inside the iterations.
  cancelled = false;
  int reports = 0;
  Job job(&cancelled, [&](double) {
    ++reports;
    cancelled = true;
  });
  EXPECT_THROW(cpu::sigmaClip(fromValues(v, 1, 100000), {}, job, pool), Cancelled);
  EXPECT_EQ(reports, 1);
  // The cached scratch is still usable after an exception.
  cancelled = false;
  expectMatchesBruteForce(v, 3.0, 3.0, -1, pool, "after cancellation");
}

TEST(SigmaClip, MedianOfEvenCountIsTheMeanOfTheMiddlePair) {
  cpu::ThreadPool pool(1);
  ClipStats got = cpu::sigmaClip(fromValues({4, 1, 3, 2}, 2, 2), {3, 3, 10}, {}, pool);
  EXPECT_DOUBLE_EQ(got.all.median, 2.5);
  EXPECT_DOUBLE_EQ(got.all.mean, 2.5);
  EXPECT_DOUBLE_EQ(got.all.std, std::sqrt(1.25));
}

TEST(SigmaClip, AllNanGivesEmptyStatistics) {
  cpu::ThreadPool pool(2);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ClipStats got = cpu::sigmaClip(fromValues({nan, nan, nan}, 1, 3), {}, {}, pool);
  EXPECT_EQ(got.all.n, 0);
  EXPECT_EQ(got.clipped.n, 0);
  EXPECT_TRUE(std::isnan(got.clipped.median));
  EXPECT_EQ(got.iterations, 1);
}

TEST(SigmaClip, KappaBelowOneCanClipEverything) {
  // Two values: median in the middle, σ half the gap; κ = 0.5 keeps neither.
  cpu::ThreadPool pool(1);
  ClipStats got = cpu::sigmaClip(fromValues({1, 3}, 1, 2), {0.5, 0.5, -1}, {}, pool);
  EXPECT_EQ(got.clipped.n, 0);
  EXPECT_EQ(got.iterations, 2);  // as astropy: the step that empties, then one that does nothing
}

TEST(SigmaClip, RejectsBadParametersAndEmptyImages) {
  cpu::ThreadPool pool(1);
  Image one = fromValues({1}, 1, 1);
  EXPECT_THROW(cpu::sigmaClip(one, {-1, 3, 5}, {}, pool), InvalidArgument);
  EXPECT_THROW(cpu::sigmaClip(one, {3, std::nan(""), 5}, {}, pool), InvalidArgument);
  EXPECT_THROW(cpu::sigmaClip(Image::host({1, 0, 0}), {}, {}, pool), InvalidArgument);
}

TEST(SigmaClip, BackendForwardsToTheCpuImplementation) {
  auto backend = makeCpuBackend(2);
  ClipStats got = backend->sigmaClip(fromValues({1, 2, 3, 100}, 1, 4), {2.0, 2.0, -1});
  EXPECT_EQ(got.clipped.n, 3);
  EXPECT_DOUBLE_EQ(got.clipped.median, 2.0);
}

}  // namespace
