// Outlier removal on the CPU: closed cases per mode, a brute-force reference, NaN, bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "brute_force.h"
#include "compute/backend.h"
#include "compute/cpu/operations.h"

namespace {

using namespace stacklens::compute;
using stacklens::compute::cpu::ThreadPool;

const float kNaN = std::numeric_limits<float>::quiet_NaN();

// Finite inputs only: a plain sort gives the median.
Image bruteForceOutliers(const Image& in, const OutlierParams& p) {
  const Shape s = in.shape();
  Image out = Image::host(s);
  std::vector<float> window;
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        brute_force::neighbourhood(in, z, y, x, p.size, window);
        std::sort(window.begin(), window.end());
        const float m = window[window.size() / 2], v = in.at(z, y, x);
        const double d = double(v) - double(m);
        const bool outlier = p.mode == OutlierMode::Bright ? d > p.threshold
                             : p.mode == OutlierMode::Dark ? -d > p.threshold
                                                           : std::fabs(d) > p.threshold;
        out.at(z, y, x) = outlier ? m : v;
      }
  return out;
}

Image spikyImage(Shape shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(10.0f, 1.0f);
  std::uniform_int_distribution<int> spike(0, 19);
  Image image = Image::host(shape);
  for (int64_t i = 0; i < shape.count(); ++i) {
    float v = noise(rng);
    const int s = spike(rng);
    if (s == 0) v += 20;
    if (s == 1) v -= 20;
    image.data()[i] = v;
  }
  return image;
}

void expectEqual(const Image& a, const Image& b) {
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.shape().count(); ++i) {
    if (std::isnan(b.data()[i]))
      ASSERT_TRUE(std::isnan(a.data()[i])) << i;
    else
      ASSERT_EQ(a.data()[i], b.data()[i]) << i;
  }
}

TEST(Outliers, ReplacesOnlyTheChosenDirection) {
  ThreadPool pool(1);
  Image in = Image::host({1, 7, 7});
  std::fill(in.data(), in.data() + 49, 5.0f);
  in.at(0, 2, 2) = 100.0f;
  in.at(0, 4, 5) = -90.0f;  // both deviate by exactly 95
  in.at(0, 6, 0) = 5.5f;    // a small deviation below every threshold used
  Image want = Image::host({1, 7, 7});
  std::copy(in.data(), in.data() + 49, want.data());

  Image bright = cpu::removeOutliers(in, {3, 1.0, OutlierMode::Bright}, {}, pool);
  want.at(0, 2, 2) = 5.0f;
  expectEqual(bright, want);
  Image both = cpu::removeOutliers(in, {3, 1.0, OutlierMode::Both}, {}, pool);
  want.at(0, 4, 5) = 5.0f;
  expectEqual(both, want);
  Image dark = cpu::removeOutliers(in, {3, 1.0, OutlierMode::Dark}, {}, pool);
  want.at(0, 2, 2) = 100.0f;
  expectEqual(dark, want);
  // A threshold above every deviation changes nothing; exactly the deviation is not "more than".
  expectEqual(cpu::removeOutliers(in, {5, 200.0, OutlierMode::Both}, {}, pool), in);
  expectEqual(cpu::removeOutliers(in, {3, 95.0, OutlierMode::Both}, {}, pool), in);
}

TEST(Outliers, MatchesBruteForceForEveryModeAndSize) {
  ThreadPool pool(2);
  unsigned seed = 1;
  for (Shape s : {Shape{1, 1, 1}, Shape{1, 3, 17}, Shape{2, 19, 23}, Shape{1, 9, 130}})
    for (int k : {1, 3, 5, 7, 17})
      for (OutlierMode mode : {OutlierMode::Bright, OutlierMode::Dark, OutlierMode::Both})
        for (double t : {0.0, 3.0}) {
          if ((k == 17 && s.count() > 100) || (t == 0.0 && mode != OutlierMode::Both)) continue;
          const Image in = spikyImage(s, seed++);
          OutlierParams p{k, t, mode};
          expectEqual(cpu::removeOutliers(in, p, {}, pool), bruteForceOutliers(in, p));
        }
}

TEST(Outliers, NanPixelsAndNanMediansKeepTheValue) {
  ThreadPool pool(1);
  Image in = Image::host({1, 5, 5});
  std::fill(in.data(), in.data() + 25, 1.0f);
  in.at(0, 2, 2) = kNaN;
  Image out = cpu::removeOutliers(in, {3, 0.0, OutlierMode::Both}, {}, pool);
  EXPECT_TRUE(std::isnan(out.at(0, 2, 2)));
  EXPECT_EQ(out.at(0, 2, 3), 1.0f);
  // Most of the window NaN: the median is NaN, so the finite pixel is kept.
  Image holes = Image::host({1, 3, 3});
  std::fill(holes.data(), holes.data() + 9, kNaN);
  holes.at(0, 1, 1) = 7.0f;
  EXPECT_EQ(cpu::removeOutliers(holes, {3, 0.0, OutlierMode::Both}, {}, pool).at(0, 1, 1), 7.0f);
}

TEST(Outliers, RejectsInvalidParametersByName) {
  ThreadPool pool(1);
  const Image in = spikyImage({1, 4, 4}, 2);
  auto expectInvalid = [&](OutlierParams p, const std::string& word) {
    try {
      cpu::removeOutliers(in, p, {}, pool);
      ADD_FAILURE() << "accepted " << word;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  expectInvalid({3, -1.0, OutlierMode::Both}, "threshold");
  expectInvalid({3, std::nan(""), OutlierMode::Both}, "threshold");
  expectInvalid({4, 1.0, OutlierMode::Both}, "size");
  expectInvalid({0, 1.0, OutlierMode::Both}, "size");
  EXPECT_THROW(cpu::removeOutliers(Image::host({1, 3, 0}), {}, {}, pool), InvalidArgument);
}

TEST(Outliers, RunsThroughTheBackendApi) {
  auto backend = makeCpuBackend(2);
  const Image in = spikyImage({1, 12, 9}, 3);
  OutlierParams p{3, 2.0, OutlierMode::Both};
  expectEqual(backend->download(backend->removeOutliers(in, p)), bruteForceOutliers(in, p));
}

}  // namespace
