// compute::LiveProcessor: raw slices read once and kept (LRU by bytes), read-ahead, results left
// where the backend computes (a fake device backend on CI; the real CUDA path runs in
// tests/render/interop on the GPU machine), and the host fallback.
#include "compute/live_processor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "compute/device_control.h"
#include "compute/pipeline.h"
#include "tests/compute/counting_source.h"
#include "tests/compute/fake_backend.h"

using namespace stacklens;
using compute::Image;
using compute::LiveProcessor;
using stacklens::testing::CountingSource;
using stacklens::testing::FakeBackend;
using stacklens::testing::rampSlab;

namespace {

compute::Pipeline deconvolution2D(int iterations = 2) {
  compute::Pipeline p;
  p.deconvolution.enabled = true;
  p.deconvolution.params.iterations = iterations;
  return p;
}

// Bounded only so that a failure cannot hang the suite: a read-ahead thread of lowered priority
// on a loaded machine may wait seconds for a core.
bool waitUntil(const std::function<bool()>& done) {
  for (int i = 0; i < 60000 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return done();
}

}  // namespace

TEST(LiveProcessor, ResultIsThePipelineOfTheSliceAndRawIsTheSlice) {
  CountingSource src(4);
  auto cpu = std::make_shared<FakeBackend>(false);
  LiveProcessor live(cpu, src.source());
  compute::Pipeline p;
  p.blur.enabled = true;
  const LiveProcessor::Frame f = live.process(2, p);
  ASSERT_TRUE(f.result.image.onHost());
  ASSERT_EQ(f.result.image.shape(), (compute::Shape{1, 6, 5}));
  for (int64_t y = 0; y < 6; ++y)
    for (int64_t x = 0; x < 5; ++x) {
      EXPECT_EQ(f.result.image.at(0, y, x), src.stack.at(2, y, x) + 10.f);
      EXPECT_EQ(f.raw.at(0, y, x), src.stack.at(2, y, x));
    }
  EXPECT_EQ(src.reads->load(), 1);
}

TEST(LiveProcessor, DeviceResultStaysOnTheDeviceAndTheRawSliceIsUploadedOnce) {
  CountingSource src(3);
  auto gpu = std::make_shared<FakeBackend>(true);
  LiveProcessor live(gpu, src.source());
  const compute::Pipeline p = deconvolution2D();
  LiveProcessor::Frame f = live.process(1, p);
  EXPECT_EQ(f.result.image.location(), compute::Location::Cuda);  // no download
  EXPECT_EQ(f.result.downloadMs, 0.0);
  EXPECT_TRUE(live.onBackend(1));
  const size_t slice = 6 * 5 * sizeof(float);
  EXPECT_EQ(live.rawDeviceBytes(), slice);
  EXPECT_EQ(live.rawBytes(), 2 * slice);  // host copy + device copy
  // Again: no read, and the kept device slice is what the operation gets.
  const auto uploadsBefore = gpu->synchronizeCalls.load();
  f = live.process(1, p);
  EXPECT_EQ(src.reads->load(), 1);
  EXPECT_GT(gpu->synchronizeCalls.load(), uploadsBefore);
  // The fallback (no interop): one download gives the pixels.
  const Image host = live.download(f.result.image);
  ASSERT_TRUE(host.onHost());
  for (int64_t y = 0; y < 6; ++y)
    for (int64_t x = 0; x < 5; ++x) EXPECT_EQ(host.at(0, y, x), src.stack.at(1, y, x));
  // A 2D pipeline on a 2D slice: RL's slice index is 0, so v + 0.
}

TEST(LiveProcessor, KeptRawSlicesGiveUpTheirUploadsFirstThenGoLeastRecentlyUsedFirst) {
  CountingSource src(5);
  auto gpu = std::make_shared<FakeBackend>(true);
  const size_t slice = 6 * 5 * sizeof(float);
  LiveProcessor live(gpu, src.source(), 4 * slice);  // four slices' bytes, host and device
  const compute::Pipeline p = deconvolution2D();
  for (int z : {0, 1, 2, 3}) {
    live.process(z, p);
    EXPECT_LE(live.rawBytes(), 4 * slice);
  }
  // Three host copies and the newest upload: older uploads went before any host slice did.
  EXPECT_EQ(live.rawSlices(), 3);
  EXPECT_FALSE(live.kept(0));
  EXPECT_TRUE(live.kept(1));
  EXPECT_TRUE(live.kept(2));
  EXPECT_TRUE(live.kept(3));
  EXPECT_EQ(live.rawDeviceBytes(), slice);
  EXPECT_TRUE(live.onBackend(3));
  EXPECT_FALSE(live.onBackend(2));
  live.process(2, p);  // kept on the host: uploaded again, not read
  EXPECT_EQ(src.reads->load(), 4);
  EXPECT_TRUE(live.onBackend(2));
  EXPECT_FALSE(live.onBackend(3));
  live.process(0, p);  // evicted: read again, and 1, the least recent host slice, goes
  EXPECT_EQ(src.reads->load(), 5);
  EXPECT_FALSE(live.kept(1));
  EXPECT_TRUE(live.kept(2));
  EXPECT_TRUE(live.kept(3));
}

// A cyclic scrub of a stack whose host slices fit the budget but not their uploads as well (a
// 16 × 4096² stack in the viewer's store) reads each slice once, however many times round.
TEST(LiveProcessor, ACyclicScrubReadsEachSliceOnceWhenTheHostSlicesFit) {
  CountingSource src(4);
  auto gpu = std::make_shared<FakeBackend>(true);
  const size_t slice = 6 * 5 * sizeof(float);
  LiveProcessor live(gpu, src.source(), 6 * slice);
  for (int round = 0; round < 3; ++round)
    for (int z = 0; z < 4; ++z) live.process(z, deconvolution2D());
  EXPECT_EQ(src.reads->load(), 4);
  EXPECT_EQ(live.rawSlices(), 4);
  // Every step's slice, uploaded again from its host copy.
  EXPECT_EQ(gpu->uploadsOf({1, 6, 5}), 12);
}

TEST(LiveProcessor, ReadAheadReadsNeighboursSoTheNextStepReadsNothing) {
  CountingSource src(4);
  LiveProcessor live(std::make_shared<FakeBackend>(true), src.source());
  live.process(1, deconvolution2D());
  live.readAhead({2, 0, 7, -1});  // outside the stack: ignored
  ASSERT_TRUE(waitUntil([&] { return live.kept(2) && live.kept(0); }));
  EXPECT_EQ(live.fileReads(), 3);
  EXPECT_FALSE(live.onBackend(2));  // read ahead, not uploaded: the backend is not touched
  const LiveProcessor::Frame f = live.process(2, deconvolution2D());
  EXPECT_EQ(src.reads->load(), 3);
  EXPECT_TRUE(live.onBackend(2));
  EXPECT_EQ(f.raw.at(0, 0, 0), 200.f);
}

TEST(LiveProcessor, ThreeDStagesGetTheSlabAroundTheSlice) {
  CountingSource src(5);
  auto cpu = std::make_shared<FakeBackend>(false);
  LiveProcessor live(cpu, src.source());
  compute::Pipeline p = deconvolution2D();
  p.deconvolution.params.threeD = true;
  p.deconvolution.slabHalfWidth = 1;
  const LiveProcessor::Frame f = live.process(0, p);  // clipped at the first slice: slices 0, 1
  // The fake RL adds 1000 · (index in its input): slice 0 is index 0 of the slab.
  EXPECT_EQ(f.result.image.shape().z, 1);
  EXPECT_EQ(f.result.image.at(0, 0, 0), 0.f);
  const LiveProcessor::Frame g = live.process(3, p);  // slices 2, 3, 4: index 1
  EXPECT_EQ(g.result.image.at(0, 1, 1), src.stack.at(3, 1, 1) + 1000.f);
  const auto calls = cpu->calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].shape.z, 3);
}

// On a device the slab is stacked from the slices' uploads there: a step uploads only the slice
// that entered the slab, and the operation gets a device image with the slab's values.
TEST(LiveProcessor, ThreeDSlabOnADeviceIsStackedFromTheKeptUploads) {
  CountingSource src(6);
  auto gpu = std::make_shared<FakeBackend>(true);
  LiveProcessor live(gpu, src.source());
  compute::Pipeline p = deconvolution2D();
  p.deconvolution.params.threeD = true;
  p.deconvolution.slabHalfWidth = 1;
  const LiveProcessor::Frame f = live.process(2, p);  // slices 1, 2, 3
  EXPECT_EQ(gpu->uploadsOf({1, 6, 5}), 3);
  EXPECT_EQ(gpu->stacks.load(), 1);
  EXPECT_EQ(f.result.image.location(), compute::Location::Cuda);
  const Image r = gpu->download(f.result.image);
  EXPECT_EQ(r.at(0, 2, 3), src.stack.at(2, 2, 3) + 1000.f);  // index 1 of the slab
  EXPECT_EQ(f.raw.at(0, 2, 3), src.stack.at(2, 2, 3));
  live.process(3, p);  // slices 2, 3, 4: only 4 is new
  EXPECT_EQ(gpu->uploadsOf({1, 6, 5}), 4);
  const auto calls = gpu->calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].shape, (compute::Shape{3, 6, 5}));
  EXPECT_EQ(src.reads->load(), 4);
}

TEST(LiveProcessor, ReadFailureIsReportedWithTheSourcesMessageAndLeavesNoEntry) {
  CountingSource src(3);
  LiveProcessor live(std::make_shared<FakeBackend>(true), src.source());
  src.fail->store(true);
  try {
    live.process(1, deconvolution2D());
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("stack.fits: slice 1"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(live.kept(1));
  src.fail->store(false);
  EXPECT_NO_THROW(live.process(1, deconvolution2D()));
  EXPECT_THROW(live.process(3, deconvolution2D()), compute::InvalidArgument);
}

TEST(LiveProcessor, CancelledBeforeTheFirstIterationThrowsCancelled) {
  CountingSource src(3);
  LiveProcessor live(std::make_shared<FakeBackend>(true), src.source());
  std::atomic<bool> cancel{true};
  EXPECT_THROW(live.process(1, deconvolution2D(), compute::Job(&cancel)), compute::Cancelled);
}

TEST(Backend, DefaultDownloadRowsTakesEveryStepthRow) {
  FakeBackend gpu(true);
  const Image device = gpu.upload(rampSlab(2, 7, 3));
  const Image rows = gpu.device().downloadRows(device, 1, 3);  // rows 0, 3, 6 of slice 1
  ASSERT_EQ(rows.shape(), (compute::Shape{1, 3, 3}));
  for (int r = 0; r < 3; ++r)
    for (int x = 0; x < 3; ++x) EXPECT_EQ(rows.at(0, r, x), float(100 + 30 * r + x));
  Image host = Image::host({2, 7, 3});
  gpu.device().downloadInto(device, host);
  EXPECT_EQ(host.at(1, 6, 2), 162.f);
  Image wrong = Image::host({1, 7, 3});
  EXPECT_THROW(gpu.device().downloadInto(device, wrong), compute::InvalidArgument);
}

// stackSlices on the host (the default) and on CUDA, from device uploads, a page-locked host
// slice and a pageable one, against the slices themselves; shapes that differ are refused.
TEST(Backend, StackSlicesStacksDeviceAndHostSlicesInOrder) {
  std::vector<std::shared_ptr<compute::Backend>> backends{compute::makeCpuBackend(1)};
  if (compute::cudaUsable()) backends.push_back(compute::makeCudaBackend());
  for (const auto& backend : backends) {
    SCOPED_TRACE(backend->name());
    const Image slab = rampSlab(4, 7, 3);
    std::vector<Image> slices;
    for (int64_t z = 0; z < 4; ++z)
      slices.push_back(compute::cloneHost(compute::sliceView(slab, z)));
    Image pinnedHost = compute::cloneHost(slices[2]);
    const compute::PinnedWhileAlive pinned(backend->device(), pinnedHost);
    const std::vector<Image> mixed{backend->upload(slices[0]), backend->upload(slices[1]),
                                   pinnedHost, slices[3]};
    const Image stacked = backend->download(backend->device().stackSlices(mixed));
    ASSERT_EQ(stacked.shape(), slab.shape());
    for (int64_t i = 0; i < slab.shape().count(); ++i)
      ASSERT_EQ(stacked.data()[i], slab.data()[i]) << i;
    EXPECT_THROW(backend->device().stackSlices({slices[0], rampSlab(1, 7, 4)}),
                 compute::InvalidArgument);
    EXPECT_THROW(backend->device().stackSlices({}), compute::InvalidArgument);
  }
}
