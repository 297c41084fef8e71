// estimateSeamError: a synthetic trial cut as an overlapping plan is, whose seam error predicts
// what the run itself leaves at its seams; none where a halo covers every iteration's reach.
#include "compute/blocked/seam_estimate.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "compute/blocked/blocked_deconvolution.h"
#include "tests/compute/blocked_cases.h"

using namespace stacklens::compute;
using stacklens::testing::beads;
using stacklens::testing::compactPsf;
using stacklens::testing::cpuPlan;
using stacklens::testing::measuredLikePsf;
using stacklens::testing::params3d;
using stacklens::testing::worstAtSeams;

namespace {

// The blocks of the real run below: a measured-like PSF whose tails fill its array, halos of
// half of it, cut along z and y (as BlockedExchange.OverlappingBlocksMissTheTails).
BlockPlan tailsPlan(const DeconvolveParams& p, Shape halo = {-1, -1, -1}) {
  return cpuPlan({40, 56, 56}, {31, 24, 24}, p, size_t(1) << 32, halo, {20, 28, 0});
}

}  // namespace

// Each iteration reaches two PSF radii further (the forward and the backward convolution):
// with a radius of 2, three iterations reach 12 voxels, and a halo of 14 holds all of it, so the
// blocks give the unblocked result up to float rounding (FFTs of other lengths, about 1e-6).
TEST(SeamEstimate, AHaloBeyondTheIterationsReachLeavesNoSeam) {
  auto cpu = makeCpuBackend(2);
  const DeconvolveParams p = params3d(3);
  const BlockPlan plan =
      cpuPlan({64, 32, 32}, {5, 5, 5}, p, size_t(1) << 32, {14, 14, 14}, {32, 0, 0});
  ASSERT_EQ(plan.counts.z, 2);
  const SeamEstimate e = estimateSeamError(*cpu, plan, compactPsf(), p, 1e9);
  ASSERT_TRUE(e.estimated) << e.reason;
  EXPECT_LT(e.relativeL2, 1e-5) << e.describe();
  EXPECT_LT(e.maxRelative, 1e-5) << e.describe();
}

// The estimate against the real thing: the run's own blocked and unblocked results on other
// data (beads on a slope), whose worst difference at the seams the trial's must match within a
// factor of 5 either way (the scenes differ; the PSF, halo and iterations, which set the seam,
// are the same). The estimate is well above float rounding: the seam is there.
TEST(SeamEstimate, PredictsTheSeamOfTheRealRun) {
  auto cpu = makeCpuBackend(2);
  const Image psf = measuredLikePsf({31, 24, 24}, false, 5);
  for (int iterations : {10, 30}) {
    const DeconvolveParams p = params3d(iterations);
    const BlockPlan plan = tailsPlan(p);
    ASSERT_EQ(plan.scheme, BlockScheme::Overlap);
    const Image volume = beads(plan.volume, 23);
    const Image whole = cpu->download(cpu->richardsonLucy(volume, psf, p));
    const Image blocked = deconvolveBlocked(*cpu, volume, psf, p, plan);
    const double measured = worstAtSeams(blocked, whole, plan, plan.halo);
    const SeamEstimate e = estimateSeamError(*cpu, plan, psf, p, 1e9);
    ASSERT_TRUE(e.estimated) << e.reason;
    std::printf("%d iterations: measured %.2e at the seams, %s\n", iterations, measured,
                e.describe().c_str());
    EXPECT_GT(e.relativeL2, 1e-4);
    EXPECT_GT(e.maxRelative, measured / 5);
    EXPECT_LT(e.maxRelative, measured * 5);
  }
}

// The seam shrinks as the halo grows (the tails are wide: less than in proportion). Along z
// only, on a volume long enough that neither trial is cut short by it.
TEST(SeamEstimate, AWiderHaloExpectsASmallerSeam) {
  auto cpu = makeCpuBackend(2);
  const Image psf = measuredLikePsf({31, 24, 24}, false, 5);
  const DeconvolveParams p = params3d(10);
  const auto along = [&](Shape halo) {
    return cpuPlan({128, 40, 40}, {31, 24, 24}, p, size_t(1) << 32, halo, {64, 0, 0});
  };
  const SeamEstimate half = estimateSeamError(*cpu, along({16, 12, 12}), psf, p, 1e9);
  const SeamEstimate twice = estimateSeamError(*cpu, along({32, 12, 12}), psf, p, 1e9);
  ASSERT_TRUE(half.estimated && twice.estimated);
  EXPECT_LT(twice.relativeL2, 0.8 * half.relativeL2) << half.describe() << "\n" << twice.describe();
}

TEST(SeamEstimate, SaysWhyThereIsNone) {
  auto cpu = makeCpuBackend(1);
  const Image psf = measuredLikePsf({31, 24, 24}, false, 5);
  const DeconvolveParams p = params3d(10);
  const SeamEstimate costly = estimateSeamError(*cpu, tailsPlan(p), psf, p, 0.0);
  EXPECT_FALSE(costly.estimated);
  EXPECT_NE(costly.describe().find("the trial would take about"), std::string::npos)
      << costly.describe();
  EXPECT_NE(costly.provenance().find("seam error not estimated"), std::string::npos);
  const BlockPlan one = cpuPlan({20, 20, 20}, {5, 5, 5}, p, size_t(1) << 32);
  ASSERT_EQ(one.count(), 1);
  EXPECT_FALSE(estimateSeamError(*cpu, one, compactPsf(), p, 1e9).estimated);
}

// A GPU plan rounds frames up to fast FFT lengths, so they hold more than the halo past each
// seam; the trial's frames hold as much and no more (planned at the CPU's tight lengths around
// that reach), so its volume is cut to four times the reached halo, not the nominal one, and its
// frames, which stop short of its far faces, still leave a seam to measure.
TEST(SeamEstimate, TheTrialReachesAsFarAsTheRunsFrames) {
  auto cpu = makeCpuBackend(2);
  DeconvolveParams p = params3d(20, Boundary::ReflectExact);
  const Image psf = gaussianPsfFromSigmas({4.0, 1.5, 1.5}, true);
  const Shape volume{200, 40, 40};
  const BlockPlan plan = planBlocks(volume, psf.shape(), p, frameCosts("cuda", p), size_t(1) << 40,
                                    {-1, -1, -1}, {100, 0, 0});
  ASSERT_EQ(plan.counts.z, 2);
  int64_t reached = volume.z;
  for (const Block& b : plan.blocks) {
    if (b.interior.z0 > 0) reached = std::min(reached, b.interior.z0 - b.frame.z0);
    if (b.interior.z1 < volume.z) reached = std::min(reached, b.frame.z1 - b.interior.z1);
  }
  ASSERT_GT(reached, plan.halo.z) << "the fast lengths should add to the halo here";
  const SeamEstimate e = estimateSeamError(*cpu, plan, psf, p, 1e9);
  ASSERT_TRUE(e.estimated) << e.reason;
  EXPECT_EQ(e.trial.z, std::min(volume.z, 4 * reached));
  EXPECT_GT(e.relativeL2, 0.0) << e.describe();
}
