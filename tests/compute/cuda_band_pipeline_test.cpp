// One large page-locked host image through a local filter in bands of rows (compute/cuda/host/
// cuda_band_pipeline.cuh): the plan covers every row once with its halo, and the banded blur,
// median and outlier removal equal the whole-image results bit for bit (the GPU tests are
// skipped without a GPU; the plan's run everywhere).
#include <gtest/gtest.h>

#include "tests/compute/log_capture.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "compute/cuda/host/row_bands.h"
#include "tests/compute/image_checks.h"

using namespace stacklens::compute;
using stacklens::compute::cuda::planRowBands;
using stacklens::compute::cuda::RowBand;

namespace {

using stacklens::testing::copyOf;
using stacklens::testing::expectIdentical;

constexpr size_t kMiB = size_t(1) << 20;

TEST(RowBands, CoverEveryRowOnceInOrderWithTheHaloClippedToTheImage) {
  for (int64_t rows : {8, 9, 100, 1000, 1001, 4096}) {
    for (int64_t halo : {0, 1, 3, 7}) {
      const auto bands = planRowBands(rows, 1000, halo, 8 * 1000);
      ASSERT_FALSE(bands.empty());
      int64_t next = 0;
      for (const RowBand& b : bands) {
        EXPECT_EQ(b.first, next) << rows << " " << halo;
        EXPECT_GT(b.end, b.first);
        EXPECT_EQ(b.needFirst, std::max<int64_t>(0, b.first - halo));
        EXPECT_EQ(b.needEnd, std::min<int64_t>(rows, b.end + halo));
        if (bands.size() > 1) {
          // Each band holds at least the target's rows, and its halo at most a quarter of them.
          EXPECT_GE(b.end - b.first, 8) << rows << " " << halo;
          EXPECT_LE(4 * halo, b.end - b.first) << rows << " " << halo;
        }
        next = b.end;
      }
      EXPECT_EQ(next, rows);
    }
  }
}

TEST(RowBands, OneBandWhenTheImageIsSmallOrTheHaloWide) {
  // 2048 rows of 8 KiB in 4 MiB bands: four bands of 512 rows.
  const auto four = planRowBands(2048, 8192, 12, 4 * kMiB);
  ASSERT_EQ(four.size(), 4u);
  EXPECT_EQ(four[1].first, 512);
  EXPECT_EQ(four[1].needFirst, 500);
  EXPECT_EQ(four[1].needEnd, 1036);
  EXPECT_EQ(four[3].needEnd, 2048);
  EXPECT_EQ(planRowBands(2047, 4096, 0, 4 * kMiB).size(), 1u);  // under two bands' worth
  EXPECT_EQ(planRowBands(2048, 4096, 0, 4 * kMiB).size(), 2u);
  EXPECT_EQ(planRowBands(2048, 8192, 128, 4 * kMiB).size(), 4u);
  EXPECT_EQ(planRowBands(2048, 8192, 129, 4 * kMiB).size(), 1u);  // halo over a quarter band
  const int64_t huge = std::numeric_limits<int64_t>::max();       // a saturated blur radius
  EXPECT_EQ(planRowBands(2048, 8192, huge, 4 * kMiB).size(), 1u);
  EXPECT_EQ(planRowBands(1, 8192, 0, 4 * kMiB).size(), 1u);
}

class CudaBandPipeline : public ::testing::Test {
 protected:
  stacklens::testing::LogCapture logged;  // what the backend says when it falls back
  void SetUp() override {
    std::string why;
    if (!cudaUsable(&why)) GTEST_SKIP() << why;
    gpu = makeCudaBackend();
  }
  std::unique_ptr<Backend> gpu;
  const Job onHost = Job().onHost();
};

// 2501 rows of 1999 floats (about 20 MB): four bands, odd sizes, rows that start misaligned.
Image largeImageWithNaN(bool nan, unsigned seed) {
  Image im = stacklens::testing::randomImage({1, 2501, 1999}, seed, -1.f, 3.f);
  for (int64_t i = 977; i < im.shape().count(); i += 104729) im.data()[i] = 40.f;  // hot pixels
  if (nan)
    for (int64_t i = 5003; i < im.shape().count(); i += 250013)
      im.data()[i] = std::numeric_limits<float>::quiet_NaN();
  im.spacing.z = 2.0;
  im.spacing.y = 0.5;
  im.spacing.x = 0.25;
  return im;
}

TEST_F(CudaBandPipeline, BandedBlurEqualsTheWholeImageBitForBit) {
  struct Case {
    double sy, sx;
    bool nanAware;
    int bands;  // 1: the halo is too wide for bands
  };
  // Radius 6 both ways (the fused kernel); 6 and 5 NaN-aware, and 36 and 8 (one axis after the
  // other); 160 (over a quarter of the bands' 625 rows: too wide for bands).
  for (const Case& c : {Case{1.5, 1.5, false, 4}, Case{1.5, 1.25, true, 4},
                        Case{9.0, 2.0, false, 4}, Case{40.0, 1.0, false, 1}}) {
    const Image in = largeImageWithNaN(c.nanAware, 11);
    const Image before = copyOf(in);
    const PinnedWhileAlive pinned(gpu->device(), in);
    ASSERT_TRUE(pinned.pinned());
    BlurParams p;
    p.sigmaY = c.sy;
    p.sigmaX = c.sx;
    p.nanAware = c.nanAware;
    const Image whole = gpu->download(gpu->gaussianBlur(in, p));
    const Image banded = gpu->gaussianBlur(in, p, onHost);
    const std::string what = "blur σ " + std::to_string(c.sy) + (c.nanAware ? " NaN-aware" : "");
    EXPECT_EQ(gpu->device().lastChunkCount(), c.bands) << what;
    EXPECT_TRUE(banded.onHost()) << what;
    EXPECT_EQ(banded.spacing.y, 0.5);
    expectIdentical(banded, whole, what.c_str());
    expectIdentical(in, before, "input after the blur");
  }
}

// Pageable input goes in one piece, page-locked input in bands: the same results.
TEST_F(CudaBandPipeline, BandedMedianAndOutliersEqualTheWholeImageFromEitherMemory) {
  const Image in = largeImageWithNaN(true, 12);
  const Image before = copyOf(in);
  OutlierParams op;
  op.size = 5;
  op.threshold = 0.5;
  for (bool locked : {false, true}) {
    const PinnedWhileAlive pinned(gpu->device(), locked ? in : Image());
    if (locked) {
      ASSERT_TRUE(pinned.pinned());
    }
    for (int size : {3, 5, 9}) {
      const Image whole = gpu->download(gpu->medianFilter(in, size));
      const Image banded = gpu->medianFilter(in, size, onHost);
      EXPECT_EQ(gpu->device().lastChunkCount(), locked ? 4 : 1) << size;
      expectIdentical(banded, whole, ("median " + std::to_string(size)).c_str());
    }
    const Image whole = gpu->download(gpu->removeOutliers(in, op));
    const Image banded = gpu->removeOutliers(in, op, onHost);
    EXPECT_EQ(gpu->device().lastChunkCount(), locked ? 4 : 1);
    expectIdentical(banded, whole, locked ? "outliers, page-locked input" : "outliers");
  }
  expectIdentical(in, before, "input after the filters");
}

// Bands need the input, the result and the filter's work on the device at once (less than the
// stack pipeline's double buffers); under that the CPU takes over, as before. Stacks (page-locked
// or not) and small images are not banded.
TEST_F(CudaBandPipeline, BudgetsStacksAndSmallImages) {
  const Image in = largeImageWithNaN(true, 13);
  const PinnedWhileAlive pinned(gpu->device(), in);
  ASSERT_TRUE(pinned.pinned());
  const Image whole = gpu->download(gpu->medianFilter(in, 3));
  gpu->device().setMemoryBudget(3 * size_t(in.bytes()) + 100);  // input + result + 4 B/voxel
  expectIdentical(gpu->medianFilter(in, 3, onHost), whole, "median, a budget just for bands");
  EXPECT_EQ(gpu->device().lastChunkCount(), 4);
  gpu->device().setMemoryBudget(2 * size_t(in.bytes()));
  logged.take();
  const Image onCpu = gpu->medianFilter(in, 3, onHost);
  const std::string log = logged.take();
  EXPECT_NE(log.find("running it on the CPU"), std::string::npos) << log;
  expectIdentical(onCpu, makeCpuBackend(1)->medianFilter(in, 3), "median on the CPU");
  gpu->device().setMemoryBudget(0);
  // Two such slices: the stack pipeline's chunks of one slice each.
  Image stack = Image::host({2, in.shape().y, in.shape().x});
  std::copy(in.data(), in.data() + in.shape().count(), stack.data());
  std::copy(in.data(), in.data() + in.shape().count(), stack.data() + in.shape().count());
  const PinnedWhileAlive stackPinned(gpu->device(), stack);
  gpu->medianFilter(stack, 3, onHost);
  EXPECT_EQ(gpu->device().lastChunkCount(), 2);
  const Image small = stacklens::testing::randomImage({1, 300, 400}, 14);
  const PinnedWhileAlive smallPinned(gpu->device(), small);
  gpu->medianFilter(small, 3, onHost);
  EXPECT_EQ(gpu->device().lastChunkCount(), 1);
}

TEST_F(CudaBandPipeline, ProgressAndCancellationAcrossBands) {
  const Image in = largeImageWithNaN(false, 15);
  const PinnedWhileAlive pinned(gpu->device(), in);
  ASSERT_TRUE(pinned.pinned());
  std::vector<double> seen;
  std::atomic<bool> cancel{false};
  Job job(&cancel, [&](double f) { seen.push_back(f); });
  gpu->medianFilter(in, 3, job.onHost());
  EXPECT_EQ(gpu->device().lastChunkCount(), 4);
  // Rising, and each band ends at its share of the rows: bands of 2501 rows end at 625, 1250, 1875
  // and 2501.
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  for (int64_t end : {625, 1250, 1875, 2501}) {
    const double want = double(end) / 2501.0;
    EXPECT_TRUE(std::any_of(seen.begin(), seen.end(),
                            [want](double f) { return std::fabs(f - want) < 1e-12; }))
        << "no report at row " << end;
  }
  EXPECT_EQ(seen.back(), 1.0);
  cancel = true;
  EXPECT_THROW(gpu->medianFilter(in, 3, job.onHost()), Cancelled);
  cancel = false;
  const Image whole = gpu->download(gpu->medianFilter(in, 3));
  expectIdentical(gpu->medianFilter(in, 3, job.onHost()), whole, "median after a cancel");
}

}  // namespace
