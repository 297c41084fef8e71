// The 3D view's volume: binned to a budget by block means (checked against the closed form of
// MemoryStack's values, partial blocks at the far edges included), spacing scaled by the binning
// and said in a note, blank voxels set to the faintest value, and the processed source equal to
// the pipeline applied to each slice.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "compute/backend.h"
#include "compute/volume_binning.h"
#include "tests/ui/memory_stack.h"
#include "ui/volume/volume_source.h"

using namespace stacklens;

namespace {

// MemoryStack with a spacing and a blank voxel.
class SpacedStack : public stacklens::testing::MemoryStack {
 public:
  SpacedStack(int64_t z, int64_t y, int64_t x) : MemoryStack(z, y, x) {
    info_ = MemoryStack::info();
    info_.spacing = {2.0, 0.5, 0.5};
    info_.spacingKnown = true;
  }
  const io::StackInfo& info() const override { return info_; }
  void readSlice(int64_t z, float* out) const override {
    MemoryStack::readSlice(z, out);
    if (z == 0) out[0] = std::numeric_limits<float>::quiet_NaN();
  }

 private:
  io::StackInfo info_;
};

// The mean of 100 z + 10 y + x over [a0, a1) along each axis.
double blockMean(int64_t z0, int64_t z1, int64_t y0, int64_t y1, int64_t x0, int64_t x1) {
  return 100.0 * (z0 + z1 - 1) / 2 + 10.0 * (y0 + y1 - 1) / 2 + double(x0 + x1 - 1) / 2;
}

TEST(VolumeSource, BinsToTheBudgetByBlockMeans) {
  auto stack = std::make_shared<SpacedStack>(5, 7, 9);
  EXPECT_EQ(compute::volumeBinning({5, 7, 9}, 5 * 7 * 9 * 4, 100), 1);
  EXPECT_EQ(compute::volumeBinning({5, 7, 9}, 5 * 7 * 9 * 4 - 1, 100), 2);
  EXPECT_EQ(compute::volumeBinning({5, 7, 9}, 1 << 20, 3), 3);  // the largest side: 9 → 3
  ui::VolumeRequest request;
  request.reader = stack;
  request.budget = 3 * 4 * 5 * 4;  // just the 2× binned volume
  auto cpu = compute::makeCpuBackend(1);
  const ui::LoadedVolume v = ui::loadVolume(request, *cpu, nullptr, {});
  ASSERT_EQ(v.bin, 2);
  ASSERT_EQ(v.volume.shape(), (compute::Shape{3, 4, 5}));
  EXPECT_DOUBLE_EQ(v.volume.spacing.z, 4.0);
  EXPECT_DOUBLE_EQ(v.volume.spacing.x, 1.0);
  EXPECT_NE(v.note.find("binned 2×"), std::string::npos) << v.note;
  for (int64_t k = 0; k < 3; ++k)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t i = 0; i < 5; ++i) {
        if (k == 0 && j == 0 && i == 0) continue;  // holds the blank voxel
        const double want =
            blockMean(2 * k, std::min<int64_t>(5, 2 * k + 2), 2 * j,
                      std::min<int64_t>(7, 2 * j + 2), 2 * i, std::min<int64_t>(9, 2 * i + 2));
        ASSERT_NEAR(v.volume.data()[(k * 4 + j) * 5 + i], want, 1e-4) << k << j << i;
      }
  // The blank voxel is left out of its block's mean: (1 + 10 + 11 + 100 + ... ) over 7.
  EXPECT_NEAR(v.volume.data()[0], (1 + 10 + 11 + 100 + 101 + 110 + 111) / 7.0, 1e-4);
  EXPECT_NEAR(v.low, blockMean(0, 2, 0, 2, 2, 4), 1e-4);
  EXPECT_NEAR(v.high, blockMean(4, 5, 6, 7, 8, 9), 1e-4);
}

TEST(VolumeSource, BlankVoxelsBecomeTheFaintestValue) {
  auto stack = std::make_shared<SpacedStack>(3, 4, 4);
  ui::VolumeRequest request;
  request.reader = stack;
  auto cpu = compute::makeCpuBackend(1);
  const ui::LoadedVolume v = ui::loadVolume(request, *cpu, nullptr, {});
  EXPECT_EQ(v.bin, 1);
  EXPECT_TRUE(v.note.empty());
  EXPECT_EQ(v.volume.data()[0], 1.f);  // the blank, now the smallest finite value
  EXPECT_EQ(v.low, 1.f);
}

TEST(VolumeSource, TheProcessedVolumeIsThePipelineOnEachSlice) {
  auto stack = std::make_shared<stacklens::testing::MemoryStack>(4, 16, 16);
  compute::Pipeline pipeline;
  pipeline.blur.enabled = true;
  pipeline.blur.params.sigmaY = pipeline.blur.params.sigmaX = 1.5;
  ui::VolumeRequest request;
  request.reader = stack;
  request.pipeline = pipeline;
  auto cpu = compute::makeCpuBackend(1);
  const ui::LoadedVolume v = ui::loadVolume(request, *cpu, nullptr, {});
  for (int64_t z = 0; z < 4; ++z) {
    compute::Image slice = compute::Image::host({1, 16, 16});
    stack->readSlice(z, slice.data());
    const compute::Image want = cpu->gaussianBlur(slice, pipeline.blur.params);
    for (int64_t i = 0; i < 256; ++i)
      ASSERT_NEAR(v.volume.slice(z)[i], want.data()[i], 1e-3) << z << "," << i;
  }
}

TEST(VolumeSource, StopsWhenCancelled) {
  auto stack = std::make_shared<stacklens::testing::MemoryStack>(4, 8, 8);
  ui::VolumeRequest request;
  request.reader = stack;
  std::atomic<bool> cancel{true};
  auto cpu = compute::makeCpuBackend(1);
  EXPECT_THROW(ui::loadVolume(request, *cpu, &cancel, {}), compute::Cancelled);
}

}  // namespace
