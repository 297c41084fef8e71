// Projections along z on every backend against one reference computed column by column
// (projection_reference.h: sorted copies, double sums, numpy's nan-functions): every operation
// over ranges, empty and single-value columns, the argument checks; CUDA against the CPU too.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <utility>

#include "compute/backend.h"
#include "compute/projection.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/projection_reference.h"
#include "tests/compute/test_values.h"

using namespace stacklens::compute;

namespace {

using stacklens::testing::column;
using stacklens::testing::expectNearOrNan;
using stacklens::testing::kNaN;
using stacklens::testing::projectionReference;
using stacklens::testing::randomStackAndRange;
using stacklens::testing::stackWithGaps;

const Projection kAll[] = {Projection::Max, Projection::Min, Projection::Mean,
                           Projection::Sum, Projection::Std, Projection::Median};

class Projections : public stacklens::testing::OnEachBackend {};
STACKLENS_ON_EACH_BACKEND(Projections);

TEST_P(Projections, EachOperationMatchesAColumnByColumnReferenceOverARange) {
  // Prepare
  const Shape s{9, 7, 11};
  const Image in = stackWithGaps(s, 1);

  for (auto [first, last] : {std::pair<int64_t, int64_t>{0, -1}, {2, 6}, {3, 3}, {0, 7}})
    for (Projection op : kAll) {
      // Run
      const Image out = onHost(backend->project(in, {op, first, last}));

      // Verify
      ASSERT_EQ(out.shape().z, 1);
      ASSERT_EQ(out.shape().y, s.y);
      ASSERT_EQ(out.shape().x, s.x);
      const int64_t end = last < 0 ? s.z : last + 1;
      for (int64_t y = 0; y < s.y; ++y)
        for (int64_t x = 0; x < s.x; ++x)
          expectNearOrNan(out.data()[y * s.x + x],
                          projectionReference(op, column(in, y, x, first, end)), projectionName(op),
                          x);
    }
}

TEST_P(Projections, AColumnWithoutValuesIsNaNAndOneValueHasNoSpread) {
  // Prepare
  Image in = Image::host({3, 1, 2});
  for (int64_t z = 0; z < 3; ++z) in.data()[z * 2] = kNaN;
  in.data()[1] = kNaN, in.data()[3] = 4.f, in.data()[5] = kNaN;

  for (Projection op : kAll) {
    // Run
    const Image out = onHost(backend->project(in, {op, 0, -1}));

    // Verify
    EXPECT_TRUE(std::isnan(out.data()[0])) << projectionName(op);
    EXPECT_EQ(out.data()[1], op == Projection::Std ? 0.f : 4.f) << projectionName(op);
  }
}

TEST_P(Projections, RangesAndNamesAreChecked) {
  // Prepare
  const Image in = Image::host({4, 2, 2});

  // Run, Verify
  EXPECT_THROW(backend->project(in, {Projection::Max, 4, -1}), InvalidArgument);
  EXPECT_THROW(backend->project(in, {Projection::Max, 2, 1}), InvalidArgument);
  EXPECT_THROW(backend->project(in, {Projection::Max, -1, 2}), InvalidArgument);
  EXPECT_THROW(backend->project(in, {Projection::Max, 0, 4}), InvalidArgument);
  EXPECT_EQ(parseProjection("median"), Projection::Median);
  EXPECT_THROW(parseProjection("average"), InvalidArgument);
}

// The CUDA backend against the CPU backend on fresh random stacks of random shapes and ranges:
// max, min and median exactly, the others to 1e-5 relative.
class ProjectionsCudaAndCpu : public stacklens::testing::GpuTest {};

TEST_F(ProjectionsCudaAndCpu, AgreeOnFreshRandomStacks) {
  std::mt19937 rng(std::random_device{}());
  for (int round = 0; round < 3; ++round) {
    // Prepare
    const auto [in, first, last] = randomStackAndRange(rng);

    for (Projection op : kAll) {
      // Run
      const Image want = cpu->project(in, {op, first, last});
      const Image got = gpu->download(gpu->project(gpu->upload(in), {op, first, last}));

      // Verify
      const bool exact = op == Projection::Max || op == Projection::Min || op == Projection::Median;
      ASSERT_EQ(got.shape(), want.shape());
      for (int64_t i = 0; i < want.shape().count(); ++i) {
        const float g = got.data()[i], w = want.data()[i];
        if (exact)
          EXPECT_TRUE(g == w || (std::isnan(g) && std::isnan(w))) << projectionName(op) << " " << i;
        else
          expectNearOrNan(g, w, projectionName(op), i);
      }
    }
  }
}

}  // namespace
