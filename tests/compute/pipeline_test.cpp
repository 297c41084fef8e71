// The pipeline runs stages in order on the right slices, times them for real, cancels, and
// compares two backends; checked with a fake backend of known per-pixel operations.
#include "compute/pipeline.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "tests/compute/fake_backend.h"

using namespace stacklens::compute;
using stacklens::testing::FakeBackend;
using stacklens::testing::rampSlab;

namespace {

Pipeline allImageStages2D() {
  Pipeline p;
  p.outliers.enabled = true;
  p.median.enabled = true;
  p.blur.enabled = true;
  p.deconvolution.enabled = true;
  p.deconvolution.params.iterations = 3;
  p.statistics.enabled = true;
  p.segmentation.enabled = true;
  p.segmentation.params.absoluteThreshold = 0.0;
  return p;
}

std::vector<std::string> ops(const FakeBackend& b) {
  std::vector<std::string> out;
  for (const auto& c : b.calls()) out.push_back(c.op);
  return out;
}

}  // namespace

TEST(Pipeline, RunsStagesInOrderOnTheCurrentSliceOnly) {
  for (bool device : {false, true}) {
    FakeBackend backend(device);
    const Image slab = rampSlab(3, 4, 5);
    const PipelineResult r = runPipeline(backend, slab, 1, allImageStages2D());
    EXPECT_EQ(ops(backend), (std::vector<std::string>{"outliers", "median", "blur", "deconvolution",
                                                      "statistics", "segmentation"}));
    for (const auto& call : backend.calls()) EXPECT_EQ(call.shape, (Shape{1, 4, 5})) << call.op;
    ASSERT_TRUE(r.image.onHost());
    ASSERT_EQ(r.image.shape(), (Shape{1, 4, 5}));
    // ((v + 1) · 2 + 10) + 1000 · 0 on slice 1.
    double mean = 0;
    for (int64_t y = 0; y < 4; ++y)
      for (int64_t x = 0; x < 5; ++x) {
        const float expected = (slab.at(1, y, x) + 1.f) * 2.f + 10.f;
        EXPECT_FLOAT_EQ(r.image.at(0, y, x), expected);
        mean += expected / 20.0;
      }
    ASSERT_TRUE(r.statistics.has_value());
    EXPECT_NEAR(r.statistics->clipped.median, mean, 1e-9);
    ASSERT_TRUE(r.segmentation.has_value());
    EXPECT_TRUE(r.segmentation->labels.onHost());
    EXPECT_EQ(r.segmentation->sources.size(), 1u);
    ASSERT_EQ(r.timings.size(), 6u);
    EXPECT_EQ(r.timings[3].stage, Stage::Deconvolution);
    EXPECT_EQ(r.backend, device ? "fake-gpu" : "fake-cpu");
  }
}

TEST(Pipeline, SegmentationReusesTheStatisticsStageBackgroundWhenTheSettingsMatch) {
  FakeBackend backend;
  Pipeline p;
  p.statistics.enabled = true;
  p.segmentation.enabled = true;
  const PipelineResult same = runPipeline(backend, rampSlab(1, 4, 5), 0, p);
  ASSERT_TRUE(same.statistics && backend.segmentBackground);
  EXPECT_EQ(backend.segmentBackground->clipped.mean, same.statistics->clipped.mean);
  EXPECT_EQ(backend.segmentBackground->clipped.n, same.statistics->clipped.n);
  // Other clipping settings: segmentation clips with its own.
  p.segmentation.params.clip.kappaUpper = 2.5;
  runPipeline(backend, rampSlab(1, 4, 5), 0, p);
  EXPECT_FALSE(backend.segmentBackground.has_value());
}

TEST(Pipeline, ThreeDDeconvolutionSeesTheSlabAndKeepsItsCentre) {
  FakeBackend backend(true);
  Pipeline p;
  p.median.enabled = true;  // a 2D stage before a 3D one sees the slab too
  p.deconvolution.enabled = true;
  p.deconvolution.params.threeD = true;
  p.deconvolution.params.iterations = 2;
  p.deconvolution.slabHalfWidth = 2;
  p.statistics.enabled = true;
  // A slab cut short at the stack's end: 4 slices, the current one is the slab's slice 3.
  const Image slab = rampSlab(4, 3, 3);
  const PipelineResult r = runPipeline(backend, slab, 3, p);
  const auto calls = backend.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].shape, (Shape{4, 3, 3}));  // median
  EXPECT_EQ(calls[1].shape, (Shape{4, 3, 3}));  // deconvolution
  EXPECT_EQ(calls[2].shape, (Shape{1, 3, 3}));  // statistics on the centre slice only
  // Gaussian PSF of σ (2, 1.5, 1.5): 2·ceil(4σ)+1 = 17 × 13 × 13.
  ASSERT_EQ(backend.psfShapes.size(), 1u);
  EXPECT_EQ(backend.psfShapes[0], (Shape{17, 13, 13}));
  ASSERT_EQ(r.image.shape(), (Shape{1, 3, 3}));
  for (int64_t y = 0; y < 3; ++y)
    for (int64_t x = 0; x < 3; ++x)
      EXPECT_FLOAT_EQ(r.image.at(0, y, x), 2.f * slab.at(3, y, x) + 3000.f);
}

TEST(Pipeline, TwoDDeconvolutionUsesA2DGaussianOrTheGivenPsf) {
  FakeBackend backend;
  Pipeline p = preset("microscopy deconvolution", gaussianPsf(0, 2, 2));
  EXPECT_FALSE(p.deconvolution.params.threeD);
  (void)runPipeline(backend, rampSlab(1, 8, 8), 0, p);
  p.deconvolution.psf = Image();
  (void)runPipeline(backend, rampSlab(1, 8, 8), 0, p);
  ASSERT_EQ(backend.psfShapes.size(), 2u);
  EXPECT_EQ(backend.psfShapes[0], (Shape{1, 17, 17}));
  EXPECT_EQ(backend.psfShapes[1], (Shape{1, 13, 13}));  // σ 1.5: 2·6+1
}

TEST(Pipeline, NothingEnabledReturnsTheCurrentSlice) {
  FakeBackend backend;
  const Image slab = rampSlab(3, 2, 2);
  const PipelineResult r = runPipeline(backend, slab, 2, Pipeline{});
  EXPECT_TRUE(r.timings.empty());
  EXPECT_EQ(r.image.at(0, 1, 1), slab.at(2, 1, 1));
}

TEST(Pipeline, TimingsAreMeasuredNotAssumed) {
  FakeBackend backend(true);
  backend.iterationSleepMs = 10;  // 3 iterations: at least 30 ms of deconvolution
  backend.uploadSleepMs = 5;
  backend.downloadSleepMs = 5;
  backend.reportedDeviceMs = 1.25;
  Pipeline p;
  p.deconvolution.enabled = true;
  p.deconvolution.params.iterations = 3;
  RunOptions withTransfers;
  withTransfers.measureTransfers = true;
  const PipelineResult r = runPipeline(backend, rampSlab(1, 4, 4), 0, p, {}, withTransfers);
  ASSERT_EQ(r.timings.size(), 1u);
  EXPECT_GE(r.timings[0].computeMs, 30.0);
  EXPECT_DOUBLE_EQ(r.timings[0].deviceMs, 1.25);
  // Upload of the image and the PSF, and download of the result: ≥ 15 ms more than compute.
  EXPECT_GE(r.timings[0].withTransfersMs, r.timings[0].computeMs + 15.0);
  EXPECT_GE(r.totalMs, r.timings[0].withTransfersMs);
  ASSERT_EQ(r.stageImages.size(), 1u);

  const PipelineResult live = runPipeline(backend, rampSlab(1, 4, 4), 0, p);
  EXPECT_LT(live.timings[0].withTransfersMs, 0.0);  // not measured in live mode
  EXPECT_GE(live.uploadMs, 10.0);                   // slab and PSF
  EXPECT_GE(live.downloadMs, 5.0);
  EXPECT_TRUE(live.stageImages.empty());
}

TEST(Pipeline, CancelStopsDeconvolutionBetweenIterations) {
  FakeBackend backend;
  backend.iterationSleepMs = 1;
  Pipeline p;
  p.deconvolution.enabled = true;
  p.deconvolution.params.iterations = 100000;
  std::atomic<bool> cancel{false};
  std::atomic<double> lastProgress{-1};
  Job job(&cancel, [&](double f) { lastProgress = f; });
  std::thread canceller([&] {
    while (backend.iterationsRun.load() < 5) std::this_thread::yield();
    cancel = true;
  });
  EXPECT_THROW(runPipeline(backend, rampSlab(1, 4, 4), 0, p, job), Cancelled);
  canceller.join();
  EXPECT_LT(backend.iterationsRun.load(), 100000);
  EXPECT_GT(lastProgress.load(), 0.0);
  EXPECT_LT(lastProgress.load(), 1.0);
}

TEST(Pipeline, ComparesTwoBackendsStageByStage) {
  FakeBackend a(false, 2), b(true);
  b.blurOffset = 0.5f;  // b differs from the blur stage on by exactly 0.5
  Pipeline p = allImageStages2D();
  const Image slab = rampSlab(2, 3, 4);
  const Comparison c = compareBackends(a, b, slab, 0, p);
  ASSERT_EQ(c.differences.size(), 6u);
  EXPECT_EQ(c.differences[0].stage, Stage::Outliers);
  EXPECT_EQ(c.differences[0].maxAbs, 0.0);
  EXPECT_EQ(c.differences[1].relL2, 0.0);
  for (int s : {2, 3}) {
    EXPECT_FLOAT_EQ(c.differences[s].maxAbs, 0.5f);
    // Brute force: ‖0.5‖ / ‖A‖ over the stage's output.
    const Image& ref = c.a.stageImages[s].second;
    double ref2 = 0;
    for (int64_t i = 0; i < ref.shape().count(); ++i) ref2 += double(ref.data()[i]) * ref.data()[i];
    EXPECT_NEAR(c.differences[s].relL2, std::sqrt(12 * 0.25 / ref2), 1e-9);
  }
  EXPECT_EQ(c.differences[4].stage, Stage::Statistics);
  EXPECT_NEAR(c.differences[4].maxAbs, 0.5, 1e-6);  // clipped mean/median shift by 0.5
  EXPECT_EQ(c.differences[5].stage, Stage::Segmentation);
  EXPECT_EQ(c.differences[5].maxAbs, 0.0);  // everything is above 0 on both
  EXPECT_EQ(c.a.threads, 2);
  for (const auto& t : c.b.timings) EXPECT_GE(t.withTransfersMs, t.computeMs);
}

TEST(Pipeline, ImageDifferenceClosedForm) {
  Image a = Image::host({1, 1, 4}), b = Image::host({1, 1, 4});
  const float av[4] = {3, 4, NAN, 1}, bv[4] = {3, 4.5f, NAN, 0};
  std::copy(av, av + 4, a.data());
  std::copy(bv, bv + 4, b.data());
  const StageDifference d = imageDifference(a, b);
  EXPECT_DOUBLE_EQ(d.maxAbs, 1.0);
  EXPECT_NEAR(d.relL2, std::sqrt((0.25 + 1.0) / (9 + 16 + 1)), 1e-12);
  b.data()[2] = 1;  // NaN on one side only
  EXPECT_TRUE(std::isinf(imageDifference(a, b).maxAbs));
  EXPECT_THROW(imageDifference(a, Image::host({1, 2, 2})), InvalidArgument);
}

TEST(Pipeline, OverlapDifferenceLeavesOutPixelsNaNOnEitherSide) {
  Image a = Image::host({1, 1, 4}), b = Image::host({1, 1, 4});
  const float av[4] = {3, 4, NAN, 1}, bv[4] = {3, 4.5f, 7, 0};
  std::copy(av, av + 4, a.data());
  std::copy(bv, bv + 4, b.data());
  const StageDifference d = overlapDifference(a, b);
  EXPECT_DOUBLE_EQ(d.maxAbs, 1.0);
  EXPECT_NEAR(d.relL2, std::sqrt((0.25 + 1.0) / (9 + 20.25)), 1e-12);  // relative to b
  std::fill_n(b.data(), 4, 0.f);
  EXPECT_NEAR(overlapDifference(a, b).relL2, std::sqrt(9.0 + 16 + 1), 1e-12);
}

TEST(Pipeline, RefusesBadSettingsNamingTheParameter) {
  FakeBackend backend;
  const Image slab = rampSlab(1, 4, 4);
  auto message = [&](const Pipeline& p, int64_t centre = 0) -> std::string {
    try {
      (void)runPipeline(backend, slab, centre, p);
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "no error";
  };
  Pipeline p;
  p.median.enabled = true;
  p.median.size = 4;
  EXPECT_NE(message(p).find("median"), std::string::npos);
  p = {};
  p.deconvolution.enabled = true;
  p.deconvolution.params.iterations = 0;
  EXPECT_NE(message(p).find("iterations"), std::string::npos);
  p.deconvolution.params.iterations = 5;
  p.deconvolution.params.threeD = true;
  p.deconvolution.slabHalfWidth = 0;
  EXPECT_NE(message(p).find("half-width"), std::string::npos);
  p = {};
  p.segmentation.enabled = true;
  p.segmentation.params.connectivity = 6;
  EXPECT_NE(message(p).find("connectivity"), std::string::npos);
  EXPECT_NE(message(Pipeline{}, 1).find("centre index"), std::string::npos);
  EXPECT_TRUE(backend.calls().empty());
}

// With the boundary left to auto, a Gaussian PSF's limits are still checked when the pipeline is,
// and a wide one's boundary (the fuzzer's σ 20 in 3D: 161³ values) is chosen without building it.
TEST(Pipeline, AutoBoundaryOfAGaussianPsfChecksItsLimitsWithoutBuildingIt) {
  Pipeline p;
  p.deconvolution.enabled = true;
  p.deconvolution.params.threeD = true;
  p.deconvolution.psfSigmaZ = p.deconvolution.psfSigmaY = p.deconvolution.psfSigmaX = 20;
  EXPECT_NO_THROW(p.validate());
  EXPECT_EQ(deconvolutionParams(p).boundary, Boundary::ReflectExact);
  p.deconvolution.params.tvLambda = 0.002;
  EXPECT_EQ(deconvolutionParams(p).boundary, Boundary::Reflect);
  p.deconvolution.psfSigmaZ = p.deconvolution.psfSigmaY = p.deconvolution.psfSigmaX = 165;
  EXPECT_THROW(p.validate(), InvalidArgument);  // 1321³ values
  p.deconvolution.params.threeD = false;        // 2D: only y and x count
  EXPECT_NO_THROW(p.validate());
  p.deconvolution.psfSigmaY = 600;
  EXPECT_THROW(p.validate(), InvalidArgument);
}

TEST(Pipeline, FingerprintFollowsWhatChangesTheResult) {
  Pipeline p = preset("microscopy deconvolution", gaussianPsf(1, 1, 1));
  const std::string base = p.fingerprint();
  Pipeline q = p;
  q.median.size = 7;  // disabled: does not matter
  EXPECT_EQ(q.fingerprint(), base);
  q.deconvolution.params.iterations = 21;
  EXPECT_NE(q.fingerprint(), base);
  q = p;
  q.deconvolution.psf = cloneHost(p.deconvolution.psf);
  EXPECT_EQ(q.fingerprint(), base);
  q.deconvolution.psf.data()[3] += 1e-6f;  // same shape, other values
  EXPECT_NE(q.fingerprint(), base);
}

TEST(Pipeline, PresetsAndSlabWidth) {
  EXPECT_EQ(presetNames().size(), 2u);
  const Pipeline astro = preset("astronomy sources");
  EXPECT_TRUE(astro.blur.enabled && astro.statistics.enabled && astro.segmentation.enabled);
  EXPECT_FALSE(astro.deconvolution.enabled);
  EXPECT_EQ(astro.slabHalfWidth(), 0);
  const Pipeline micro = preset("microscopy deconvolution");
  EXPECT_TRUE(micro.deconvolution.enabled);
  EXPECT_EQ(micro.deconvolution.params.iterations, 20);
  EXPECT_TRUE(micro.deconvolution.params.threeD);
  EXPECT_EQ(micro.slabHalfWidth(), 4);
  Pipeline blur3d;
  blur3d.blur.enabled = true;
  blur3d.blur.params.sigmaZ = 1.0;  // truncate 4: radius 4
  EXPECT_EQ(blur3d.slabHalfWidth(), 4);
  EXPECT_THROW(preset("nope"), InvalidArgument);
}

TEST(Pipeline, SliceViewSharesStorageAndOutlivesItsParent) {
  Image view;
  {
    Image parent = rampSlab(3, 2, 2);
    view = sliceView(parent, 2);
    parent.at(2, 1, 1) = -5;
  }
  EXPECT_EQ(view.shape(), (Shape{1, 2, 2}));
  EXPECT_EQ(view.at(0, 1, 1), -5.f);
  EXPECT_EQ(view.at(0, 0, 1), 201.f);
  EXPECT_THROW(sliceView(view, 1), InvalidArgument);
}

TEST(Pipeline, BenchmarkReportsMediansOfRealRuns) {
  FakeBackend backend;
  backend.iterationSleepMs = 2;
  Pipeline p;
  p.deconvolution.enabled = true;
  p.deconvolution.params.iterations = 5;
  const PipelineResult r = benchmarkPipeline(backend, rampSlab(1, 4, 4), 0, p, 3);
  EXPECT_EQ(backend.iterationsRun.load(), 4 * 5);  // warm-up + 3 repeats
  ASSERT_EQ(r.timings.size(), 1u);
  EXPECT_GE(r.timings[0].computeMs, 10.0);
  EXPECT_THROW(benchmarkPipeline(backend, rampSlab(1, 4, 4), 0, p, 0), InvalidArgument);
}

TEST(Pipeline, RealCpuBackendMatchesTheOperationsCalledDirectly) {
  auto backend = makeCpuBackend(2);
  Image slab = Image::host({5, 24, 20});
  for (int64_t i = 0; i < slab.shape().count(); ++i)
    slab.data()[i] = 10.f + float((i * 7919) % 101);
  Pipeline p;
  p.blur.enabled = true;
  p.deconvolution.enabled = true;
  p.deconvolution.params.iterations = 3;
  // 2D: blur and RL on the current slice alone.
  const PipelineResult r2 = runPipeline(*backend, slab, 3, p);
  const Image blurred = backend->gaussianBlur(cloneHost(sliceView(slab, 3)), p.blur.params);
  // The boundary auto chooses for the Gaussian (reflect-exact: it is mirror-symmetric).
  ASSERT_EQ(deconvolutionParams(p).boundary, Boundary::ReflectExact);
  const Image expected2 =
      backend->richardsonLucy(blurred, gaussianPsf(0, 1.5, 1.5), deconvolutionParams(p));
  const StageDifference d2 = imageDifference(expected2, r2.image);
  EXPECT_LT(d2.relL2, 1e-6);
  // 3D: RL on the whole slab, then its slice 3.
  p.deconvolution.params.threeD = true;
  p.deconvolution.psfSigmaZ = 1.0;
  const PipelineResult r3 = runPipeline(*backend, slab, 3, p);
  const Image expected3 =
      backend->richardsonLucy(backend->gaussianBlur(slab, p.blur.params),
                              gaussianPsf(1.0, 1.5, 1.5), deconvolutionParams(p));
  EXPECT_LT(imageDifference(cloneHost(sliceView(expected3, 3)), r3.image).relL2, 1e-6);
  // And the two differ: the 3D result used the neighbouring slices.
  EXPECT_GT(imageDifference(r2.image, r3.image).relL2, 1e-4);
}
