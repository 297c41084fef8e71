// Projections and spectral moments along z written out column by column, the reference for every
// backend: sorted copies and double sums (numpy's nan-functions; CASA immoments' formulas).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "compute/image.h"
#include "compute/params.h"
#include "tests/compute/image_checks.h"

namespace stacklens::testing {

// Uniform values with about one voxel in eight NaN, and the first pixel's column all NaN.
inline compute::Image stackWithGaps(compute::Shape s, unsigned seed) {
  compute::Image im = randomImage(s, seed, -5.f, 20.f);
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < s.count(); ++i)
    if (rng() % 8 == 0) im.data()[i] = std::numeric_limits<float>::quiet_NaN();
  for (int64_t z = 0; z < s.z; ++z)
    im.data()[z * s.y * s.x] = std::numeric_limits<float>::quiet_NaN();
  return im;
}

// A stack of random shape (up to 40 × 70 × 90) with gaps, and a random range of its slices.
struct StackAndRange {
  compute::Image stack;
  int64_t first, last;
};
inline StackAndRange randomStackAndRange(std::mt19937& rng) {
  const compute::Shape s{int64_t(1 + rng() % 40), int64_t(1 + rng() % 70), int64_t(1 + rng() % 90)};
  const int64_t first = int64_t(rng() % uint64_t(s.z));
  const int64_t last = first + int64_t(rng() % uint64_t(s.z - first));
  return {stackWithGaps(s, unsigned(rng())), first, last};
}

// The values of column (y, x) in slices [z0, z1) that are not NaN.
inline std::vector<double> column(const compute::Image& im, int64_t y, int64_t x, int64_t z0,
                                  int64_t z1) {
  std::vector<double> v;
  for (int64_t z = z0; z < z1; ++z) {
    const float f = im.data()[(z * im.shape().y + y) * im.shape().x + x];
    if (!std::isnan(f)) v.push_back(f);
  }
  return v;
}

// One column's projection; NaN for a column without values.
inline double projectionReference(compute::Projection op, std::vector<double> v) {
  using compute::Projection;
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const double n = double(v.size());
  double sum = 0;
  for (double a : v) sum += a;
  switch (op) {
    case Projection::Max:
      return v.back();
    case Projection::Min:
      return v.front();
    case Projection::Sum:
      return sum;
    case Projection::Mean:
      return sum / n;
    case Projection::Median:
      return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    case Projection::Std: {
      double s2 = 0;
      for (double a : v) s2 += (a - sum / n) * (a - sum / n);
      return std::sqrt(s2 / n);
    }
  }
  return NAN;
}

// Moment p.order of pixel (y, x) over channels p.first..p.last whose value is not NaN and at least
// p.clip: 0, Σ f·|Δv| (the channel width from its neighbours); 1, the f-weighted mean of v; 2,
// the f-weighted σ of v about it. NaN when no channel counts.
inline double momentReference(const compute::Image& in, const compute::MomentParams& p, int64_t y,
                              int64_t x) {
  const compute::Shape s = in.shape();
  const int64_t last = p.last < 0 ? s.z - 1 : p.last;
  double m0 = 0, w = 0, wv = 0;
  int64_t n = 0;
  for (int64_t k = p.first; k <= last; ++k) {
    const float f = in.data()[(k * s.y + y) * s.x + x];
    if (std::isnan(f) || f < p.clip) continue;
    const double v = p.coordinate[size_t(k)];
    const int64_t lo = std::max<int64_t>(k - 1, 0), hi = std::min<int64_t>(k + 1, s.z - 1);
    m0 += f * std::fabs(p.coordinate[size_t(hi)] - p.coordinate[size_t(lo)]) / double(hi - lo);
    w += f, wv += f * v, ++n;
  }
  double m2 = 0;
  for (int64_t k = p.first; k <= last; ++k) {
    const float f = in.data()[(k * s.y + y) * s.x + x];
    if (!std::isnan(f) && f >= p.clip) {
      const double d = p.coordinate[size_t(k)] - wv / w;
      m2 += f * d * d;
    }
  }
  return n == 0 ? NAN : p.order == 0 ? m0 : p.order == 1 ? wv / w : std::sqrt(m2 / w);
}

// Within 1e-5·max(1, |want|), or NaN where want is NaN.
inline void expectNearOrNan(float got, double want, const char* what, int64_t i) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << " at " << i;
  } else {
    EXPECT_NEAR(got, want, 1e-5 * std::max(1.0, std::fabs(want))) << what << " at " << i;
  }
}

}  // namespace stacklens::testing
