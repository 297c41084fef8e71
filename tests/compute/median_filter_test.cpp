// Median filter on the CPU: a brute-force reflect reference, SciPy data, NaN order, bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "brute_force.h"
#include "compute/backend.h"
#include "compute/cpu/operations.h"
#include "filter_reference.h"

namespace {

using namespace stacklens::compute;
using stacklens::compute::cpu::ThreadPool;

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// Values with many ties, both signs, ±0 and, when asked, NaN and ±Inf.
Image randomImage(Shape shape, unsigned seed, bool specials = false) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(-6, 6);
  Image image = Image::host(shape);
  for (int64_t i = 0; i < shape.count(); ++i) {
    int v = pick(rng);
    float f = 0.5f * float(v);
    if (v == 0) f = (i % 2) ? -0.0f : 0.0f;
    if (specials && v == 6) f = kNaN;
    if (specials && v == 5) f = kInf;
    if (specials && v == -6) f = -kInf;
    image.data()[i] = f;
  }
  return image;
}

// The documented order: NaN above +Inf, -0 below +0, otherwise numeric.
bool totalLess(float a, float b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  if (a == b) return std::signbit(a) && !std::signbit(b);
  return a < b;
}

Image bruteForceMedian(const Image& in, int k) {
  const Shape s = in.shape();
  Image out = Image::host(s);
  std::vector<float> window;
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        brute_force::neighbourhood(in, z, y, x, k, window);
        std::sort(window.begin(), window.end(), totalLess);
        out.at(z, y, x) = window[window.size() / 2];
      }
  return out;
}

// Same value (NaN matches NaN; the sign of zero must match too: the median is a window value).
void expectSame(const Image& actual, const Image& expected, const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  int reported = 0;
  for (int64_t i = 0; i < expected.shape().count(); ++i) {
    const float a = actual.data()[i], e = expected.data()[i];
    const bool ok = std::isnan(e) ? std::isnan(a) : (a == e && std::signbit(a) == std::signbit(e));
    if (!ok && reported++ < 5)
      ADD_FAILURE() << what << " index " << i << ": got " << a << ", want " << e;
  }
}

TEST(MedianFilter, MatchesBruteForceReflectOnManyShapesAndSizes) {
  ThreadPool pool(2);
  const std::vector<Shape> shapes{{1, 1, 1},   {1, 1, 9},   {1, 9, 1},   {1, 2, 3},  {2, 7, 8},
                                  {1, 13, 10}, {1, 4, 150}, {1, 21, 70}, {1, 6, 413}};
  unsigned seed = 1;
  for (const Shape& s : shapes)
    for (int k : {1, 3, 5, 7, 9, 15, 17}) {
      if (k >= 15 && s.count() > 600) continue;  // the brute force is slow there; small shapes do
      const Image in = randomImage(s, seed++);
      expectSame(
          cpu::medianFilter(in, k, {}, pool), bruteForceMedian(in, k),
          "shape " + std::to_string(s.y) + "x" + std::to_string(s.x) + " k " + std::to_string(k));
    }
}

TEST(MedianFilter, MatchesBruteForceWithNanAndInfinities) {
  ThreadPool pool(2);
  unsigned seed = 100;
  for (int k : {3, 5, 7, 19}) {
    const Image in = randomImage(k < 19 ? Shape{2, 17, 75} : Shape{1, 9, 20}, seed++, true);
    expectSame(cpu::medianFilter(in, k, {}, pool), bruteForceMedian(in, k),
               "specials k " + std::to_string(k));
  }
}

TEST(MedianFilter, MatchesScipyMedianFilterReflect) {
  ThreadPool pool(2);
  const Image in = loadFilterReference("median_in", {2, 11, 14});
  for (int k : {3, 5, 7, 17})
    expectSame(cpu::medianFilter(in, k, {}, pool),
               loadFilterReference("median_k" + std::to_string(k), {2, 11, 14}),
               "scipy k " + std::to_string(k));
}

TEST(MedianFilter, NanRanksAboveInfinity) {
  ThreadPool pool(1);
  // The 3×3 window of the centre pixel is the whole image: 1..5 then four or five NaN.
  Image in = Image::host({1, 3, 3});
  const float four[9] = {1, kNaN, 2, kNaN, 3, kNaN, 4, kNaN, 5};
  std::copy(four, four + 9, in.data());
  EXPECT_EQ(cpu::medianFilter(in, 3, {}, pool).at(0, 1, 1), 5.0f);
  in.at(0, 0, 0) = kNaN;
  EXPECT_TRUE(std::isnan(cpu::medianFilter(in, 3, {}, pool).at(0, 1, 1)));
  in.at(0, 0, 0) = kInf;  // +Inf ranks below NaN: the fifth of Inf,2,3,4,5,NaN×4 is Inf
  EXPECT_EQ(cpu::medianFilter(in, 3, {}, pool).at(0, 1, 1), kInf);
  // A NaN with the sign bit set ranks as every other NaN, above +Inf, and comes out as NaN.
  for (int i = 1; i < 9; i += 2) in.data()[i] = std::copysign(kNaN, -1.0f);
  in.at(0, 0, 0) = 1.0f;
  EXPECT_EQ(cpu::medianFilter(in, 3, {}, pool).at(0, 1, 1), 5.0f);
  in.at(0, 0, 0) = kNaN;
  EXPECT_TRUE(std::isnan(cpu::medianFilter(in, 3, {}, pool).at(0, 1, 1)));
}

TEST(MedianFilter, SizeOneIsTheIdentity) {
  ThreadPool pool(1);
  const Image in = randomImage({2, 5, 6}, 7, true);
  expectSame(cpu::medianFilter(in, 1, {}, pool), in, "k 1");
}

TEST(MedianFilter, ResultDoesNotDependOnTheThreadCount) {
  ThreadPool one(1), three(3);
  const Image in = randomImage({3, 40, 90}, 8, true);
  for (int k : {3, 5})
    expectSame(cpu::medianFilter(in, k, {}, three), cpu::medianFilter(in, k, {}, one), "threads");
}

TEST(MedianFilter, RejectsEvenAndNonPositiveSizes) {
  ThreadPool pool(1);
  const Image in = randomImage({1, 5, 5}, 9);
  for (int k : {0, -1, -3, 2, 4}) {
    try {
      cpu::medianFilter(in, k, {}, pool);
      ADD_FAILURE() << "accepted size " << k;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("size"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(cpu::medianFilter(Image::host({1, 0, 3}), 3, {}, pool), InvalidArgument);
}

TEST(MedianFilter, StopsWhenCancelled) {
  ThreadPool pool(2);
  std::atomic<bool> cancel{true};
  EXPECT_THROW(cpu::medianFilter(randomImage({2, 8, 8}, 10), 3, Job(&cancel), pool), Cancelled);
}

TEST(MedianFilter, ReportsRisingProgressFromTheCallingThreadOnly) {
  const auto caller = std::this_thread::get_id();
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    std::vector<double> fractions;
    bool otherThread = false;
    Job job(nullptr, [&](double f) {
      if (std::this_thread::get_id() != caller)
        otherThread = true;
      else
        fractions.push_back(f);
    });
    cpu::medianFilter(randomImage({2, 300, 20}, 12), 5, job, pool);
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

TEST(MedianFilter, RunsThroughTheBackendApi) {
  auto backend = makeCpuBackend(2);
  const Image in = randomImage({1, 9, 12}, 11);
  expectSame(backend->download(backend->medianFilter(in, 5)), bruteForceMedian(in, 5), "backend");
}

}  // namespace
