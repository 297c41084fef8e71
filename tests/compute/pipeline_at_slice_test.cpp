// One slice of the live pipeline from a stack: the slab read is the one around z clamped to the
// stack (checked by which slices are read and by a 3D blur against the slab run directly), the
// raw slice is slice z, Compare gives the primary's result with both backends' differences, a
// benchmark times each backend, and bad requests are refused.
#include "compute/pipeline_at_slice.h"

#include <gtest/gtest.h>

#include <vector>

#include "compute/backend.h"

using namespace stacklens::compute;

namespace {

constexpr Shape kVolume{7, 12, 10};

float voxel(int64_t z, int64_t i) { return float(10 + (z * 131 + i * 7919) % 97); }

SliceRead stackReader(std::vector<int64_t>* read) {
  return [read](int64_t z, float* out) {
    if (read) read->push_back(z);
    for (int64_t i = 0; i < kVolume.sliceCount(); ++i) out[i] = voxel(z, i);
  };
}

Image slabOf(int64_t z0, int64_t z1) {
  Image slab = Image::host({z1 - z0 + 1, kVolume.y, kVolume.x});
  for (int64_t z = z0; z <= z1; ++z)
    for (int64_t i = 0; i < kVolume.sliceCount(); ++i) slab.slice(z - z0)[i] = voxel(z, i);
  return slab;
}

Pipeline blur3d() {
  Pipeline p;
  p.blur.enabled = true;
  p.blur.params.sigmaZ = 1.0;  // a slab of ±int(4·1 + 0.5) = ±4 slices
  return p;
}

}  // namespace

TEST(PipelineAtSlice, ReadsTheClampedSlabAndMatchesTheSlabRunDirectly) {
  auto cpu = makeCpuBackend(2);
  const Pipeline p = blur3d();
  ASSERT_EQ(p.slabHalfWidth(), 4);
  std::vector<int64_t> read;
  SliceRunRequest r{kVolume, {}, 1, cpu.get(), nullptr, 0};
  const SliceRun run = runPipelineAtSlice(p, r, stackReader(&read), {});
  EXPECT_EQ(read, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));  // 1 − 4 clamped to 0, 1 + 4
  const PipelineResult direct = runPipeline(*cpu, slabOf(0, 5), 1, p);
  ASSERT_EQ(run.result.image.shape(), direct.image.shape());
  for (int64_t i = 0; i < kVolume.sliceCount(); ++i)
    ASSERT_EQ(run.result.image.data()[i], direct.image.data()[i]) << i;
  ASSERT_EQ(run.raw.shape(), (Shape{1, kVolume.y, kVolume.x}));
  for (int64_t i = 0; i < kVolume.sliceCount(); ++i) ASSERT_EQ(run.raw.data()[i], voxel(1, i));
  EXPECT_FALSE(run.comparison);
}

TEST(PipelineAtSlice, CompareGivesThePrimarysResultAndEveryStagesDifference) {
  auto a = makeCpuBackend(1), b = makeCpuBackend(2);
  Pipeline p = blur3d();
  p.median.enabled = true;
  SliceRunRequest r{kVolume, {}, 6, a.get(), b.get(), 0};
  const SliceRun run = runPipelineAtSlice(p, r, stackReader(nullptr), {});
  ASSERT_TRUE(run.comparison);
  EXPECT_EQ(run.comparison->differences.size(), 2u);  // median, blur
  for (const auto& d : run.comparison->differences) EXPECT_LE(d.maxAbs, 1e-4);
  for (int64_t i = 0; i < kVolume.sliceCount(); ++i)
    ASSERT_EQ(run.result.image.data()[i], run.comparison->a.image.data()[i]);
}

TEST(PipelineAtSlice, ABenchmarkTimesEachBackendWithItsTransfers) {
  auto a = makeCpuBackend(1), b = makeCpuBackend(1);
  Pipeline p;
  p.median.enabled = true;
  SliceRunRequest r{kVolume, {}, 3, a.get(), b.get(), 2};
  const SliceRun run = runPipelineAtSlice(p, r, stackReader(nullptr), {});
  ASSERT_TRUE(run.comparison);
  ASSERT_EQ(run.result.timings.size(), 1u);
  ASSERT_EQ(run.comparison->b.timings.size(), 1u);
  EXPECT_GT(run.comparison->b.timings[0].computeMs, 0.0);
}

TEST(PipelineAtSlice, RefusesAMissingBackendAndASliceOutsideTheStack) {
  auto cpu = makeCpuBackend(1);
  const Pipeline p = blur3d();
  EXPECT_THROW(runPipelineAtSlice(p, {kVolume, {}, 0, nullptr, nullptr, 0}, stackReader(nullptr)),
               InvalidArgument);
  EXPECT_THROW(runPipelineAtSlice(p, {kVolume, {}, 7, cpu.get(), nullptr, 0}, stackReader(nullptr)),
               InvalidArgument);
  std::atomic<bool> cancel{true};
  EXPECT_THROW(runPipelineAtSlice(p, {kVolume, {}, 2, cpu.get(), nullptr, 0}, stackReader(nullptr),
                                  Job(&cancel)),
               Cancelled);
}
