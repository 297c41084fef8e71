// Blocks whose frames stay where the backend computes and exchange halos there every iteration
// (compute/blocked/resident_run.h), run on the CPU's resident frames: the unblocked run's result
// for every boundary with a measured-like PSF whose faint tails fill its whole array, the
// layout's tables, non-finite values, cancellation, and the plan (GPU frames of fused lengths).
#include "compute/blocked/resident_run.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "compute/blocked/exchange_plan.h"
#include "compute/params_text.h"
#include "compute/rl_frame.h"
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

BlockPlan residentPlan(Shape volume, Shape psf, const DeconvolveParams& p, Shape maxInterior) {
  std::optional<BlockPlan> plan =
      planResident(volume, psf, p, frameCosts("cpu", p), size_t(1) << 32, maxInterior);
  if (!plan) throw std::runtime_error("no resident plan");
  planSlabs(*plan, size_t(1) << 30, true);
  return *plan;
}

void expectUnblocked(Boundary boundary, int iterations) {
  auto cpu = makeCpuBackend(2);
  const Shape shape{40, 56, 56};
  const Image volume = beads(shape, 23);
  const bool exact = boundary == Boundary::ReflectExact;
  const Image psf = measuredLikePsf(exact ? Shape{31, 25, 25} : Shape{31, 24, 24}, exact, 5);
  const DeconvolveParams p = params3d(iterations, boundary);
  const Image whole = cpu->download(cpu->richardsonLucy(volume, psf, p));
  const BlockPlan plan = residentPlan(shape, psf.shape(), p, {30, 40, 0});
  ASSERT_EQ(plan.scheme, BlockScheme::Resident);
  ASSERT_GE(plan.counts.z, 2) << plan.describe(iterations);
  ASSERT_GE(plan.counts.y, 2) << plan.describe(iterations);
  BlockedRunReport report;
  const Image blocked = deconvolveBlocked(*cpu, volume, psf, p, plan, {}, &report);
  EXPECT_EQ(report.blocks, plan.count());
  const double all = relativeL2(blocked, whole);
  const double seams = worstAtSeams(blocked, whole, plan, plan.halo);
  std::printf(
      "%s, %d iterations, %lld resident blocks: relative L2 %.2e, worst at the seams "
      "%.2e\n",
      boundaryName(boundary), iterations, (long long)plan.count(), all, seams);
  EXPECT_LT(all, kExactBlocksTolerance);
  EXPECT_LT(seams, kExactBlocksTolerance);
}

}  // namespace

TEST(BlockedResident, ReflectGivesTheUnblockedRun) { expectUnblocked(Boundary::Reflect, 12); }
TEST(BlockedResident, ZeroGivesTheUnblockedRun) { expectUnblocked(Boundary::Zero, 12); }
TEST(BlockedResident, PeriodicGivesTheUnblockedRun) { expectUnblocked(Boundary::Periodic, 12); }
TEST(BlockedResident, ReflectExactGivesTheUnblockedRun) {
  expectUnblocked(Boundary::ReflectExact, 12);
}

// Every interior voxel is its own source; every halo voxel comes from another interior (or a
// mirrored or wrapped place in one), at the domain coordinate it stands for.
TEST(BlockedResident, TheLayoutMapsHalosToTheInteriorsThatOwnThem) {
  const DeconvolveParams p = params3d(3, Boundary::Reflect);
  const BlockPlan plan = residentPlan({40, 56, 56}, {9, 8, 8}, p, {20, 28, 0});
  const ResidentLayout layout = residentLayout(plan);
  ASSERT_EQ(layout.count(), plan.count());
  const int64_t domainZ = plan.domain.z1 - plan.domain.z0;
  for (int64_t b = 0; b < layout.count(); ++b) {
    const ResidentLayout::Axis& z = layout.blocks[size_t(b)][0];
    const int64_t bz = b / (plan.counts.y * plan.counts.x);
    for (int64_t i = 0; i < plan.frame.z; ++i) {
      const int64_t owner = z.ownerBlock[size_t(i)], index = z.ownerIndex[size_t(i)];
      if (i >= z.interiorFrom && i < z.interiorTo) {
        EXPECT_EQ(owner, bz);
        EXPECT_EQ(index, i);
        continue;
      }
      // The owner's interior holds it, at the same domain coordinate (round the domain).
      const Block& o = plan.blocks[size_t(owner * plan.counts.y * plan.counts.x)];
      const int64_t at = o.frame.z0 + index;
      EXPECT_GE(at, o.interior.z0);
      EXPECT_LT(at, o.interior.z1);
      const int64_t want = plan.blocks[size_t(b)].frame.z0 + i;
      EXPECT_EQ(((at - want) % domainZ + domainZ) % domainZ, 0) << "block " << b << " z " << i;
    }
  }
}

// Non-finite input values count as 0 while iterating and come back unchanged, as in the
// unblocked run.
TEST(BlockedResident, NonFiniteValuesComeBackAsInTheUnblockedRun) {
  stacklens::testing::expectNonFiniteValuesComeBack(residentPlan, kExactBlocksTolerance);
}

TEST(BlockedResident, CancellingStopsBetweenSteps) {
  auto cpu = makeCpuBackend(2);
  const Image volume = beads({24, 32, 32}, 31);
  const Image psf = measuredLikePsf({9, 8, 8}, false, 7);
  const DeconvolveParams p = params3d(50);
  const BlockPlan plan = residentPlan(volume.shape(), psf.shape(), p, {12, 16, 0});
  std::atomic<bool> stop{false};
  int steps = 0;
  const Job job(&stop, [&](double) {
    if (++steps == 3) stop = true;
  });
  EXPECT_THROW(deconvolveBlocked(*cpu, volume, psf, p, plan, job), Cancelled);
  EXPECT_EQ(steps, 3);
}

// On the GPU, resident frames are fused-FFT lengths, and what they and the shared transform
// arrays take is what the plan weighs; acceleration and TV get no resident plan.
TEST(BlockedResident, GpuPlansTakeFusedFramesWithinTheBudget) {
  const DeconvolveParams p = params3d(100, Boundary::Reflect);
  const FrameCosts cuda = frameCosts("cuda", p);
  const size_t budget = size_t(114101) << 20;
  const std::optional<BlockPlan> plan =
      planResident({950, 2048, 2048}, {61, 33, 33}, p, cuda, budget);
  ASSERT_TRUE(plan.has_value());
  EXPECT_TRUE(cuda.fast(plan->frame)) << plan->describe(100);
  EXPECT_LE(size_t(plan->count() + 1) * size_t(plan->frame.count()) * kResidentBytesPerVoxel,
            budget);
  EXPECT_NE(plan->describe(100).find("exchange halos"), std::string::npos);
  EXPECT_EQ(plan->provenance().find("overlapping"), std::string::npos);
  DeconvolveParams accelerated = p;
  accelerated.accelerate = true;
  EXPECT_FALSE(planResident({950, 2048, 2048}, {61, 33, 33}, accelerated, cuda, budget));
  DeconvolveParams tv = p;
  tv.tvLambda = 0.002;
  EXPECT_FALSE(planResident({950, 2048, 2048}, {61, 33, 33}, tv, cuda, budget));
}

// On the GPU: resident frames of fused lengths, with a wide-tailed PSF, give the GPU's own
// unblocked run within the tolerance above.
TEST(CudaBlockedResident, GivesTheUnblockedRun) {
  std::string why;
  if (!cudaUsable(&why)) GTEST_SKIP() << why;
  auto gpu = makeCudaBackend();
  const Shape shape{300, 256, 256};
  const Image volume = beads(shape, 43);
  for (Boundary boundary : {Boundary::Reflect, Boundary::ReflectExact}) {
    const bool exact = boundary == Boundary::ReflectExact;
    const Image psf = measuredLikePsf(exact ? Shape{31, 25, 25} : Shape{31, 24, 24}, exact, 5);
    const DeconvolveParams p = params3d(20, boundary);
    std::optional<BlockPlan> plan =
        planResident(shape, psf.shape(), p, frameCosts("cuda", p), size_t(8) << 30, {170, 0, 0});
    ASSERT_TRUE(plan.has_value());
    planSlabs(*plan, size_t(1) << 30, true);
    ASSERT_GE(plan->count(), 2) << plan->describe(20);
    const Image whole = gpu->download(gpu->richardsonLucy(volume, psf, p));
    const Image blocked = deconvolveBlocked(*gpu, volume, psf, p, *plan);
    const double all = relativeL2(blocked, whole);
    const double seams = worstAtSeams(blocked, whole, *plan, plan->halo);
    std::printf("GPU %s, %lld resident blocks of %s: relative L2 %.2e, worst at the seams %.2e\n",
                boundaryName(boundary), (long long)plan->count(), plan->frames().c_str(), all,
                seams);
    EXPECT_LT(all, kExactBlocksTolerance);
    EXPECT_LT(seams, kExactBlocksTolerance);
  }
}
