// Spectral moments along z on every backend against one reference computed pixel by pixel
// (projection_reference.h: CASA immoments' formulas in double) and the closed form of a Gaussian
// line: clips, ranges, uneven axes, the argument checks; CUDA against the CPU too.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "compute/backend.h"
#include "compute/projection.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/projection_reference.h"

using namespace stacklens::compute;

namespace {

using stacklens::testing::expectNearOrNan;
using stacklens::testing::momentReference;
using stacklens::testing::randomStackAndRange;
using stacklens::testing::stackWithGaps;

class Moments : public stacklens::testing::OnEachBackend {};
STACKLENS_ON_EACH_BACKEND(Moments);

// A Gaussian line of amplitude A, centre v0 and width sigma in channels of 2.5 km/s: moment 0 is
// A·sigma·sqrt(2π), moment 1 v0 and moment 2 sigma (the line is sampled finely enough that the
// sums are the integrals to 1e-6).
TEST_P(Moments, AGaussianLineGivesItsAreaCentreAndWidth) {
  // Prepare
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

    // Run
    const Image out = onHost(backend->moment(in, p));

    // Verify
    for (int64_t i = 0; i < 6; ++i) {
      const double scale = i < 3 ? 1.0 : 2.0;
      const double want = order == 0   ? scale * amplitude * sigma * std::sqrt(2 * M_PI)
                          : order == 1 ? v0 + 5.0 * double(i % 3)
                                       : sigma;
      EXPECT_NEAR(out.data()[i], want, 2e-6 * want) << "order " << order << " pixel " << i;
    }
  }
}

TEST_P(Moments, MatchCasaFormulasWithAClipARangeAndAnUnevenAxis) {
  // Prepare
  const Shape s{12, 5, 6};
  const Image in = stackWithGaps(s, 2);
  MomentParams p;
  for (int64_t k = 0; k < s.z; ++k) p.coordinate.push_back(-3.0 * double(k) + 0.1 * double(k * k));
  p.first = 2, p.last = 10, p.clip = 1.0;
  const MomentAxis axis = momentAxis(s.z, p);

  for (int order : {0, 1, 2}) {
    p.order = order;

    // Run
    const Image out = onHost(backend->moment(in, p));

    // Verify
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x)
        expectNearOrNan(out.data()[y * s.x + x], momentReference(in, p, y, x), "moment", x);
  }
  EXPECT_EQ(axis.value.size(), 9u);
}

TEST_P(Moments, ArgumentsAreChecked) {
  // Prepare
  const Image in = Image::host({4, 2, 2});
  MomentParams p;

  // Run, Verify
  p.order = 3;
  EXPECT_THROW(backend->moment(in, p), InvalidArgument);
  p.order = 1;
  p.coordinate = {1, 2, 3};
  EXPECT_THROW(backend->moment(in, p), InvalidArgument);
  p.coordinate = {1, 2, NAN, 4};
  EXPECT_THROW(backend->moment(in, p), InvalidArgument);
  p.coordinate.clear();
  p.clip = NAN;
  EXPECT_THROW(backend->moment(in, p), InvalidArgument);
  // Without coordinates the axis is the slice index, one channel wide.
  p.clip = -INFINITY;
  const MomentAxis a = momentAxis(4, p);
  EXPECT_EQ(a.value, (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(a.width, (std::vector<double>{1, 1, 1, 1}));
}

// The CUDA backend against the CPU backend on fresh random stacks of random shapes and ranges,
// to 1e-5 relative.
class MomentsCudaAndCpu : public stacklens::testing::GpuTest {};

TEST_F(MomentsCudaAndCpu, AgreeOnFreshRandomStacks) {
  std::mt19937 rng(std::random_device{}());
  for (int round = 0; round < 3; ++round) {
    // Prepare
    const auto [in, first, last] = randomStackAndRange(rng);
    const Shape s = in.shape();
    MomentParams p;
    for (int64_t k = 0; k < s.z; ++k) p.coordinate.push_back(1e3 + 0.7 * double(k));
    p.first = first, p.last = last, p.clip = 0.0;

    for (int order : {0, 1, 2}) {
      p.order = order;

      // Run
      const Image want = cpu->moment(in, p);
      const Image got = gpu->download(gpu->moment(in, p));  // from the host too

      // Verify
      for (int64_t i = 0; i < want.shape().count(); ++i)
        expectNearOrNan(got.data()[i], want.data()[i], "moment", i);
    }
  }
}

}  // namespace
