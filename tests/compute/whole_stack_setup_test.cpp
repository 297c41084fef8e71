// The whole-stack job's one set-up: the host budget split by its rule, for the CLI and Python
// (foreground) and the viewer, on the CPU and on a GPU (a fake one that records its budget).
#include "compute/blocked/whole_stack_setup.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/compute/fake_backend.h"

namespace {

using stacklens::compute::HostBudgetSplit;
using stacklens::compute::JobCaller;
using stacklens::compute::PlannedRunRequest;
using stacklens::compute::setUpWholeStackJob;
using stacklens::compute::splitHostBudget;
using stacklens::compute::WholeStackJob;

constexpr size_t kMiB = size_t(1) << 20;

// A GPU as the set-up sees it: named "cuda", with a device budget that setMemoryBudget sets (its
// default when given 0).
class FakeCuda : public stacklens::testing::FakeBackend {
 public:
  explicit FakeCuda(size_t defaultBudget) : FakeBackend(true), default_(defaultBudget) {}
  std::string name() const override { return "cuda"; }
  size_t setMemoryBudget(size_t bytes) override {
    asked.push_back(bytes);
    return bytes ? bytes : default_;
  }
  std::vector<size_t> asked;

 private:
  size_t default_;
};

// The rule's figures written out for H = 1024 MiB: on the CPU the frames take half; the viewer
// keeps a quarter back; the slabs take the rest.
TEST(HostBudgetSplit, FramesTakeHalfTheViewerKeepsAQuarterTheSlabsTheRest) {
  const size_t h = 1024 * kMiB;
  const HostBudgetSplit cpuCli = splitHostBudget(h, true, JobCaller::Foreground);
  EXPECT_EQ(cpuCli.host, h);
  EXPECT_EQ(cpuCli.kept, 0u);
  EXPECT_EQ(cpuCli.frames, 512 * kMiB);
  EXPECT_EQ(cpuCli.slabs, 512 * kMiB);
  EXPECT_EQ(cpuCli.cpuFrames, 512 * kMiB);
  const HostBudgetSplit gpuCli = splitHostBudget(h, false, JobCaller::Foreground);
  EXPECT_EQ(gpuCli.frames, 0u);
  EXPECT_EQ(gpuCli.slabs, 1024 * kMiB);
  EXPECT_EQ(gpuCli.cpuFrames, 512 * kMiB);
  const HostBudgetSplit cpuViewer = splitHostBudget(h, true, JobCaller::Viewer);
  EXPECT_EQ(cpuViewer.kept, 256 * kMiB);
  EXPECT_EQ(cpuViewer.frames, 512 * kMiB);
  EXPECT_EQ(cpuViewer.slabs, 256 * kMiB);
  EXPECT_EQ(cpuViewer.cpuFrames, 512 * kMiB);
  const HostBudgetSplit gpuViewer = splitHostBudget(h, false, JobCaller::Viewer);
  EXPECT_EQ(gpuViewer.kept, 256 * kMiB);
  EXPECT_EQ(gpuViewer.frames, 0u);
  EXPECT_EQ(gpuViewer.slabs, 768 * kMiB);
}

// Whatever H (odd byte counts included), what is kept, the frames and the slabs make H.
TEST(HostBudgetSplit, SharesAddUpToTheBudget) {
  for (size_t h : {size_t(0), size_t(1), size_t(7), size_t(1000003), size_t(3) << 30})
    for (bool onHost : {false, true})
      for (JobCaller caller : {JobCaller::Foreground, JobCaller::Viewer}) {
        const HostBudgetSplit s = splitHostBudget(h, onHost, caller);
        EXPECT_EQ(s.kept + s.frames + s.slabs, h) << h;
        EXPECT_LE(s.cpuFrames, h);
      }
}

TEST(HostBudgetSplit, NoBudgetGivenIsTheDefault) {
  const size_t d = stacklens::compute::defaultHostBudget();
  EXPECT_EQ(splitHostBudget(std::nullopt, true, JobCaller::Foreground).host, d);
  EXPECT_EQ(splitHostBudget(std::nullopt, true, JobCaller::Viewer).slabs, d - d / 4 - d / 2);
  // A budget of 0 given is 0, not the default (the CLI's --ram-budget-mb 0 then fails to plan).
  EXPECT_EQ(splitHostBudget(size_t(0), true, JobCaller::Foreground).host, 0u);
}

WholeStackJob jobOn(std::vector<stacklens::compute::Backend*> backends, JobCaller caller) {
  WholeStackJob job;
  job.volume = {40, 80, 72};
  job.psf = {5, 7, 7};
  job.params.iterations = 3;
  job.backends = std::move(backends);
  job.hostBudget = 64 * kMiB;
  job.caller = caller;
  return job;
}

TEST(WholeStackSetup, CpuRequestCarriesTheSplitAndTheCallersShapes) {
  stacklens::testing::FakeBackend cpu;
  WholeStackJob job = jobOn({&cpu}, JobCaller::Viewer);
  job.halo = {2, 3, 4};
  job.maxInterior = {10, 20, 30};
  const PlannedRunRequest r = setUpWholeStackJob(job);
  EXPECT_EQ(r.volume, (stacklens::compute::Shape{40, 80, 72}));
  EXPECT_EQ(r.psf, (stacklens::compute::Shape{5, 7, 7}));
  EXPECT_EQ(r.halo, (stacklens::compute::Shape{2, 3, 4}));
  EXPECT_EQ(r.maxInterior, (stacklens::compute::Shape{10, 20, 30}));
  EXPECT_TRUE(r.params.threeD);
  EXPECT_EQ(r.params.iterations, 3);
  EXPECT_EQ(r.frameBudget, 32 * kMiB);
  EXPECT_EQ(r.slabBudget, 16 * kMiB);
  EXPECT_EQ(r.cpuFrameBudget, 32 * kMiB);
  EXPECT_EQ(r.devices, 1);
}

// FITS is read in row bands, every other format (and an array in memory) in whole slices.
TEST(WholeStackSetup, OnlyFitsIsReadInRowBands) {
  stacklens::testing::FakeBackend cpu;
  WholeStackJob job = jobOn({&cpu}, JobCaller::Foreground);
  for (const std::string format : {"fits", "tiff", "zarr", ""}) {
    job.format = format;
    EXPECT_EQ(setUpWholeStackJob(job).wholeSlices, format != "fits") << format;
  }
}

// On GPUs: each is given the device budget asked for, the smallest in force plans the blocks,
// the slabs get the host budget left after what the caller keeps.
TEST(WholeStackSetup, GpusPlanWithTheSmallestDeviceBudget) {
  FakeCuda a(300 * kMiB), b(200 * kMiB);
  WholeStackJob job = jobOn({&a, &b}, JobCaller::Foreground);
  PlannedRunRequest r = setUpWholeStackJob(job);
  EXPECT_EQ(a.asked, std::vector<size_t>{0});
  EXPECT_EQ(b.asked, std::vector<size_t>{0});
  EXPECT_EQ(r.frameBudget, 200 * kMiB);
  EXPECT_EQ(r.slabBudget, 64 * kMiB);
  EXPECT_EQ(r.cpuFrameBudget, 32 * kMiB);
  EXPECT_EQ(r.devices, 2);
  job.deviceBudget = 100 * kMiB;
  job.caller = JobCaller::Viewer;
  job.devices = 4;  // the viewer's GPUs, their backends made when the job starts
  r = setUpWholeStackJob(job);
  EXPECT_EQ(a.asked.back(), 100 * kMiB);
  EXPECT_EQ(r.frameBudget, 100 * kMiB);
  EXPECT_EQ(r.slabBudget, 48 * kMiB);
  EXPECT_EQ(r.devices, 4);
}

TEST(WholeStackSetup, NoBackendIsAnError) {
  EXPECT_THROW(setUpWholeStackJob(WholeStackJob{}), stacklens::compute::InvalidArgument);
}

}  // namespace
