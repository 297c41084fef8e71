// What the compute tests share for building and comparing images: uniform random images, images
// with ties, a small sky, the relative L2 distance, the largest difference, copies, closeness,
// equal values and bitwise equality.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "compute/image.h"

namespace stacklens::testing {

// Values uniform in [lo, hi) from a seeded Mersenne Twister (the same image for the same seed).
inline compute::Image randomImage(compute::Shape s, unsigned seed, float lo = 0.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  compute::Image im = compute::Image::host(s);
  for (int64_t i = 0; i < s.count(); ++i) im.data()[i] = d(rng);
  return im;
}

// Half-integers in [-3, 3] (many ties, both signs, -0 and +0) and, when asked, NaN and ±Inf:
// inputs for the order statistics.
inline compute::Image tiedImage(compute::Shape s, unsigned seed, bool specials = false) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(-6, 6);
  compute::Image im = compute::Image::host(s);
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < s.count(); ++i) {
    const int v = pick(rng);
    float f = 0.5f * float(v);
    if (v == 0) f = (i % 2) ? -0.0f : 0.0f;
    if (specials && v == 6) f = std::numeric_limits<float>::quiet_NaN();
    if (specials && v == 5) f = inf;
    if (specials && v == -6) f = -inf;
    im.data()[i] = f;
  }
  return im;
}

// Noise, 60 point sources and their wings, like a small radio sky: n × n, one slice.
inline compute::Image skyImage(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.f, 0.0133f);
  std::uniform_int_distribution<int64_t> pos(0, n - 1);
  compute::Image im = compute::Image::host({1, n, n});
  for (int64_t i = 0; i < n * n; ++i) im.data()[i] = noise(rng);
  for (int k = 0; k < 60; ++k) {
    const int64_t cy = pos(rng), cx = pos(rng);
    const float a = 0.1f + 0.5f * float(k % 7);
    for (int64_t y = std::max<int64_t>(0, cy - 4); y < std::min(n, cy + 5); ++y)
      for (int64_t x = std::max<int64_t>(0, cx - 4); x < std::min(n, cx + 5); ++x)
        im.at(0, y, x) +=
            a * std::exp(-0.5f * float((y - cy) * (y - cy) + (x - cx) * (x - cx)) / 2.f);
  }
  return im;
}

// ‖a − b‖ / ‖b‖ over host images of the same shape.
inline double relativeL2(const compute::Image& a, const compute::Image& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.shape().count(); ++i) {
    const double d = double(a.data()[i]) - double(b.data()[i]);
    num += d * d;
    den += double(b.data()[i]) * double(b.data()[i]);
  }
  return std::sqrt(num / den);
}

// The largest |a − b| over host images of the same shape.
inline double maxAbsDiff(const compute::Image& a, const compute::Image& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double worst = 0;
  for (int64_t i = 0; i < b.shape().count(); ++i)
    worst = std::max(worst, std::fabs(double(a.data()[i]) - double(b.data()[i])));
  return worst;
}

inline compute::Image copyOf(const compute::Image& in) {
  compute::Image c = compute::Image::host(in.shape());
  std::memcpy(c.data(), in.data(), in.bytes());
  c.spacing = in.spacing;
  return c;
}

// Bitwise equality (NaN equal to NaN with the same bits), the first difference reported.
inline void expectIdentical(const compute::Image& got, const compute::Image& want,
                            const std::string& what) {
  ASSERT_TRUE(got.onHost()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.shape().count(); ++i)
    ASSERT_EQ(std::memcmp(&got.data()[i], &want.data()[i], sizeof(float)), 0)
        << what << " index " << i << ": got " << got.data()[i] << ", want " << want.data()[i];
}

// The same values: NaN where want has NaN (any payload), the sign of zero as in want.
inline void expectSameValues(const compute::Image& got, const compute::Image& want,
                             const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  int reported = 0;
  for (int64_t i = 0; i < want.shape().count(); ++i) {
    const float a = got.data()[i], e = want.data()[i];
    const bool ok = std::isnan(e) ? std::isnan(a) : (a == e && std::signbit(a) == std::signbit(e));
    if (!ok && reported++ < 5)
      ADD_FAILURE() << what << " index " << i << ": got " << a << ", want " << e;
  }
}

// Within tol·(1 + |want|) of want, NaN exactly where want has NaN.
inline void expectClose(const compute::Image& got, const compute::Image& want, double tol,
                        const std::string& what = "") {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  int reported = 0;
  for (int64_t i = 0; i < want.shape().count(); ++i) {
    const double a = got.data()[i], e = want.data()[i];
    const bool ok = std::isnan(e) ? std::isnan(a) : std::fabs(a - e) <= tol * (1 + std::fabs(e));
    if (!ok && reported++ < 5)
      ADD_FAILURE() << what << " index " << i << ": got " << a << ", want " << e;
  }
  EXPECT_EQ(reported, 0) << what;
}

}  // namespace stacklens::testing
