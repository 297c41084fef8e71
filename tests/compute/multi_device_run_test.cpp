// Whole-stack deconvolution on several devices (compute/blocked/): blocks shared through one queue
// give the one-device result; a worker whose device fails hands its blocks to the others; a read
// error or a cancel stops them all; the device list's syntax. The CPU tests stand in for GPUs with
// CPU backends (CI has no GPU); the GPU test runs two workers on one device.
#include <gtest/gtest.h>

#include <algorithm>

#include <atomic>
#include <chrono>
#include <cstring>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

#include "compute/blocked/block_queue.h"
#include "compute/blocked/blocked_deconvolution.h"
#include "compute/blocked/planned_run.h"
#include "compute/blocked/slab_stream.h"
#include "compute/blocked/streamed_resample.h"
#include "compute/device_list.h"
#include "tests/compute/blocked_cases.h"
#include "tests/compute/forwarding_backend.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"

using namespace stacklens::compute;
using stacklens::testing::beads;
using stacklens::testing::budgetFor;
using stacklens::testing::cpuPlan;
using stacklens::testing::params3d;
using stacklens::testing::relativeL2;

namespace {

// A device that breaks: its Richardson–Lucy call number `failAt` (1-based) and every later one
// throw, as a CUDA error would; `oom` makes them OutOfDeviceMemory instead.
class BreakingDevice final : public stacklens::testing::ForwardingBackend {
 public:
  explicit BreakingDevice(int failAt, bool oom = false) : failAt_(failAt), oom_(oom) {}
  std::string name() const override { return "breaking"; }
  std::string deviceName() const override { return "breaking device"; }
  Image richardsonLucy(const Image& in, const Image& psf, const DeconvolveParams& p,
                       const Job& j) override {
    if (++calls >= failAt_) {
      if (oom_) throw OutOfDeviceMemory("simulated: out of device memory");
      throw std::runtime_error("simulated: an illegal memory access was encountered");
    }
    return ForwardingBackend::richardsonLucy(in, psf, p, j);
  }
  std::atomic<int> calls{0};

 private:
  int failAt_;
  bool oom_;
};

// A healthy device that starts its first block only once `breaking` has thrown (or after a
// minute), so that the breaking device gets its blocks however the threads are scheduled:
// otherwise, on a loaded machine, the healthy worker could take every block before the other
// reached its failing call.
class HealthyAfterTheFailure final : public stacklens::testing::ForwardingBackend {
 public:
  HealthyAfterTheFailure(const BreakingDevice& breaking, int failAt)
      : breaking_(breaking), failAt_(failAt) {}
  Image richardsonLucy(const Image& in, const Image& psf, const DeconvolveParams& p,
                       const Job& j) override {
    const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (breaking_.calls.load() < failAt_ && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return ForwardingBackend::richardsonLucy(in, psf, p, j);
  }

 private:
  const BreakingDevice& breaking_;
  int failAt_;
};

struct Fixture {
  Shape shape{26, 44, 38};
  Image volume = beads(shape, 29);
  Image psf = gaussianPsf(1.0, 1.0, 1.0);
  DeconvolveParams p = params3d(3);
  BlockPlan plan = cpuPlan(shape, psf.shape(), p, budgetFor(shape, psf.shape(), p, 0.25));
};

void expectSame(const Image& got, const Image& want) {
  for (int64_t i = 0; i < want.shape().count(); ++i)
    ASSERT_EQ(got.data()[i], want.data()[i]) << "at " << i;
}

TEST(BlockQueue, HandsOutEachBlockOnceAndTakesFailedOnesBack) {
  BlockQueue q(3);
  EXPECT_EQ(q.take(), 0u);
  EXPECT_EQ(q.tryTake(), 1u);
  q.handBack(1);  // its device failed: first in line again
  EXPECT_EQ(q.tryTake(), 1u);
  EXPECT_EQ(q.tryTake(), 2u);
  EXPECT_EQ(q.tryTake(), std::nullopt);
  // A worker with nothing in hand waits while blocks are out: one may come back.
  std::optional<size_t> got;
  std::thread waiter([&] { got = q.take(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  q.done(0);
  q.handBack(2);
  waiter.join();
  EXPECT_EQ(got, 2u);
  q.done(1);
  EXPECT_FALSE(q.finished());
  q.done(2);
  EXPECT_TRUE(q.finished());
  EXPECT_EQ(q.take(), std::nullopt);  // all done: no wait
  BlockQueue stopped(2);
  stopped.stop();
  EXPECT_EQ(stopped.take(), std::nullopt);
}

// Blocks of unequal cost: workers that have taken nothing get the costliest; the next block a
// worker takes evens it out, whichever worker asks first (longest-first pairs). The costs are the
// seed job's eight blocks on four GPUs; equal costs go in order, and one worker takes the
// costliest first.
TEST(BlockQueue, PairsUnequalBlocksSoThatWorkersFinishTogether) {
  const std::vector<double> costs{32.9, 29.2, 29.2, 26.0, 29.2, 26.0, 26.0, 21.5};
  BlockQueue q(costs, 4);
  double load[4] = {};
  for (size_t w = 0; w < 4; ++w) load[w] += costs[*q.take(w)];
  EXPECT_EQ(load[0], 32.9);  // the costliest first, then three of 29.2
  for (size_t w = 1; w < 4; ++w) EXPECT_EQ(load[w], 29.2);
  for (size_t w : {2u, 0u, 3u, 1u}) load[w] += costs[*q.tryTake(w)];  // any order of asking
  EXPECT_EQ(q.tryTake(1), std::nullopt);
  for (size_t w = 0; w < 4; ++w) EXPECT_NEAR(load[w], 55.0, 0.65) << w;  // 54.4 and 55.2
  // In order by index, the worker with block 0 would have taken one of 26.0 (58.9).
  BlockQueue equal(std::vector<double>(5, 1.0), 2);
  for (size_t k = 0; k < 5; ++k) EXPECT_EQ(equal.take(k % 2), k);
  BlockQueue one(std::vector<double>{1.0, 3.0, 2.0}, 1);
  EXPECT_EQ(one.take(), 1u);
  EXPECT_EQ(one.tryTake(), 2u);
  EXPECT_EQ(one.tryTake(), 0u);
}

TEST(MultiDeviceRun, SeveralWorkersGiveTheOneWorkerResult) {
  Fixture f;
  ASSERT_GE(f.plan.count(), 4);
  // FFTW's threaded transforms round differently with another thread count: the workers' one.
  auto one = makeCpuBackend(1);
  const Image want = deconvolveBlocked(*one, f.volume, f.psf, f.p, f.plan);
  for (int workers : {2, 3}) {
    std::vector<std::unique_ptr<Backend>> owned;
    for (int i = 0; i < workers; ++i) owned.push_back(makeCpuBackend(1));
    Image out = Image::host(f.shape);
    const BlockedRunReport report = deconvolveBlocked(pointersTo(owned), boxReader(f.volume),
                                                      boxWriter(out), f.psf, f.p, f.plan);
    expectSame(out, want);
    EXPECT_EQ(report.blocks, f.plan.count());
    ASSERT_EQ(report.workers.size(), size_t(workers));
    int sum = 0;
    std::vector<size_t> seen;
    for (const WorkerReport& w : report.workers) {
      EXPECT_TRUE(w.failure.empty()) << w.failure;
      sum += w.blocks;
      // The timeline: one entry per block written, each step after the one it needs.
      ASSERT_EQ(w.timeline.size(), size_t(w.blocks));
      for (const BlockTimes& t : w.timeline) {
        seen.push_back(t.block);
        EXPECT_LE(t.readFrom, t.readTo);
        EXPECT_LE(t.readTo, t.computeFrom);
        EXPECT_LT(t.computeFrom, t.computeTo);
        EXPECT_LE(t.computeTo, t.writeFrom);
        EXPECT_LE(t.writeFrom, t.writeTo);
        EXPECT_LE(t.writeTo, w.finishedAt);
      }
      EXPECT_LE(w.finishedAt, report.releasedAt);
    }
    EXPECT_EQ(sum, f.plan.count());
    std::sort(seen.begin(), seen.end());
    for (size_t k = 0; k < seen.size(); ++k) EXPECT_EQ(seen[k], k);
  }
}

// Reflect-exact frames of several lengths: each worker's frame slots follow the shape of the
// block it takes, and the result is still the one worker's, bit for bit.
TEST(MultiDeviceRun, ReflectExactFramesOfSeveralLengthsOnSeveralWorkers) {
  Fixture f;
  f.p = params3d(3, Boundary::ReflectExact);
  f.plan = cpuPlan(f.shape, f.psf.shape(), f.p, size_t(1) << 30, {-1, -1, -1}, {0, 0, 4});
  std::set<std::tuple<int64_t, int64_t, int64_t>> shapes;
  for (const Block& b : f.plan.blocks) {
    const Shape s = b.frame.shape();
    shapes.insert({s.z, s.y, s.x});
  }
  ASSERT_GE(shapes.size(), 2u) << f.plan.describe(3);
  auto one = makeCpuBackend(1);
  const Image want = deconvolveBlocked(*one, f.volume, f.psf, f.p, f.plan);
  std::vector<std::unique_ptr<Backend>> owned;
  for (int i = 0; i < 3; ++i) owned.push_back(makeCpuBackend(1));
  Image out = Image::host(f.shape);
  const BlockedRunReport report =
      deconvolveBlocked(pointersTo(owned), boxReader(f.volume), boxWriter(out), f.psf, f.p, f.plan);
  EXPECT_EQ(report.blocks, f.plan.count());
  expectSame(out, want);
  // And it is close to the unblocked run: only the seams differ.
  const Image whole = one->download(one->richardsonLucy(f.volume, f.psf, f.p));
  EXPECT_LT(relativeL2(out, whole), 1e-3);
}

TEST(MultiDeviceRun, AFailingDeviceHandsItsBlocksToTheOthers) {
  Fixture f;
  auto reference = makeCpuBackend(2);
  const Image want = deconvolveBlocked(*reference, f.volume, f.psf, f.p, f.plan);
  // The breaking device's first call takes a block while the healthy one waits on another; its
  // second (failAt 2) needs a third block.
  ASSERT_GE(f.plan.count(), 3);
  for (int failAt : {1, 2}) {
    BreakingDevice breaking(failAt);
    HealthyAfterTheFailure healthy(breaking, failAt);
    Image out = Image::host(f.shape);
    const BlockedRunReport report =
        deconvolveBlocked(std::vector<Backend*>{&breaking, &healthy}, boxReader(f.volume),
                          boxWriter(out), f.psf, f.p, f.plan);
    expectSame(out, want);
    EXPECT_EQ(report.blocks, f.plan.count());
    EXPECT_EQ(report.workers[0].blocks, failAt - 1) << "fails at call " << failAt;
    EXPECT_NE(report.workers[0].failure.find("illegal memory access"), std::string::npos);
    EXPECT_EQ(report.workers[1].blocks, f.plan.count() - (failAt - 1));
    EXPECT_TRUE(report.workers[1].failure.empty());
  }
}

TEST(MultiDeviceRun, WhenEveryDeviceFailsTheFirstFailureIsThrown) {
  Fixture f;
  BreakingDevice a(2), b(1);
  Image out = Image::host(f.shape);
  EXPECT_THROW(deconvolveBlocked(std::vector<Backend*>{&a, &b}, boxReader(f.volume), boxWriter(out),
                                 f.psf, f.p, f.plan),
               std::runtime_error);
  // Out of memory on every device, before anything was written: the run plans smaller blocks
  // (then the CPU), as with one device.
  BreakingDevice c(1, true), d(1, true);
  PlannedRunRequest r;
  r.volume = f.shape;
  r.psf = f.psf.shape();
  r.params = f.p;
  r.frameBudget = budgetFor(f.shape, f.psf.shape(), f.p, 0.25);
  r.slabBudget = size_t(1) << 30;
  r.cpuFrameBudget = size_t(1) << 30;
  std::vector<std::string> notes;
  const PlannedRunResult run = planAndDeconvolve(
      std::vector<Backend*>{&c, &d}, r, [&](const BlockPlan&) { return boxReader(f.volume); },
      boxWriter(out), f.psf, {}, [&](const std::string& n) { notes.push_back(n); });
  EXPECT_EQ(run.backend, "cpu");
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes.front().find("smaller blocks"), std::string::npos) << notes.front();
  auto cpu = makeCpuBackend();  // the run's own fallback: every hardware thread
  expectSame(out, deconvolveBlocked(*cpu, f.volume, f.psf, f.p, run.plan));
}

TEST(MultiDeviceRun, AReadErrorOrACancelStopsEveryWorker) {
  Fixture f;
  auto a = makeCpuBackend(1), b = makeCpuBackend(1);
  const std::vector<Backend*> both{a.get(), b.get()};
  Image out = Image::host(f.shape);
  std::atomic<int> reads{0};
  const BoxReader whole = boxReader(f.volume);
  const BoxReader failing = [&](const Box& box, float* o) {
    if (++reads == 5) throw std::invalid_argument("disk gone");
    whole(box, o);
  };
  try {
    deconvolveBlocked(both, failing, boxWriter(out), f.psf, f.p, f.plan);
    ADD_FAILURE() << "the read error was not thrown";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "disk gone");
  }
  std::atomic<bool> cancel{false};
  std::atomic<int> written{0};
  const BoxWriter write = [&](const Box&, const float*) {
    if (++written == 1) cancel = true;
  };
  EXPECT_THROW(deconvolveBlocked(both, whole, write, f.psf, f.p, f.plan, Job(&cancel)), Cancelled);
  EXPECT_LT(written.load(), f.plan.count());
}

// A cancel during the deconvolutions stops them within an iteration on every worker, not at the
// end of their blocks.
TEST(MultiDeviceRun, ACancelStopsTheDeconvolutionsUnderWay) {
  Fixture f;
  f.p.iterations = 100000;  // minutes per block
  auto a = makeCpuBackend(1), b = makeCpuBackend(1);
  std::atomic<bool> cancel{false};
  Image out = Image::host(f.shape);
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(deconvolveBlocked(std::vector<Backend*>{a.get(), b.get()}, boxReader(f.volume),
                                 boxWriter(out), f.psf, f.p, f.plan, Job(&cancel)),
               Cancelled);
  canceller.join();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
}

TEST(MultiDeviceRun, PlansCountRoundsOfBlocks) {
  Fixture f;
  const FrameCosts costs = frameCosts("cpu", f.p);
  const size_t budget = budgetFor(f.shape, f.psf.shape(), f.p, 0.25);
  const BlockPlan one = planBlocks(f.shape, f.psf.shape(), f.p, costs, budget);
  const BlockPlan four =
      planBlocks(f.shape, f.psf.shape(), f.p, costs, budget, {-1, -1, -1}, {0, 0, 0}, 4);
  EXPECT_EQ(four.devices, 4);
  const double rounds = double((four.count() + 3) / 4);
  EXPECT_NEAR(four.secondsPerIteration, rounds * costs.secondsPerIteration(four.frame), 1e-12);
  EXPECT_LE(four.secondsPerIteration, one.secondsPerIteration);
  EXPECT_NE(four.describe(10).find("4 devices at once"), std::string::npos);
}

// Local operations on stacks larger than memory, slab by slab on several backends: the one-
// backend result whatever backend takes a slab; a backend that fails leaves its slabs to the
// others.
TEST(MultiDeviceRun, SlabsOnSeveralBackendsGiveTheOneBackendResult) {
  const Shape shape{37, 30, 28};
  const Image volume = beads(shape, 37);
  const BlurParams blur3d{1.5, 1.0, 1.0, 4.0, false};
  std::atomic<int> brokenCalls{0};
  std::atomic<bool> waitForTheBreak{false};
  const SlabOperation op = [&](Backend& b, const Image& in) {
    if (b.name() == "breaking" && ++brokenCalls >= 1)
      throw std::runtime_error("simulated: the device fell off the bus");
    // The healthy backend finishes nothing before the breaking one has taken a slab and failed
    // (slabs this small would otherwise all be done before its thread starts).
    for (int i = 0; waitForTheBreak && brokenCalls == 0 && i < 5000; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return b.gaussianBlur(in, blur3d);
  };
  auto one = makeCpuBackend(1);
  Image want = Image::host(shape);
  streamSlabs(*one, boxReader(volume), boxWriter(want), shape, 6, 5, op);
  auto a = makeCpuBackend(1), b = makeCpuBackend(1);
  BreakingDevice breaking(1000);  // breaks through `op`, at its first slab
  for (const std::vector<Backend*>& backends :
       {std::vector<Backend*>{a.get(), b.get()}, std::vector<Backend*>{&breaking, a.get()}}) {
    Image out = Image::host(shape);
    waitForTheBreak = backends.front() == &breaking;
    const SlabStreamReport report =
        streamSlabs(backends, boxReader(volume), boxWriter(out), shape, 6, 5, op);
    expectSame(out, want);
    EXPECT_EQ(report.slabs, 8);
    if (backends.front() == &breaking) {
      ASSERT_EQ(report.failures.size(), 1u);
      EXPECT_NE(report.failures.front().find("fell off the bus"), std::string::npos);
    } else {
      EXPECT_TRUE(report.failures.empty());
    }
  }
}

// A device whose resampling breaks at its first call.
class BrokenResampler final : public stacklens::testing::ForwardingBackend {
 public:
  std::string deviceName() const override { return "broken resampler"; }
  Image resample(const Image&, const ResampleParams&, const Job&) override {
    broke = true;
    throw std::runtime_error("simulated: unspecified launch failure");
  }
  std::atomic<bool> broke{false};
};

// A healthy device that zooms nothing before `other` broke (slices this small would otherwise
// all be done before the broken one's thread starts).
class WaitsForTheBreak final : public stacklens::testing::ForwardingBackend {
 public:
  explicit WaitsForTheBreak(const BrokenResampler& other) : other_(other) {}
  Image resample(const Image& in, const ResampleParams& p, const Job& j) override {
    for (int i = 0; !other_.broke && i < 5000; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return ForwardingBackend::resample(in, p, j);
  }

 private:
  const BrokenResampler& other_;
};

// Resampling stacks larger than memory: input slices zoomed on several backends give the one-
// backend result bit for bit; a backend that breaks leaves its slices to the others.
TEST(MultiDeviceRun, StreamedResamplingOnSeveralBackendsGivesTheOneBackendResult) {
  const Shape in{23, 40, 36};
  const Image volume = beads(in, 41);
  const ResampleParams p{1.7, 0.6, 1.3, 3};
  const Shape out = resampledShape(in, p);
  auto one = makeCpuBackend(1);
  Image want = Image::host(out);
  streamResample(*one, boxReader(volume), boxWriter(want), in, p, 5);
  auto a = makeCpuBackend(1), b = makeCpuBackend(1);
  BrokenResampler broken;
  WaitsForTheBreak healthy(broken);
  for (const std::vector<Backend*>& backends :
       {std::vector<Backend*>{a.get(), b.get()}, std::vector<Backend*>{&broken, &healthy}}) {
    Image got = Image::host(out);
    const StreamedResampleReport report =
        streamResample(backends, boxReader(volume), boxWriter(got), in, p, 5);
    expectSame(got, want);
    EXPECT_EQ(report.failures.size(), backends.front() == &broken ? 1u : 0u);
  }
  // Every backend broken: the failure is thrown.
  Image got = Image::host(out);
  EXPECT_THROW(
      streamResample(std::vector<Backend*>{&broken}, boxReader(volume), boxWriter(got), in, p, 5),
      std::runtime_error);
}

TEST(DeviceList, AllACountOrAList) {
  EXPECT_EQ(parseDeviceList("all", 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parseDeviceList("2", 4), (std::vector<int>{0, 1}));
  EXPECT_EQ(parseDeviceList("0,2", 4), (std::vector<int>{0, 2}));
  EXPECT_EQ(parseDeviceList("3,", 4), (std::vector<int>{3}));
  for (const char* bad : {"0", "5", "x", "0,4", "1,1", ",", "-1", "all,"})
    EXPECT_THROW(parseDeviceList(bad, 4), InvalidArgument) << bad;
  EXPECT_THROW(parseDeviceList("all", 0), InvalidArgument);
}

class CudaMultiDevice : public stacklens::testing::GpuTest {};

// Two workers on the same device (two contexts, as two GPUs would have) give the one-worker
// result bit for bit: every block is computed the same way wherever it runs.
TEST_F(CudaMultiDevice, TwoWorkersOnOneDeviceGiveTheOneWorkerResult) {
  Fixture f;
  const Image want = deconvolveBlocked(*gpu, f.volume, f.psf, f.p, f.plan);
  auto second = makeCudaBackend(0);
  Image out = Image::host(f.shape);
  const BlockedRunReport report =
      deconvolveBlocked(std::vector<Backend*>{gpu, second.get()}, boxReader(f.volume),
                        boxWriter(out), f.psf, f.p, f.plan);
  expectSame(out, want);
  EXPECT_GT(report.workers[0].blocks, 0);
  EXPECT_GT(report.workers[1].blocks, 0);
  // And a GPU worker that breaks leaves its blocks to the other.
  BreakingDevice breaking(2);
  Image out2 = Image::host(f.shape);
  deconvolveBlocked(std::vector<Backend*>{&breaking, gpu}, boxReader(f.volume), boxWriter(out2),
                    f.psf, f.p, f.plan);
  EXPECT_LT(stacklens::testing::relativeL2(out2, want), 1e-4);
}

// A thread that lets go of another device's backend and staging goes on working on its own
// device: its next transfer reaches its device intact. Skipped with fewer than two GPUs.
TEST_F(CudaMultiDevice, LettingGoOfAnotherDevicesBackendKeepsTheThreadOnItsDevice) {
  const int count = cudaDeviceCount();
  if (count < 2) GTEST_SKIP() << count << " CUDA device(s) visible; this needs two";
  auto other = makeCudaBackend(count - 1);
  auto transfers = other->device().blockTransfers();
  float* staging = transfers->staging(0, 1 << 20);
  staging[0] = 1.f;
  gpu->device().bindToThisThread();
  transfers.reset();
  other.reset();
  const Image source = stacklens::testing::randomImage({3, 17, 29}, 5, -2.f, 2.f);
  const Image back = gpu->download(gpu->upload(source));
  for (int64_t i = 0; i < source.shape().count(); ++i)
    ASSERT_EQ(back.data()[i], source.data()[i]) << i;
}

// Every visible GPU takes blocks and none fails; the result is one GPU's, bit for bit. Frames of
// the fused passes' lengths (their kernels need more than the default shared memory, which is
// set per device). Skipped with fewer than two GPUs.
TEST_F(CudaMultiDevice, EveryVisibleGpuTakesItsShare) {
  const int count = cudaDeviceCount();
  if (count < 2) GTEST_SKIP() << count << " CUDA device(s) visible; this needs two";
  // Slabs of 54 planes with a halo of 5 on each side: frames of 64 × 128 × 128.
  const Shape shape{432, 116, 116};
  const Image volume = beads(shape, 31);
  const Image psf = gaussianPsf(1.0, 1.0, 1.0);
  const DeconvolveParams p = params3d(5);
  const FrameCosts costs = frameCosts("cuda", p);
  BlockPlan plan =
      planBlocks(shape, psf.shape(), p, costs, size_t(1) << 32, {-1, -1, -1}, {54, 0, 0}, count);
  planSlabs(plan, size_t(1) << 30, true);
  ASSERT_TRUE(plan.fastFrame);
  ASSERT_GE(plan.count(), 2 * count);
  const Image want = deconvolveBlocked(*gpu, volume, psf, p, plan);
  const auto all = makeCudaBackends(parseDeviceList("all", count));
  Image out = Image::host(shape);
  const BlockedRunReport report =
      deconvolveBlocked(pointersTo(all), boxReader(volume), boxWriter(out), psf, p, plan);
  expectSame(out, want);
  for (const WorkerReport& w : report.workers) {
    EXPECT_TRUE(w.failure.empty()) << w.device << ": " << w.failure;
    EXPECT_GT(w.blocks, 0) << w.device;
  }
}

}  // namespace
