// chooseForSeams: the fastest plan is kept where its seams are expected within the tolerance,
// one block is taken instead where they are not and the budget holds it, and the reasons are said.
// Two CPU "devices" make overlapping blocks the fastest plan while one block still fits, as a GPU's
// fast frame lengths do.
#include "compute/blocked/seam_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/compute/blocked_cases.h"
#include "tests/compute/image_checks.h"

using namespace stacklens::compute;
using stacklens::testing::compactPsf;
using stacklens::testing::measuredLikePsf;
using stacklens::testing::params3d;

namespace {

PlannedRunRequest twoDeviceRequest(Shape volume, const Image& psf, const DeconvolveParams& p) {
  PlannedRunRequest r;
  r.volume = volume;
  r.psf = psf.shape();
  r.params = p;
  r.frameBudget = size_t(1) << 32;
  r.slabBudget = size_t(1) << 30;
  r.cpuFrameBudget = r.frameBudget;
  r.devices = 2;
  return r;
}

bool says(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

}  // namespace

// A measured-like PSF's tails reach past half-PSF halos within a few iterations (the seam
// estimate's own tests measure a few 1e-3): exact takes one block, fast keeps the blocks.
TEST(SeamPolicy, VisibleSeamsTakeOneBlockUnlessFastIsAsked) {
  auto cpu = makeCpuBackend(2);
  const Image psf = measuredLikePsf({31, 24, 24}, false, 5);
  const PlannedRunRequest r = twoDeviceRequest({96, 40, 40}, psf, params3d(10));
  ASSERT_GT(planRun(r, "cpu").count(), 1) << "two devices should make blocks the fastest plan";

  const SeamChoice exact = chooseForSeams(*cpu, r, psf, SeamRule::Exact, 1e9);
  ASSERT_TRUE(exact.estimate.estimated) << exact.estimate.reason;
  EXPECT_GT(exact.estimate.relativeL2, kSeamTolerance);
  EXPECT_EQ(exact.plan.count(), 1);
  EXPECT_TRUE(exact.request.oneBlock);
  EXPECT_TRUE(says(exact.summary, "as one block instead")) << exact.summary;
  EXPECT_TRUE(says(exact.provenance, "one block for exact seams")) << exact.provenance;
  // What runs is what was chosen.
  EXPECT_EQ(planRun(exact.request, "cpu").count(), 1);

  const SeamChoice fast = chooseForSeams(*cpu, r, psf, SeamRule::Fast, 1e9);
  EXPECT_GT(fast.plan.count(), 1);
  EXPECT_FALSE(fast.request.oneBlock);
  EXPECT_TRUE(says(fast.provenance, "overlapping")) << fast.provenance;
  EXPECT_TRUE(says(fast.provenance, "expected seam error")) << fast.provenance;
}

// One iteration of a PSF of radius 2 reads 4 voxels past a voxel: a halo of 4 holds it all, the
// trial finds no seam (float rounding, about 1e-7), and the fastest blocks stay.
TEST(SeamPolicy, SeamsWithinTheToleranceKeepTheBlocks) {
  auto cpu = makeCpuBackend(2);
  const Image psf = compactPsf();
  PlannedRunRequest r = twoDeviceRequest({96, 32, 32}, psf, params3d(1));
  r.halo = {4, 4, 4};
  const SeamChoice c = chooseForSeams(*cpu, r, psf, SeamRule::Exact, 1e9);
  ASSERT_GT(c.plan.count(), 1);
  ASSERT_TRUE(c.estimate.estimated) << c.estimate.reason;
  EXPECT_LT(c.estimate.relativeL2, kSeamTolerance);
  EXPECT_FALSE(c.request.oneBlock);
  EXPECT_FALSE(says(c.summary, "one block")) << c.summary;
}

// With no room for one block, blocks that keep their frames where the backend computes and
// exchange halos take its place when they fit: the unblocked result.
TEST(SeamPolicy, NoRoomForOneBlockTakesResidentBlocks) {
  auto cpu = makeCpuBackend(2);
  const Image psf = measuredLikePsf({31, 24, 24}, false, 5);
  // Long enough along z that two frames with their halos hold fewer voxels than the unblocked
  // run's frame: the CPU's resident frames keep all their arrays, so only then do they fit where
  // one block does not.
  const Shape volume{192, 64, 64};
  PlannedRunRequest r = twoDeviceRequest(volume, psf, params3d(10));
  PlannedRunRequest one = r, resident = r;
  one.oneBlock = true;
  resident.resident = true;
  const size_t oneBytes = planRun(one, "cpu").bytesPerBlock;
  const BlockPlan residentPlan = planRun(resident, "cpu");
  const size_t residentBytes = residentPlan.bytesPerBlock * size_t(residentPlan.count());
  ASSERT_LT(residentBytes, oneBytes) << "the case needs resident frames smaller than one block";
  r.frameBudget = oneBytes - 1;
  const SeamChoice c = chooseForSeams(*cpu, r, psf, SeamRule::Exact, 1e9);
  ASSERT_TRUE(c.request.resident) << c.summary;
  EXPECT_EQ(c.plan.scheme, BlockScheme::Resident);
  EXPECT_TRUE(says(c.summary, "exchange halos every iteration instead")) << c.summary;
  EXPECT_TRUE(says(c.provenance, "exchanging halos for exact seams")) << c.provenance;
  // It runs as chosen, on one of the devices, and gives the unblocked result.
  const Image in = stacklens::testing::beads(volume, 41);
  Image out = Image::host(volume);
  PlannedRunRequest run = c.request;
  run.devices = 1;
  const PlannedRunResult result = planAndDeconvolve(
      *cpu, run, [&](const BlockPlan&) { return boxReader(in); }, boxWriter(out), psf, {}, {});
  EXPECT_EQ(result.plan.scheme, BlockScheme::Resident);
  const Image whole = cpu->download(cpu->richardsonLucy(in, psf, params3d(10)));
  EXPECT_LT(stacklens::testing::relativeL2(out, whole), 1e-4);
}

// With no room for any exact plan, the blocks stay and the summary says why.
TEST(SeamPolicy, NoRoomForAnExactPlanKeepsTheBlocksAndSaysSo) {
  auto cpu = makeCpuBackend(2);
  const Image psf = measuredLikePsf({31, 24, 24}, false, 5);
  PlannedRunRequest r = twoDeviceRequest({96, 40, 40}, psf, params3d(10));
  PlannedRunRequest one = r, resident = r;
  one.oneBlock = true;
  resident.resident = true;
  const BlockPlan residentPlan = planRun(resident, "cpu");
  r.frameBudget = std::min(planRun(one, "cpu").bytesPerBlock,
                           residentPlan.bytesPerBlock * size_t(residentPlan.count())) -
                  1;
  ASSERT_GT(planRun(r, "cpu").count(), 1);
  const SeamChoice c = chooseForSeams(*cpu, r, psf, SeamRule::Exact, 1e9);
  EXPECT_GT(c.plan.count(), 1);
  EXPECT_FALSE(c.request.oneBlock);
  EXPECT_FALSE(c.request.resident);
  EXPECT_TRUE(says(c.summary, "no exact plan fits")) << c.summary;
  EXPECT_TRUE(says(c.provenance, "expected seam error")) << c.provenance;
}

// A trial that would cost too much is skipped with its reason, and the fastest plan stays.
TEST(SeamPolicy, ASkippedTrialKeepsTheFastestPlan) {
  auto cpu = makeCpuBackend(2);
  const Image psf = measuredLikePsf({31, 24, 24}, false, 5);
  const PlannedRunRequest r = twoDeviceRequest({96, 40, 40}, psf, params3d(10));
  const SeamChoice c = chooseForSeams(*cpu, r, psf, SeamRule::Exact, 0.0);
  EXPECT_FALSE(c.estimate.estimated);
  EXPECT_GT(c.plan.count(), 1);
  EXPECT_TRUE(says(c.provenance, "not estimated")) << c.provenance;
}

TEST(SeamPolicy, NamesTheRules) {
  EXPECT_EQ(seamRuleNamed("exact"), SeamRule::Exact);
  EXPECT_EQ(seamRuleNamed("fast"), SeamRule::Fast);
  EXPECT_FALSE(seamRuleNamed("Exact").has_value());
}
