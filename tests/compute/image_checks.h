// What the compute tests share for building and comparing images: uniform random images, the
// relative L2 distance, copies, and bitwise equality.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

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

inline compute::Image copyOf(const compute::Image& in) {
  compute::Image c = compute::Image::host(in.shape());
  std::memcpy(c.data(), in.data(), in.bytes());
  c.spacing = in.spacing;
  return c;
}

// Bitwise equality (NaN equal to NaN in the same place).
inline void expectIdentical(const compute::Image& got, const compute::Image& want,
                            const char* what) {
  ASSERT_TRUE(got.onHost()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  EXPECT_EQ(std::memcmp(got.data(), want.data(), want.bytes()), 0) << what;
}

}  // namespace stacklens::testing
