// The CUDA backend's chunked, overlapped pipeline for host stacks (compute/cuda/
// cuda_stack_pipeline.cu): chunked results equal single-shot ones, the memory budget sets the
// chunk count, the input is untouched, device inputs go the old way (skipped without a GPU).
#include <gtest/gtest.h>

#include "tests/compute/log_capture.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "tests/compute/image_checks.h"

using namespace stacklens::compute;

namespace {

using stacklens::testing::copyOf;
using stacklens::testing::expectIdentical;

constexpr Shape kStack{7, 48, 40};
constexpr size_t kSliceBytes = 48 * 40 * sizeof(float);

Image stackWithHotPixelsAndNaN(Shape s, unsigned seed) {
  Image im = stacklens::testing::randomImage(s, seed, 0.05f, 1.f);
  // A few hot pixels and NaN, so that the median and outlier paths see them at chunk edges.
  for (int64_t i = 37; i < s.count(); i += 1013) im.data()[i] = 50.f;
  im.data()[s.sliceCount() * 2 + 5] = std::numeric_limits<float>::quiet_NaN();
  return im;
}

void expectClose(const Image& got, const Image& want, double tol, const char* what) {
  ASSERT_TRUE(got.onHost()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.shape().count(); ++i) {
    const float a = got.data()[i], b = want.data()[i];
    if (std::isnan(b)) {
      ASSERT_TRUE(std::isnan(a)) << what << " at " << i;
      continue;
    }
    ASSERT_NEAR(a, b, tol * std::max(1.f, std::fabs(b))) << what << " at " << i;
  }
}

// Runs everywhere: a backend without a GPU budget ignores the setting.
TEST(StackPipeline, CpuBackendHasNoBudgetAndOneChunk) {
  auto cpu = makeCpuBackend(1);
  EXPECT_EQ(cpu->device().setMemoryBudget(1 << 20), 0u);
  EXPECT_EQ(cpu->device().lastChunkCount(), 1);
}

class CudaChunkedStream : public ::testing::Test {
 protected:
  stacklens::testing::LogCapture logged;  // what the backend says about its chunks
  void SetUp() override {
    std::string why;
    if (!cudaUsable(&why)) GTEST_SKIP() << why;
    gpu = makeCudaBackend();  // its own budget, so tests do not affect each other
  }
  std::unique_ptr<Backend> gpu;
  const Job onHost = Job().onHost();  // host stacks then go through the device in chunks
};

TEST_F(CudaChunkedStream, ChunkedMedianAndOutliersEqualTheSingleShotResultExactly) {
  const Image in = stackWithHotPixelsAndNaN(kStack, 1);
  const Image before = copyOf(in);
  const Image wholeMedian = gpu->download(gpu->medianFilter(in, 5, onHost));
  EXPECT_EQ(gpu->device().lastChunkCount(), 1);
  OutlierParams op;
  op.size = 3;
  op.threshold = 0.5;
  const Image wholeOutliers = gpu->download(gpu->removeOutliers(in, op, onHost));
  // Median: 2 input + 2 output slices resident per slice of chunk = 4 slice sizes per slice; a
  // budget for two slices gives chunks of 2, 2, 2, 1.
  gpu->device().setMemoryBudget(2 * 4 * kSliceBytes + 100);
  logged.take();
  const Image median = gpu->medianFilter(in, 5, onHost);
  const std::string log = logged.take();
  EXPECT_EQ(gpu->device().lastChunkCount(), 4);
  EXPECT_NE(log.find("groups of slices (2 per chunk)"), std::string::npos) << log;
  expectIdentical(median, wholeMedian, "median");
  const Image outliers = gpu->removeOutliers(in, op, onHost);
  EXPECT_EQ(gpu->device().lastChunkCount(), 4);
  expectIdentical(outliers, wholeOutliers, "outliers");
  // The outliers were replaced (the result is not the input).
  EXPECT_NE(std::memcmp(outliers.data(), in.data(), in.bytes()), 0);
  expectIdentical(in, before, "input after the operations");
}

// Page-locked input (as the viewer's slices) and results of 2 MiB or more (page-locked host
// result memory) skip the staging copies: the DMA reads and writes them in place, chunk by chunk.
TEST_F(CudaChunkedStream, PageLockedInputAndLargeResultsGiveTheSameChunkedResult) {
  constexpr Shape kLarge{7, 512, 512};  // 7 MiB: a result in page-locked result memory
  const Image in = stackWithHotPixelsAndNaN(kLarge, 7);
  const Image before = copyOf(in);
  const Image whole = gpu->download(gpu->medianFilter(in, 3, onHost));
  ASSERT_EQ(gpu->device().lastChunkCount(), 1);
  const size_t slice = size_t(kLarge.sliceCount()) * sizeof(float);
  gpu->device().setMemoryBudget(2 * 4 * slice + 100);
  const Image pageable = gpu->medianFilter(in, 3, onHost);
  EXPECT_EQ(gpu->device().lastChunkCount(), 4);
  expectIdentical(pageable, whole, "pageable input");
  const PinnedWhileAlive pinned(gpu->device(), in);
  ASSERT_TRUE(pinned.pinned());
  const Image locked = gpu->medianFilter(in, 3, onHost);
  EXPECT_EQ(gpu->device().lastChunkCount(), 4);
  expectIdentical(locked, whole, "page-locked input");
  expectIdentical(in, before, "input after the operations");
}

// Pageable chunks go up in 2 MiB pieces that the copy threads fill in 256 KiB parts: chunks of
// several pieces, whose slices and last piece end inside a part, must arrive bit for bit.
TEST_F(CudaChunkedStream, PageableChunksOfSeveralUploadPiecesMatchTheCpuExactly) {
  constexpr Shape kOdd{5, 600, 701};  // 1.68 MB slices: chunks of 3 slices are 2.4 pieces
  const Image in = stackWithHotPixelsAndNaN(kOdd, 9);
  const Image before = copyOf(in);
  const Image want = makeCpuBackend()->medianFilter(in, 3);
  const size_t slice = size_t(kOdd.sliceCount()) * sizeof(float);
  gpu->device().setMemoryBudget(3 * 4 * slice + 100);
  const Image got = gpu->medianFilter(in, 3, onHost);
  EXPECT_EQ(gpu->device().lastChunkCount(), 2);
  expectIdentical(got, want, "median of pageable chunks");
  expectIdentical(in, before, "input after the operation");
}

TEST_F(CudaChunkedStream, TheBudgetSetsTheChunkCount) {
  const Image in = stackWithHotPixelsAndNaN(kStack, 2);
  const Image whole = gpu->download(gpu->medianFilter(in, 3, onHost));
  for (int64_t perChunk : {1, 2, 3, 6, 7}) {
    const size_t budget = size_t(perChunk) * 4 * kSliceBytes + 64;
    EXPECT_EQ(gpu->device().setMemoryBudget(budget), budget);
    const Image out = gpu->medianFilter(in, 3, onHost);
    EXPECT_EQ(gpu->device().lastChunkCount(), int((kStack.z + perChunk - 1) / perChunk))
        << perChunk;
    expectIdentical(out, whole, "median in chunks");
  }
  // 0 restores the default (80 % of free memory): this small stack goes in one piece again.
  EXPECT_GT(gpu->device().setMemoryBudget(0), size_t(1) << 20);
  gpu->medianFilter(in, 3, onHost);
  EXPECT_EQ(gpu->device().lastChunkCount(), 1);
}

TEST_F(CudaChunkedStream, ChunkedBlurRichardsonLucyAndResamplingMatchTheSingleShotResult) {
  Image in = stackWithHotPixelsAndNaN(kStack, 3);
  in.data()[kStack.sliceCount() * 2 + 5] = 0.5f;  // RL and the plain blur want finite values
  in.spacing.z = 3.0;
  in.spacing.y = 0.5;
  in.spacing.x = 0.25;
  const Image before = copyOf(in);
  BlurParams bp;
  bp.sigmaY = 1.5;
  bp.sigmaX = 2.5;  // unequal radii: the separable path
  const Image psf = gaussianPsf(0, 1.5, 1.5);
  DeconvolveParams dp;
  dp.iterations = 4;
  ResampleParams rp;
  rp.zoomY = 1.5;
  rp.zoomX = 0.75;
  const Image blur = gpu->download(gpu->gaussianBlur(in, bp, onHost));
  const Image rl = gpu->download(gpu->richardsonLucy(in, psf, dp, onHost));
  const Image zoomed = gpu->download(gpu->resample(in, rp, onHost));
  ASSERT_EQ(gpu->device().lastChunkCount(), 1);

  // Blur: output and one scratch array per voxel (8 bytes) → 6 slice sizes per slice.
  gpu->device().setMemoryBudget(2 * 6 * kSliceBytes + 100);
  logged.take();
  expectClose(gpu->gaussianBlur(in, bp, onHost), blur, 1e-6, "blur");
  EXPECT_EQ(gpu->device().lastChunkCount(), 4);
  // Richardson-Lucy: the solver's frame (60 × 54 after padding by the 13×13 PSF, 28 bytes per
  // voxel) once, then 4 slice sizes per slice.
  gpu->device().setMemoryBudget(60 * 54 * 28 + 2 * 4 * kSliceBytes + 100);
  expectClose(gpu->richardsonLucy(in, psf, dp, onHost), rl, 1e-6, "Richardson-Lucy");
  EXPECT_EQ(gpu->device().lastChunkCount(), 4);
  // Resampling in y and x: output, intermediate and spline coefficients, planned as 4 + 12·⌈1.5⌉
  // bytes per input voxel; a budget for three slices gives chunks of 3, 3, 1.
  gpu->device().setMemoryBudget(3 * (2 * kSliceBytes + 2 * 28 * 48 * 40) + 100);
  const Image zoomedInChunks = gpu->resample(in, rp, onHost);
  EXPECT_EQ(gpu->device().lastChunkCount(), 3);
  logged.take();
  expectClose(zoomedInChunks, zoomed, 1e-6, "resampling");
  EXPECT_EQ(zoomedInChunks.spacing.z, zoomed.spacing.z);
  EXPECT_EQ(zoomedInChunks.spacing.y, zoomed.spacing.y);
  expectIdentical(in, before, "input after the operations");
}

TEST_F(CudaChunkedStream, ProgressCoversTheWholeStackAcrossChunks) {
  const Image in = stackWithHotPixelsAndNaN(kStack, 4);
  gpu->device().setMemoryBudget(2 * 4 * kSliceBytes + 100);
  std::vector<double> seen;
  std::atomic<bool> cancel{false};
  Job job(&cancel, [&](double f) { seen.push_back(f); });
  logged.take();
  gpu->medianFilter(in, 3, job.onHost());
  logged.take();
  ASSERT_FALSE(seen.empty());
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i], seen[i - 1]);
  EXPECT_NEAR(seen.back(), 1.0, 1e-12);
  cancel = true;
  EXPECT_THROW(gpu->medianFilter(in, 3, job.onHost()), Cancelled);
  // The backend is still usable after a cancelled pipeline.
  cancel = false;
  EXPECT_NO_THROW(gpu->medianFilter(in, 3, onHost));
}

TEST_F(CudaChunkedStream, ASliceOverTheBudgetRunsOnTheCpuWithAMessage) {
  const Image in = stackWithHotPixelsAndNaN(kStack, 5);
  const Image onCpu = makeCpuBackend(1)->medianFilter(in, 3);
  gpu->device().setMemoryBudget(1024);  // less than one slice
  logged.take();
  const Image out = gpu->download(gpu->medianFilter(in, 3, onHost));
  const std::string log = logged.take();
  EXPECT_NE(log.find("running it on the CPU"), std::string::npos) << log;
  expectIdentical(out, onCpu, "CPU fall-back");
  EXPECT_NE(std::memcmp(out.data(), in.data(), in.bytes()), 0) << "the input came back unchanged";
}

TEST_F(CudaChunkedStream, DeviceInputsStayOnTheDeviceUnchunked) {
  const Image in = stackWithHotPixelsAndNaN(kStack, 6);
  const Image hostResult = gpu->download(gpu->medianFilter(in, 3, onHost));
  const Image dev = gpu->upload(in);
  gpu->device().setMemoryBudget(2 * 4 * kSliceBytes + 100);
  const Image out = gpu->medianFilter(dev, 3);
  EXPECT_EQ(out.location(), Location::Cuda);
  EXPECT_EQ(gpu->device().lastChunkCount(), 1);
  expectIdentical(gpu->download(out), hostResult, "device input");
  expectIdentical(gpu->download(dev), in, "device input after the operation");
}

}  // namespace
