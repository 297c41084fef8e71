// Blocks that exchange halos every iteration (compute/blocked/exchange_plan.h, exchange_run.h):
// on the CPU they give the unblocked run's result for every boundary, with a measured-like PSF
// whose faint tails fill its whole array, where overlapping blocks visibly differ at the seams;
// planRun chooses them on the CPU when their arrays fit, and the plan says which scheme it is.
#include "compute/blocked/exchange_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "compute/blocked/blocked_deconvolution.h"
#include "compute/blocked/planned_run.h"
#include "compute/blocked/slab_reader.h"
#include "compute/params_text.h"
#include "tests/compute/blocked_cases.h"
#include "tests/compute/image_checks.h"

using namespace stacklens::compute;
using stacklens::testing::beads;
using stacklens::testing::kExactBlocksTolerance;
using stacklens::testing::measuredLikePsf;
using stacklens::testing::params3d;
using stacklens::testing::relativeL2;
using stacklens::testing::worstAtSeams;

namespace {

BlockPlan exchangePlan(Shape volume, Shape psf, const DeconvolveParams& p, Shape maxInterior) {
  std::optional<BlockPlan> plan =
      planExchange(volume, psf, p, frameCosts("cpu", p), size_t(1) << 32, maxInterior);
  if (!plan) throw std::runtime_error("no exchanging plan");
  planSlabs(*plan, size_t(1) << 30, true);
  return *plan;
}

struct ExchangeCase {
  Boundary boundary;
  int iterations;
  bool accelerate = false;
  double tvLambda = 0;
};

void expectUnblocked(const ExchangeCase& c) {
  auto cpu = makeCpuBackend(2);
  const Shape shape{40, 56, 56};
  const Image volume = beads(shape, 23);
  const bool exact = c.boundary == Boundary::ReflectExact;
  const Image psf = measuredLikePsf(exact ? Shape{31, 25, 25} : Shape{31, 24, 24}, exact, 5);
  DeconvolveParams p = params3d(c.iterations, c.boundary);
  p.accelerate = c.accelerate;
  p.tvLambda = c.tvLambda;
  const Image whole = cpu->download(cpu->richardsonLucy(volume, psf, p));
  // Two pieces along z and along y, and one along x: seams laterally and in depth.
  const BlockPlan plan = exchangePlan(shape, psf.shape(), p, {30, 40, 0});
  ASSERT_GE(plan.count(), 4) << plan.describe(c.iterations);
  ASSERT_GE(plan.counts.z, 2);
  ASSERT_GE(plan.counts.y, 2);
  BlockedRunReport report;
  const Image blocked = deconvolveBlocked(*cpu, volume, psf, p, plan, {}, &report);
  EXPECT_EQ(report.blocks, plan.count());
  const double all = relativeL2(blocked, whole);
  const double seams = worstAtSeams(blocked, whole, plan, plan.halo);
  std::printf("%s, %d iterations%s%s, %lld blocks: relative L2 %.2e, worst at the seams %.2e\n",
              boundaryName(c.boundary), c.iterations, c.accelerate ? ", accelerated" : "",
              c.tvLambda > 0 ? ", TV" : "", (long long)plan.count(), all, seams);
  EXPECT_LT(all, kExactBlocksTolerance);
  EXPECT_LT(seams, kExactBlocksTolerance);
}

TEST(BlockedExchange, ReflectGivesTheUnblockedRun) {
  expectUnblocked({Boundary::Reflect, 10});
  expectUnblocked({Boundary::Reflect, 30});
}

TEST(BlockedExchange, ZeroGivesTheUnblockedRun) {
  expectUnblocked({Boundary::Zero, 10});
  expectUnblocked({Boundary::Zero, 30});
}

TEST(BlockedExchange, PeriodicGivesTheUnblockedRun) {
  expectUnblocked({Boundary::Periodic, 10});
  expectUnblocked({Boundary::Periodic, 30});
}

TEST(BlockedExchange, ReflectExactGivesTheUnblockedRun) {
  expectUnblocked({Boundary::ReflectExact, 10});
  expectUnblocked({Boundary::ReflectExact, 30});
}

// Acceleration's sums run over the whole domain as the unblocked run's do; TV reads one voxel
// past each interior voxel, inside the halo.
TEST(BlockedExchange, AccelerationAndTvGiveTheUnblockedRun) {
  expectUnblocked({Boundary::Reflect, 10, true, 0});
  expectUnblocked({Boundary::Reflect, 10, false, 0.002});
}

// Non-finite input values count as 0 while iterating and come back unchanged, as in the
// unblocked run.
TEST(BlockedExchange, NonFiniteValuesComeBackAsInTheUnblockedRun) {
  stacklens::testing::expectNonFiniteValuesComeBack(exchangePlan, kExactBlocksTolerance);
}

// The volume read a few slices at a time through a slice cache (as from a TIFF file), and the
// result written slab by slab: the in-memory run's result, to the bit.
TEST(BlockedExchange, SlabsOfSlicesGiveTheInMemoryResult) {
  auto cpu = makeCpuBackend(2);
  const Shape shape{24, 32, 32};
  const Image volume = beads(shape, 31);
  const Image psf = measuredLikePsf({9, 8, 8}, false, 7);
  const DeconvolveParams p = params3d(4);
  BlockPlan plan = exchangePlan(shape, psf.shape(), p, {12, 16, 0});
  const Image direct = deconvolveBlocked(*cpu, volume, psf, p, plan);
  planSlabs(plan, 24 * 32 * 32 * sizeof(float), true);
  ASSERT_LT(plan.slabSlices, shape.z);
  const size_t sliceBytes = size_t(shape.y * shape.x) * sizeof(float);
  const BoxReader fromSlices = slabReader(
      shape, [&](int64_t z, float* out) { std::memcpy(out, volume.slice(z), sliceBytes); },
      plan.keptSlices());
  Image streamed = Image::host(shape);
  deconvolveBlocked(*cpu, fromSlices, boxWriter(streamed), psf, p, plan);
  for (int64_t i = 0; i < shape.count(); ++i) ASSERT_EQ(streamed.data()[i], direct.data()[i]) << i;
}

// A cancel stops the run within the iterations, and nothing is written.
TEST(BlockedExchange, CancelStopsTheRun) {
  auto cpu = makeCpuBackend(2);
  const Shape shape{24, 32, 32};
  const Image volume = beads(shape, 37);
  const Image psf = measuredLikePsf({9, 8, 8}, false, 7);
  const DeconvolveParams p = params3d(50);
  const BlockPlan plan = exchangePlan(shape, psf.shape(), p, {12, 16, 0});
  std::atomic<bool> cancel{false};
  double reached = 0;
  const Job job(&cancel, [&](double f) {
    reached = f;
    if (f > 0.1) cancel = true;
  });
  int written = 0;
  EXPECT_THROW(
      deconvolveBlocked(
          *cpu, boxReader(volume), [&](const Box&, const float*) { ++written; }, psf, p, plan, job),
      Cancelled);
  EXPECT_LT(reached, 0.2);
  EXPECT_EQ(written, 0);
}

// What the exchange is for: on the same data, overlapping blocks whose halos hold half the PSF
// miss what the PSF's tails carry across the seams over the iterations, by several times the
// tolerance above (measured: 8.6e-4 after 10 iterations, more after 30).
TEST(BlockedExchange, OverlappingBlocksMissTheTails) {
  auto cpu = makeCpuBackend(2);
  const Shape shape{40, 56, 56};
  const Image volume = beads(shape, 23);
  const Image psf = measuredLikePsf({31, 24, 24}, false, 5);
  for (int iterations : {10, 30}) {
    const DeconvolveParams p = params3d(iterations);
    const Image whole = cpu->download(cpu->richardsonLucy(volume, psf, p));
    BlockPlan plan = planBlocks(shape, psf.shape(), p, frameCosts("cpu", p), size_t(1) << 32,
                                {-1, -1, -1}, {20, 28, 0});
    planSlabs(plan, size_t(1) << 30, true);
    ASSERT_EQ(plan.scheme, BlockScheme::Overlap);
    ASSERT_GE(plan.count(), 4);
    const Image blocked = deconvolveBlocked(*cpu, volume, psf, p, plan);
    const double all = relativeL2(blocked, whole);
    const double seams = worstAtSeams(blocked, whole, plan, plan.halo);
    std::printf(
        "overlapping, %d iterations, %lld blocks: relative L2 %.2e, worst at the seams "
        "%.2e\n",
        iterations, (long long)plan.count(), all, seams);
    EXPECT_GT(all, 5 * kExactBlocksTolerance);
    EXPECT_GT(seams, 5 * kExactBlocksTolerance);
  }
}

// planRun: blocks that exchange halos on the CPU when the domain's arrays fit the budget,
// overlapping ones when they do not, when a halo is asked for, and on other backends; the plan
// says which.
TEST(BlockedExchange, PlanRunExchangesOnTheCpuWhenTheArraysFit) {
  PlannedRunRequest r;
  r.volume = {40, 56, 56};
  r.psf = {31, 24, 24};
  r.params = params3d(10);
  r.slabBudget = size_t(1) << 30;
  r.wholeSlices = true;
  r.maxInterior = {30, 40, 0};
  r.frameBudget = size_t(1) << 30;
  const BlockPlan exchanging = planRun(r, "cpu");
  EXPECT_EQ(exchanging.scheme, BlockScheme::Exchange);
  EXPECT_GE(exchanging.slabSlices, 1);
  // The domain is the unblocked reflect run's frame: the volume after half the PSF.
  EXPECT_EQ(exchanging.domain.z0, -15);
  EXPECT_EQ(exchanging.domain.y0, -12);
  EXPECT_EQ(exchanging.domain.shape(), (Shape{70, 80, 80}));
  EXPECT_EQ(exchanging.domainBytes, size_t(70 * 80 * 80) * 12);
  EXPECT_NE(exchanging.describe(10).find("exchange halos every iteration"), std::string::npos)
      << exchanging.describe(10);
  // Interiors tile the domain; frames add at least the PSF's extent less one.
  std::vector<int> covered(size_t(70 * 80 * 80), 0);
  for (const Block& b : exchanging.blocks) {
    for (int64_t z = b.interior.z0; z < b.interior.z1; ++z)
      for (int64_t y = b.interior.y0; y < b.interior.y1; ++y)
        for (int64_t x = b.interior.x0; x < b.interior.x1; ++x)
          ++covered[size_t(((z + 15) * 80 + y + 12) * 80 + x + 12)];
    if (exchanging.counts.z > 1) {
      EXPECT_GE(b.interior.z0 - b.frame.z0, 30);
      EXPECT_GE(b.frame.z1 - b.interior.z1, 30);
    }
  }
  for (int c : covered) ASSERT_EQ(c, 1);
  // Too little memory for the domain's arrays: overlapping blocks, and the plan says so.
  r.frameBudget = exchanging.domainBytes / 2;
  const BlockPlan overlapping = planRun(r, "cpu");
  EXPECT_EQ(overlapping.scheme, BlockScheme::Overlap);
  EXPECT_NE(overlapping.describe(10).find("may differ from an unblocked run"), std::string::npos)
      << overlapping.describe(10);
  r.frameBudget = size_t(1) << 30;
  EXPECT_EQ(planRun(r, "cuda").scheme, BlockScheme::Overlap);
  // A halo asked for is the overlapping blocks'.
  r.halo = {20, 20, 20};
  const BlockPlan asked = planRun(r, "cpu");
  EXPECT_EQ(asked.scheme, BlockScheme::Overlap);
  EXPECT_EQ(asked.halo, (Shape{20, 20, 20}));
}

}  // namespace
