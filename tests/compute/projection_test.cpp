// Projections and spectral moments along z: the CPU backend against references computed here
// column by column (sorted copies, double sums; numpy's nan-functions and CASA's immoments
// formulas), closed forms for a Gaussian line, the argument checks, and the CUDA backend against
// the CPU on fresh random stacks with NaN voxels (skipped without a device).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "compute/backend.h"
#include "compute/projection.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"

using namespace stacklens::compute;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
const Projection kAll[] = {Projection::Max, Projection::Min, Projection::Mean,
                           Projection::Sum, Projection::Std, Projection::Median};

// Uniform values with about one voxel in eight NaN, and the first pixel's column all NaN.
Image stackWithGaps(Shape s, unsigned seed) {
  Image im = stacklens::testing::randomImage(s, seed, -5.f, 20.f);
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < s.count(); ++i)
    if (rng() % 8 == 0) im.data()[i] = kNaN;
  for (int64_t z = 0; z < s.z; ++z) im.data()[z * s.y * s.x] = kNaN;
  return im;
}

std::vector<double> column(const Image& im, int64_t y, int64_t x, int64_t z0, int64_t z1) {
  std::vector<double> v;
  for (int64_t z = z0; z < z1; ++z) {
    const float f = im.data()[(z * im.shape().y + y) * im.shape().x + x];
    if (!std::isnan(f)) v.push_back(f);
  }
  return v;
}

double reference(Projection op, std::vector<double> v) {
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

void expectNear(float got, double want, const char* what, int64_t x) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << " at x " << x;
  } else {
    EXPECT_NEAR(got, want, 1e-5 * std::max(1.0, std::fabs(want))) << what << " at x " << x;
  }
}

TEST(Projection, EachOperationMatchesAColumnByColumnReferenceOverARange) {
  auto cpu = makeCpuBackend(3);
  const Shape s{9, 7, 11};
  const Image in = stackWithGaps(s, 1);
  for (auto [first, last] : {std::pair<int64_t, int64_t>{0, -1}, {2, 6}, {3, 3}, {0, 7}})
    for (Projection op : kAll) {
      const Image out = cpu->project(in, {op, first, last});
      ASSERT_EQ(out.shape().z, 1);
      ASSERT_EQ(out.shape().y, s.y);
      ASSERT_EQ(out.shape().x, s.x);
      const int64_t end = last < 0 ? s.z : last + 1;
      for (int64_t y = 0; y < s.y; ++y)
        for (int64_t x = 0; x < s.x; ++x)
          expectNear(out.data()[y * s.x + x], reference(op, column(in, y, x, first, end)),
                     projectionName(op), x);
    }
}

TEST(Projection, AColumnWithoutValuesIsNaNAndOneValueHasNoSpread) {
  auto cpu = makeCpuBackend(1);
  Image in = Image::host({3, 1, 2});
  for (int64_t z = 0; z < 3; ++z) in.data()[z * 2] = kNaN;
  in.data()[1] = kNaN, in.data()[3] = 4.f, in.data()[5] = kNaN;
  for (Projection op : kAll) {
    const Image out = cpu->project(in, {op, 0, -1});
    EXPECT_TRUE(std::isnan(out.data()[0])) << projectionName(op);
    EXPECT_EQ(out.data()[1], op == Projection::Std ? 0.f : 4.f) << projectionName(op);
  }
}

TEST(Projection, RangesAndNamesAreChecked) {
  auto cpu = makeCpuBackend(1);
  const Image in = Image::host({4, 2, 2});
  EXPECT_THROW(cpu->project(in, {Projection::Max, 4, -1}), InvalidArgument);
  EXPECT_THROW(cpu->project(in, {Projection::Max, 2, 1}), InvalidArgument);
  EXPECT_THROW(cpu->project(in, {Projection::Max, -1, 2}), InvalidArgument);
  EXPECT_THROW(cpu->project(in, {Projection::Max, 0, 4}), InvalidArgument);
  EXPECT_EQ(parseProjection("median"), Projection::Median);
  EXPECT_THROW(parseProjection("average"), InvalidArgument);
}

// A Gaussian line of amplitude A, centre v0 and width sigma in channels of 2.5 km/s: moment 0 is
// A·sigma·sqrt(2π), moment 1 v0 and moment 2 sigma (the line is sampled finely enough that the
// sums are the integrals to 1e-6).
TEST(Moments, AGaussianLineGivesItsAreaCentreAndWidth) {
  auto cpu = makeCpuBackend(2);
  const int64_t n = 200;
  const double dv = 2.5, v0 = 1240.0, sigma = 30.0, amplitude = 3.0;
  MomentParams p;
  for (int64_t k = 0; k < n; ++k) p.coordinate.push_back(1000.0 + dv * double(k));
  Image in = Image::host({n, 2, 3});
  for (int64_t k = 0; k < n; ++k)
    for (int64_t i = 0; i < 6; ++i) {
      const double v = p.coordinate[size_t(k)] - v0 - 5.0 * double(i % 3);
      in.data()[k * 6 + i] =
          float((i < 3 ? 1.0 : 2.0) * amplitude * std::exp(-v * v / (2 * sigma * sigma)));
    }
  for (int order : {0, 1, 2}) {
    p.order = order;
    const Image out = cpu->moment(in, p);
    for (int64_t i = 0; i < 6; ++i) {
      const double scale = i < 3 ? 1.0 : 2.0;
      const double want = order == 0   ? scale * amplitude * sigma * std::sqrt(2 * M_PI)
                          : order == 1 ? v0 + 5.0 * double(i % 3)
                                       : sigma;
      EXPECT_NEAR(out.data()[i], want, 2e-6 * want) << "order " << order << " pixel " << i;
    }
  }
}

TEST(Moments, MatchCasaFormulasWithAClipARangeAndAnUnevenAxis) {
  auto cpu = makeCpuBackend(3);
  const Shape s{12, 5, 6};
  const Image in = stackWithGaps(s, 2);
  MomentParams p;
  for (int64_t k = 0; k < s.z; ++k) p.coordinate.push_back(-3.0 * double(k) + 0.1 * double(k * k));
  p.first = 2, p.last = 10, p.clip = 1.0;
  const MomentAxis axis = momentAxis(s.z, p);
  for (int order : {0, 1, 2}) {
    p.order = order;
    const Image out = cpu->moment(in, p);
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        double m0 = 0, w = 0, wv = 0;
        int64_t n = 0;
        for (int64_t k = p.first; k <= p.last; ++k) {
          const float f = in.data()[(k * s.y + y) * s.x + x];
          if (std::isnan(f) || f < p.clip) continue;
          const double v = p.coordinate[size_t(k)];
          const int64_t lo = std::max<int64_t>(k - 1, 0), hi = std::min<int64_t>(k + 1, s.z - 1);
          m0 +=
              f * std::fabs(p.coordinate[size_t(hi)] - p.coordinate[size_t(lo)]) / double(hi - lo);
          w += f, wv += f * v, ++n;
        }
        double m2 = 0;
        for (int64_t k = p.first; k <= p.last; ++k) {
          const float f = in.data()[(k * s.y + y) * s.x + x];
          if (!std::isnan(f) && f >= p.clip) {
            const double d = p.coordinate[size_t(k)] - wv / w;
            m2 += f * d * d;
          }
        }
        const double want = n == 0       ? NAN
                            : order == 0 ? m0
                            : order == 1 ? wv / w
                                         : std::sqrt(m2 / w);
        expectNear(out.data()[y * s.x + x], want, "moment", x);
      }
  }
  EXPECT_EQ(axis.value.size(), 9u);
}

TEST(Moments, ArgumentsAreChecked) {
  auto cpu = makeCpuBackend(1);
  const Image in = Image::host({4, 2, 2});
  MomentParams p;
  p.order = 3;
  EXPECT_THROW(cpu->moment(in, p), InvalidArgument);
  p.order = 1;
  p.coordinate = {1, 2, 3};
  EXPECT_THROW(cpu->moment(in, p), InvalidArgument);
  p.coordinate = {1, 2, NAN, 4};
  EXPECT_THROW(cpu->moment(in, p), InvalidArgument);
  p.coordinate.clear();
  p.clip = NAN;
  EXPECT_THROW(cpu->moment(in, p), InvalidArgument);
  // Without coordinates the axis is the slice index, one channel wide.
  p.clip = -INFINITY;
  const MomentAxis a = momentAxis(4, p);
  EXPECT_EQ(a.value, (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(a.width, (std::vector<double>{1, 1, 1, 1}));
}

class CudaProjection : public stacklens::testing::GpuTest {};

TEST_F(CudaProjection, EveryOperationAndMomentMatchesTheCpu) {
  std::mt19937 rng(std::random_device{}());
  for (int round = 0; round < 3; ++round) {
    const Shape s{int64_t(1 + rng() % 40), int64_t(1 + rng() % 70), int64_t(1 + rng() % 90)};
    const Image in = stackWithGaps(s, unsigned(rng()));
    const int64_t first = int64_t(rng() % uint64_t(s.z)),
                  last = first + int64_t(rng() % uint64_t(s.z - first));
    for (Projection op : kAll) {
      const Image want = cpu->project(in, {op, first, last});
      const Image got = gpu->download(gpu->project(gpu->upload(in), {op, first, last}));
      const bool exact = op == Projection::Max || op == Projection::Min || op == Projection::Median;
      ASSERT_EQ(got.shape(), want.shape());
      for (int64_t i = 0; i < want.shape().count(); ++i) {
        const float g = got.data()[i], w = want.data()[i];
        if (exact)
          EXPECT_TRUE(g == w || (std::isnan(g) && std::isnan(w))) << projectionName(op) << " " << i;
        else
          expectNear(g, w, projectionName(op), i);
      }
    }
    MomentParams p;
    for (int64_t k = 0; k < s.z; ++k) p.coordinate.push_back(1e3 + 0.7 * double(k));
    p.first = first, p.last = last, p.clip = 0.0;
    for (int order : {0, 1, 2}) {
      p.order = order;
      const Image want = cpu->moment(in, p);
      const Image got = gpu->download(gpu->moment(in, p));  // from the host too
      for (int64_t i = 0; i < want.shape().count(); ++i)
        expectNear(got.data()[i], want.data()[i], "moment", i);
    }
  }
}

}  // namespace
